/**
 * A bundle as Fleet's `fleet.yaml` describes it (docs/semantics.md#objects,
 * docs/semantics.md#partitioned-rollouts, docs/semantics.md#namespaces): `defaultNamespace` and
 * `namespace` (Fleet's meanings, namespace-rules.ts), `targets` (which clusters),
 * `targetCustomizations` (per-cluster options: the namespaces and
 * flotilla's own `patches`, merge patches of the manifests, customize.ts), the `rolloutStrategy`
 * and `paused`, and the deployment options of deploy-options.ts (`correctDrift`,
 * `namespaceLabels`, `namespaceAnnotations`, at the top and per customization). Fleet's own field names and shapes are accepted as they are; fields flotilla does
 * not implement are refused by name rather than silently ignored, so a fleet.yaml never means
 * something other than what its author expects. Which clusters a spec targets: bundle-targets.ts.
 */
import { z } from "zod";
import {
  parseLabels,
  parseSelectorString,
  parseSelectorStruct,
  type LabelSelector,
  type Labels,
} from "../label-selector.js";
import type { PlanWarning } from "../preview-types.js";
import { compact } from "../compact.js";
import { fail, joinPath, ok, type Problem, type Result } from "../result.js";
import { DNS_LABEL, parseWith, unknownFieldMessage } from "../schema.js";
import { parseRolloutStrategy, type FleetRolloutStrategy } from "./strategy.js";
import { patchProblem, type ManifestPatch } from "./customize.js";
import {
  HELM_KEYS,
  UNSUPPORTED_FLEET_KEYS,
  isUnsupportedFleetKey,
} from "./fleet-yaml-keys.js";
import { parseDependsOn, type BundleDependency } from "./depends-on.js";
import {
  parseHelmCustomization,
  parseHelmOptions,
  type HelmOptions,
  type HelmValueLayers,
} from "./helm-options.js";
import {
  parseKustomizeOptions,
  type KustomizeOptions,
} from "./kustomize-options.js";
import {
  deployOptionsOf,
  deployOptionsShape,
  type DeployOptions,
} from "./deploy-options.js";

/**
 * One entry of `targets` (or the matcher part of a customization). Every criterion that is set must
 * match; an entry that sets none matches no cluster (as Fleet's cluster matcher).
 */
export interface BundleTargetMatcher {
  readonly name?: string;
  /** The cluster's name, or its `management.cattle.io/cluster-display-name` label (Fleet). */
  readonly clusterName?: string;
  readonly clusterSelector?: LabelSelector;
  /** Holds when any group the cluster belongs to has this name (and matches clusterGroupSelector). */
  readonly clusterGroup?: string;
  /** Matched against the labels of the groups the cluster belongs to. */
  readonly clusterGroupSelector?: LabelSelector;
  /** A cluster whose first matching entry sets this is not deployed. */
  readonly doNotDeploy: boolean;
}

/** One entry of `targetCustomizations`: a matcher and what it changes for the clusters it matches. */
export interface BundleTargetCustomization
  extends BundleTargetMatcher, DeployOptions {
  /** Default namespace for these clusters, instead of the bundle's. */
  readonly defaultNamespace?: string;
  /** fleet.yaml `namespace` for these clusters, instead of the bundle's (namespace-rules.ts). */
  readonly targetNamespace?: string;
  /** Merge patches of the bundle's objects for these clusters (customize.ts); unset for none. */
  readonly patches?: readonly ManifestPatch[];
  /** Helm values for these clusters, merged over the bundle's (helm-options.ts). */
  readonly helm?: HelmValueLayers;
  /** The kustomization these clusters get, instead of the bundle's (kustomize-options.ts). */
  readonly kustomize?: KustomizeOptions;
}

/** A parsed fleet.yaml-shaped bundle document. */
export interface FleetBundleSpec extends DeployOptions {
  /** fleet.yaml `name`, when the document carries one. */
  readonly name?: string;
  /** fleet.yaml `defaultNamespace`: namespace of namespaced resources that set none; "" for none. */
  readonly defaultNamespace: string;
  /**
   * fleet.yaml `namespace` (Fleet's TargetNamespace): every namespaced resource goes there and
   * cluster-scoped ones are refused (namespace-rules.ts); "" for none.
   */
  readonly targetNamespace: string;
  readonly targets: readonly BundleTargetMatcher[];
  readonly targetCustomizations: readonly BundleTargetCustomization[];
  readonly rolloutStrategy: FleetRolloutStrategy;
  readonly paused: boolean;
  /** fleet.yaml `helm`: the bundle is a Helm chart (docs/bundles.md#helm-bundles). */
  readonly helm?: HelmOptions;
  /** fleet.yaml `kustomize`: the kustomization to render (docs/bundles.md#kustomize-bundles). */
  readonly kustomize?: KustomizeOptions;
  /** fleet.yaml `labels`: the bundle's own labels, which `dependsOn` selectors match; unset for none. */
  readonly labels?: Labels;
  /**
   * fleet.yaml `dependsOn`: bundles that must be Ready on a cluster before a new revision is
   * released there (depends-on.ts); unset for none.
   */
  readonly dependsOn?: readonly BundleDependency[];
}

