/**
 * Two groups of fleet.yaml deployment options, at the top and per `targetCustomizations` entry:
 * - `correctDrift` (docs/agent.md#drift-correction): whether the agent restores objects changed in
 *   the cluster. A customization's `correctDrift` replaces the bundle's as a whole. It decides how
 *   drift is handled, not what is deployed, so it is not part of the revision: it travels in the
 *   cluster's intent (docs/semantics.md#drift-correction).
 * - `namespaceLabels` / `namespaceAnnotations` (docs/bundles.md#namespace-labels-and-annotations):
 *   labels and annotations of the namespace the bundle deploys into. A customization's entries
 *   are merged key by key over the bundle's. They are content: they change the revision.
 */
import { z } from "zod";
import { boundsProblems } from "../input-bounds.js";
import {
  labelKeyProblem,
  MAX_LABELS,
  parseLabels,
  type Labels,
} from "../label-selector.js";
import { fail, joinPath, ok, type Problem, type Result } from "../result.js";
import { parseWith, strictObject } from "../schema.js";

/** fleet.yaml `correctDrift`. */
export interface DriftCorrection {
  readonly enabled: boolean;
  /**
   * Take fields other server-side appliers own, and delete and re-create an object whose
   * re-apply fails on an immutable field.
   */
  readonly force: boolean;
  /** Accepted for Fleet compatibility; flotilla keeps no Helm release history, so it does nothing. */
  readonly keepFailHistory: boolean;
}

/** The labels and annotations a bundle sets on the namespace it deploys into. */
export interface NamespaceMetadata {
  readonly labels: Labels;
  readonly annotations: Readonly<Record<string, string>>;
}

/** Largest annotation value accepted (characters); Kubernetes limits all annotations to 256 KiB. */
export const MAX_NAMESPACE_ANNOTATION_CHARS = 4096;

const correctDriftSchema = strictObject({
  enabled: z.boolean().nullish(),
  force: z.boolean().nullish(),
  keepFailHistory: z.boolean().nullish(),
});

/** Parses fleet.yaml `correctDrift` (a mapping of booleans); null or absent is undefined. */
export function parseCorrectDrift(
  raw: unknown,
  path: string,
): Result<DriftCorrection | undefined> {
  if (raw === undefined || raw === null) return ok(undefined);
  if (typeof raw !== "object" || Array.isArray(raw))
    return fail([
      {
        path,
        message:
          "must be a mapping {enabled, force, keepFailHistory} of booleans",
        value: raw,
      },
    ]);
  const parsed = parseWith(correctDriftSchema, raw, path);
  if (!parsed.ok) return parsed;
  return ok({
    enabled: parsed.value.enabled ?? false,
    force: parsed.value.force ?? false,
    keepFailHistory: parsed.value.keepFailHistory ?? false,
  });
}

/** Parses fleet.yaml `namespaceAnnotations`: qualified-name keys, string values, bounded. */
export function parseAnnotations(
  raw: unknown,
  path: string,
): Result<Readonly<Record<string, string>>> {
  if (raw === undefined || raw === null) return ok({});
  if (typeof raw !== "object" || Array.isArray(raw))
    return fail([
      { path, message: "must be a map of keys to string values", value: raw },
    ]);
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > MAX_LABELS)
    return fail([
      {
        path,
        message: `must have at most ${String(MAX_LABELS)} annotations`,
        value: `${String(entries.length)} annotations`,
      },
    ]);
  const refused = boundsProblems(raw, path);
  if (refused.length > 0) return fail(refused);
  const problems: Problem[] = [];
  const out: Record<string, string> = {};
  for (const [key, value] of entries) {
    const at = joinPath(path, key);
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined)
      problems.push({
        path: at,
        message: keyProblem.replace("label key", "annotation key"),
      });
    if (typeof value !== "string")
      problems.push({
        path: at,
        message: "annotation value must be a string",
        value,
      });
    else if (value.length > MAX_NAMESPACE_ANNOTATION_CHARS)
      problems.push({
        path: at,
        message: `annotation value must be at most ${String(MAX_NAMESPACE_ANNOTATION_CHARS)} characters`,
        value: `${String(value.length)} characters`,
      });
    else out[key] = value;
  }
  return problems.length > 0 ? fail(problems) : ok(out);
}

/** A zod field running a core parser, its problems reported at their own paths. */
function parsedField<T>(parse: (raw: unknown, path: string) => Result<T>) {
  return z.unknown().transform((raw, ctx): T => {
    const parsed = parse(raw, "");
    if (parsed.ok) return parsed.value;
    for (const p of parsed.problems)
      ctx.addIssue({
        code: "custom",
        message: p.message,
        path: p.path === "" ? [] : [p.path.replace(/^\./, "")],
        ...(p.value === undefined ? {} : { input: p.value }),
      });
    return z.NEVER;
  });
}

/** The deployment-option fields of a fleet.yaml document and of a customization. */
export const deployOptionsShape = {
  correctDrift: parsedField(parseCorrectDrift).optional(),
  namespaceLabels: parsedField(parseLabels).optional(),
  namespaceAnnotations: parsedField(parseAnnotations).optional(),
};

/** Deployment options as parsed, unset ones absent. */
export interface DeployOptions {
  readonly correctDrift?: DriftCorrection;
  readonly namespaceLabels?: Labels;
  readonly namespaceAnnotations?: Readonly<Record<string, string>>;
}

/** The options of a parsed document or customization, with null and empty maps left out. */
export function deployOptionsOf(raw: {
  readonly correctDrift?: DriftCorrection | undefined;
  readonly namespaceLabels?: Labels | undefined;
  readonly namespaceAnnotations?: Readonly<Record<string, string>> | undefined;
}): DeployOptions {
  const nonEmpty = <T extends object>(m: T | undefined): T | undefined =>
    m === undefined || Object.keys(m).length === 0 ? undefined : m;
  const out: {
    correctDrift?: DriftCorrection;
    namespaceLabels?: Labels;
    namespaceAnnotations?: Readonly<Record<string, string>>;
  } = {};
  if (raw.correctDrift !== undefined) out.correctDrift = raw.correctDrift;
  const labels = nonEmpty(raw.namespaceLabels);
  if (labels !== undefined) out.namespaceLabels = labels;
  const annotations = nonEmpty(raw.namespaceAnnotations);
  if (annotations !== undefined) out.namespaceAnnotations = annotations;
  return out;
}

/**
 * The drift correction of a target: its customization's `correctDrift` when that sets one
 * (replacing the bundle's as a whole), else the bundle's; undefined when neither enables it.
 */
export function driftCorrectionFor(
  bundle: DeployOptions,
  customization: DeployOptions | undefined,
): DriftCorrection | undefined {
  const chosen = customization?.correctDrift ?? bundle.correctDrift;
  return chosen?.enabled === true ? chosen : undefined;
}

/** A target's namespace labels and annotations: the customization's merged over the bundle's. */
export function namespaceMetadataFor(
  bundle: DeployOptions,
  customization: DeployOptions | undefined,
): NamespaceMetadata {
  return {
    labels: {
      ...bundle.namespaceLabels,
      ...customization?.namespaceLabels,
    },
    annotations: {
      ...bundle.namespaceAnnotations,
      ...customization?.namespaceAnnotations,
    },
  };
}