const HELM_MESSAGE = "is a Helm option: put it under helm:";

function unsupportedKeyMessage(key: string, known: readonly string[]): string {
  if (HELM_KEYS.includes(key)) return HELM_MESSAGE;
  if (key === "targetNamespace" && known.includes("namespace")) {
    return `is ${UNSUPPORTED_FLEET_KEYS["targetNamespace"] ?? ""}`;
  }
  if (isUnsupportedFleetKey(key)) {
    return `fleet.yaml field "${key}" is not supported by flotilla: ${UNSUPPORTED_FLEET_KEYS[key] ?? ""}`;
  }
  return unknownFieldMessage(key, known);
}

/** An object that refuses unknown keys, naming Helm and unsupported Fleet fields as such. */
function fleetObject<Shape extends z.ZodRawShape>(shape: Shape) {
  const known = Object.keys(shape);
  return z
    .object(shape)
    .loose()
    .superRefine(
      (value, ctx) => {
        if (typeof value !== "object" || value === null || Array.isArray(value))
          return;
        for (const [key, input] of Object.entries(value)) {
          if (known.includes(key)) continue;
          const message = unsupportedKeyMessage(key, known);
          ctx.addIssue(
            message.startsWith("unknown field")
              ? { code: "custom", path: [key], message }
              : { code: "custom", path: [key], message, input },
          );
        }
      },
      { when: () => true },
    )
    .transform((value) => {
      const out: Record<string, unknown> = {};
      for (const key of known)
        if (key in value) out[key] = (value as Record<string, unknown>)[key];
      return out as z.infer<z.ZodObject<Shape>>;
    });
}

// "matchExpressions[0].key" -> ["matchExpressions", 0, "key"], so zod prints it the same way.
function pathParts(path: string): (string | number)[] {
  return path
    .split(/[.[\]]+/)
    .filter((p) => p !== "")
    .map((p) => (/^[0-9]+$/.test(p) ? Number(p) : p));
}

/** A selector in either form: the struct (`{matchLabels, matchExpressions}`) or a string. */
const selectorField = z.unknown().transform((raw, ctx): LabelSelector => {
  const parsed =
    typeof raw === "string"
      ? parseSelectorString(raw, "")
      : parseSelectorStruct(raw, "");
  if (parsed.ok) return parsed.value;
  for (const problem of parsed.problems) {
    ctx.addIssue({
      code: "custom",
      message: problem.message,
      path: pathParts(problem.path),
      input: problem.value,
    });
  }
  return z.NEVER;
});

const text = z.string().min(1, "must not be empty");
const namespaceField = z
  .string()
  .max(63, "must be at most 63 characters")
  .regex(
    DNS_LABEL,
    "must be a Kubernetes namespace name: lower-case letters, digits and '-', starting and ending alphanumeric",
  );

const matcherShape = {
  name: text.nullish(),
  clusterName: text.nullish(),
  clusterSelector: selectorField.nullish(),
  clusterGroup: text.nullish(),
  clusterGroupSelector: selectorField.nullish(),
  doNotDeploy: z.boolean().nullish(),
};

const targetSchema = fleetObject(matcherShape);

/** A merge patch: a JSON object that leaves the identity of what it patches alone. */
const mergePatchField = z
  .unknown()
  .transform((raw, ctx): Readonly<Record<string, unknown>> => {
    const bad = patchProblem(raw);
    if (bad === undefined) return raw as Readonly<Record<string, unknown>>;
    ctx.addIssue({
      code: "custom",
      message: bad.message,
      path: pathParts(bad.path),
      input: bad.value,
    });
    return z.NEVER;
  });

const patchSchema = fleetObject({
  target: fleetObject({
    apiVersion: text.nullish(),
    kind: text,
    name: text,
    namespace: namespaceField.nullish(),
  }),
  patch: mergePatchField,
});

const customizationSchema = fleetObject({
  ...matcherShape,
  defaultNamespace: namespaceField.nullish(),
  namespace: namespaceField.nullish(),
  patches: z.array(patchSchema).nullish(),
  // Parsed by parseHelmCustomization.
  helm: z.unknown().optional(),
  // Parsed by parseKustomizeOptions.
  kustomize: z.unknown().optional(),
  ...deployOptionsShape,
});

// YAML writes an empty field as null: it means "unset", as in Fleet's Go structs.
const documentSchema = fleetObject({
  name: z
    .string()
    .max(63, "must be at most 63 characters")
    .regex(DNS_LABEL, "must be a DNS label")
    .nullish(),
  defaultNamespace: z.union([z.literal(""), namespaceField]).nullish(),
  namespace: z.union([z.literal(""), namespaceField]).nullish(),
  targets: z.array(targetSchema).nullish(),
  targetCustomizations: z.array(customizationSchema).nullish(),
  // Parsed by parseRolloutStrategy, so its problems read exactly as `flotilla plan`'s.
  rolloutStrategy: z.unknown().optional(),
  paused: z.boolean().nullish(),
  // Parsed by parseHelmOptions.
  helm: z.unknown().optional(),
  // Parsed by parseKustomizeOptions.
  kustomize: z.unknown().optional(),
  // Parsed by parseLabels and parseDependsOn.
  labels: z.unknown().optional(),
  dependsOn: z.unknown().optional(),
  ...deployOptionsShape,
});

type RawMatcher = z.infer<typeof targetSchema>;

function matcherOf(raw: RawMatcher): BundleTargetMatcher {
  return {
    ...(raw.name == null ? {} : { name: raw.name }),
    ...(raw.clusterName == null ? {} : { clusterName: raw.clusterName }),
    ...(raw.clusterSelector == null
      ? {}
      : { clusterSelector: raw.clusterSelector }),
    ...(raw.clusterGroup == null ? {} : { clusterGroup: raw.clusterGroup }),
    ...(raw.clusterGroupSelector == null
      ? {}
      : { clusterGroupSelector: raw.clusterGroupSelector }),
    doNotDeploy: raw.doNotDeploy ?? false,
  };
}

/**
 * Parses a fleet.yaml-shaped bundle document (already read from YAML or JSON). Every problem is
 * returned at once, paths starting at `path` (`bundle.targets[0].clusterSelector`). `helm` (the
 * bundle's and each customization's) is parsed by helm-options.ts.
 */
export function parseBundleSpec(
  raw: unknown,
  path = "",
): Result<FleetBundleSpec> {
  const problems: Problem[] = [];
  const parsed = parseWith(documentSchema, raw ?? {}, path);
  if (!parsed.ok) problems.push(...parsed.problems);
  const rawStrategy =
    raw !== null && typeof raw === "object" && !Array.isArray(raw)
      ? (raw as Record<string, unknown>)["rolloutStrategy"]
      : undefined;
  const strategy = parseRolloutStrategy(
    rawStrategy,
    joinPath(path, "rolloutStrategy"),
  );
  if (!strategy.ok) problems.push(...strategy.problems);
  const helm = parseHelmParts(parsed.ok ? parsed.value : undefined, path);
  problems.push(...helm.problems);
  const kustomize = parseKustomizeParts(
    parsed.ok ? parsed.value : undefined,
    path,
  );
  problems.push(...kustomize.problems);
  const labels = parseLabels(
    parsed.ok ? parsed.value.labels : undefined,
    joinPath(path, "labels"),
  );
  if (!labels.ok) problems.push(...labels.problems);
  const dependsOn = parseDependsOn(
    parsed.ok ? parsed.value.dependsOn : undefined,
    joinPath(path, "dependsOn"),
  );
  if (!dependsOn.ok) problems.push(...dependsOn.problems);
  if (
    !parsed.ok ||
    !strategy.ok ||
    helm.problems.length > 0 ||
    kustomize.problems.length > 0 ||
    !labels.ok ||
    !dependsOn.ok
  )
    return fail(problems);
  const d = parsed.value;
  return ok({
    ...(d.name == null ? {} : { name: d.name }),
    defaultNamespace: d.defaultNamespace ?? "",
    targetNamespace: d.namespace ?? "",
    targets: (d.targets ?? []).map(matcherOf),
    targetCustomizations: (d.targetCustomizations ?? []).map((c, i) => ({
      ...matcherOf(c),
      ...compact({
        defaultNamespace: c.defaultNamespace ?? undefined,
        targetNamespace: c.namespace ?? undefined,
      }),
      ...(c.patches == null || c.patches.length === 0
        ? {}
        : { patches: c.patches.map(patchOf) }),
      ...compact({
        helm: helm.customizations.get(i),
        kustomize: kustomize.customizations.get(i),
      }),
      ...deployOptionsOf(c),
    })),
    rolloutStrategy: strategy.value,
    paused: d.paused ?? false,
    ...compact({
      helm: helm.bundle,
      kustomize: kustomize.bundle,
      labels: Object.keys(labels.value).length === 0 ? undefined : labels.value,
      dependsOn: dependsOn.value.length === 0 ? undefined : dependsOn.value,
    }),
    ...deployOptionsOf(d),
  });
}

/** A renderer's options parsed from the bundle (`B`) and its customizations (`C`, by index). */
interface ParsedParts<B, C> {
  readonly problems: Problem[];
  readonly bundle?: B;
  readonly customizations: Map<number, C>;
}

/** `PATH.targetCustomizations[i].KEY`. */
function customizationField(path: string, i: number, key: string): string {
  return joinPath(joinPath(joinPath(path, "targetCustomizations"), i), key);
}

/**
 * The bundle's and each customization's `kustomize`, parsed; problems at their fleet.yaml paths.
 * Kustomize does not post-render a Helm chart here: a bundle is one or the other.
 */
function parseKustomizeParts(
  d: z.infer<typeof documentSchema> | undefined,
  path: string,
): ParsedParts<KustomizeOptions, KustomizeOptions> {
  const problems: Problem[] = [];
  const customizations = new Map<number, KustomizeOptions>();
  const parse = (raw: unknown, at: string): KustomizeOptions | undefined => {
    if (d?.helm !== undefined) {
      problems.push({
        path: at,
        message:
          "cannot be combined with helm: flotilla renders a bundle with Helm or with Kustomize, not one over the other",
      });
      return undefined;
    }
    const parsed = parseKustomizeOptions(raw, at);
    if (parsed.ok) return parsed.value;
    problems.push(...parsed.problems);
    return undefined;
  };
  const bundle =
    d?.kustomize === undefined
      ? undefined
      : parse(d.kustomize, joinPath(path, "kustomize"));
  (d?.targetCustomizations ?? []).forEach((c, i) => {
    if (c.kustomize === undefined) return;
    const parsed = parse(c.kustomize, customizationField(path, i, "kustomize"));
    if (parsed !== undefined) customizations.set(i, parsed);
  });
  return compact({ problems, bundle, customizations });
}

/** The bundle's and each customization's `helm`, parsed; problems at their fleet.yaml paths. */
function parseHelmParts(
  d: z.infer<typeof documentSchema> | undefined,
  path: string,
): ParsedParts<HelmOptions, HelmValueLayers> {
  const problems: Problem[] = [];
  const customizations = new Map<number, HelmValueLayers>();
  let bundle: HelmOptions | undefined;
  if (d?.helm !== undefined) {
    const parsed = parseHelmOptions(d.helm, joinPath(path, "helm"));
    if (parsed.ok) bundle = parsed.value;
    else problems.push(...parsed.problems);
  }
  (d?.targetCustomizations ?? []).forEach((c, i) => {
    if (c.helm === undefined) return;
    const at = customizationField(path, i, "helm");
    if (d?.helm === undefined) {
      problems.push({
        path: at,
        message: "needs a Helm bundle: the bundle has no helm options",
      });
      return;
    }
    const parsed = parseHelmCustomization(c.helm, at);
    if (parsed.ok) customizations.set(i, parsed.value);
    else problems.push(...parsed.problems);
  });
  return compact({ problems, bundle, customizations });
}

function patchOf(raw: z.infer<typeof patchSchema>): ManifestPatch {
  const t = raw.target;
  return {
    target: {
      ...(t.apiVersion == null ? {} : { apiVersion: t.apiVersion }),
      kind: t.kind,
      name: t.name,
      ...(t.namespace == null ? {} : { namespace: t.namespace }),
    },
    patch: raw.patch,
  };
}

/** True when `m` sets at least one criterion (an entry without any matches no cluster). */
export function hasCriteria(m: BundleTargetMatcher): boolean {
  return (
    m.clusterName !== undefined ||
    m.clusterSelector !== undefined ||
    m.clusterGroup !== undefined ||
    m.clusterGroupSelector !== undefined
  );
}

/** Warnings about a spec that deploys less than it seems to: no targets, entries matching nothing. */
export function bundleSpecWarnings(spec: FleetBundleSpec): PlanWarning[] {
  const warnings: PlanWarning[] = [];
  if (spec.targets.length === 0) {
    warnings.push({
      code: "NoTargets",
      message:
        "the bundle has no targets, so it is deployed to no cluster; add targets (clusterSelector: {} selects every cluster)",
    });
  }
  const criteria =
    "sets none of clusterName, clusterSelector, clusterGroup, clusterGroupSelector, so it matches no cluster";
  spec.targets.forEach((t, i) => {
    if (!hasCriteria(t)) {
      warnings.push({
        code: "TargetMatchesNothing",
        message: `targets[${String(i)}]${label(t)} ${criteria}`,
      });
    }
  });
  spec.targetCustomizations.forEach((c, i) => {
    if (!hasCriteria(c)) {
      warnings.push({
        code: "CustomizationMatchesNothing",
        message: `targetCustomizations[${String(i)}]${label(c)} ${criteria}`,
      });
    }
  });
  return warnings;
}

function label(m: BundleTargetMatcher): string {
  return m.name === undefined ? "" : ` ("${m.name}")`;
}
