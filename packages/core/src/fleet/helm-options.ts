/**
 * fleet.yaml `helm:` (docs/bundles.md#helm-bundles): where the chart is, the release name, and
 * the values in Fleet's layers, merged in Fleet's order (mergeHelmValues, helmValuesFor). The
 * keys of Fleet's Helm options that mean nothing here (no Helm release is installed: the agent
 * applies the rendered objects itself) are refused one by one with the reason, never ignored.
 */
import { z } from "zod";
import { fail, joinPath, ok, type Problem, type Result } from "../result.js";
import { parseWith } from "../schema.js";

/** A `valuesFrom` entry: one key of a ConfigMap or Secret of the downstream cluster. */
export interface HelmValuesFrom {
  readonly kind: "ConfigMap" | "Secret";
  readonly name: string;
  /** Absent: the release namespace. */
  readonly namespace?: string;
  /** The key holding a YAML document of values; Fleet's default `values.yaml`. */
  readonly key: string;
}

/** Helm values: a YAML mapping. */
export type HelmValues = Readonly<Record<string, unknown>>;

/** The values layers a bundle or a customization gives. */
export interface HelmValueLayers {
  /** `values`, inline. */
  readonly values?: HelmValues;
  /** `valuesFiles`: paths in the bundle directory, merged over `values` in order. */
  readonly valuesFiles: readonly string[];
  /** `valuesFrom`, read by the agent on the cluster, merged over everything in order. */
  readonly valuesFrom: readonly HelmValuesFrom[];
}

/** fleet.yaml `helm`, validated. */
export interface HelmOptions extends HelmValueLayers {
  /**
   * A path of the chart in the bundle directory (`.` for the top), a chart name in `repo`, an
   * `oci://` reference or an `https://` URL of a `.tgz`. Absent: the top of the directory.
   */
  readonly chart?: string;
  readonly repo?: string;
  readonly version?: string;
  /** Absent: the bundle's name (releaseNameOf). */
  readonly releaseName?: string;
  /** `helm template --skip-schema-validation`. */
  readonly skipSchemaValidation: boolean;
  /** The hub does not build `charts/` from Chart.yaml's dependencies. */
  readonly disableDependencyUpdate: boolean;
}

/** Fleet's default `valuesFrom` key. */
export const DEFAULT_VALUES_KEY = "values.yaml";

/** Helm's longest release name. */
export const MAX_RELEASE_NAME_LENGTH = 53;

/** Fleet Helm option keys flotilla refuses, with why. */
export const REFUSED_HELM_KEYS: Readonly<Record<string, string>> = {
  takeOwnership:
    "is not supported: flotilla installs no Helm release; the agent applies the objects with server-side apply and owns them like any bundle's",
  force:
    "is not supported: flotilla installs no Helm release; objects are applied with server-side apply",
  atomic:
    "is not supported: flotilla installs no Helm release; a failed apply is reported as ErrApplied",
  timeoutSeconds:
    "is not supported: readiness is watched by the agent for every bundle, with no Helm timeout",
  maxHistory:
    "is not supported: flotilla installs no Helm release, so there is no release history",
  waitForJobs:
    "is not supported: the agent's readiness checks cover Jobs for every bundle",
  disablePreProcess:
    "is not supported: flotilla does not pre-process templates with Fleet's template functions",
  disableDNS:
    "is not supported: the chart is rendered with helm template, which does no DNS lookups",
  templateValues:
    "is not supported: flotilla does not pre-process templates with Fleet's template functions",
};

const text = z.string().min(1, "must not be empty");

const keyRef = z.strictObject({
  name: text,
  namespace: text.nullish(),
  key: text.nullish(),
});

const valuesFromSchema = z
  .strictObject({
    configMapKeyRef: keyRef.nullish(),
    secretKeyRef: keyRef.nullish(),
  })
  .refine(
    (v) => (v.configMapKeyRef == null) !== (v.secretKeyRef == null),
    "must set exactly one of configMapKeyRef, secretKeyRef",
  );

const valuesSchema = z.record(z.string(), z.unknown());

const layerShape = {
  values: valuesSchema.nullish(),
  valuesFiles: z.array(text).nullish(),
  valuesFrom: z.array(valuesFromSchema).nullish(),
};

const RELEASE_NAME =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const helmShape = {
  ...layerShape,
  chart: text.nullish(),
  repo: text.nullish(),
  version: text.nullish(),
  releaseName: z
    .string()
    .max(
      MAX_RELEASE_NAME_LENGTH,
      `must be at most ${String(MAX_RELEASE_NAME_LENGTH)} characters`,
    )
    .regex(RELEASE_NAME, "must be a Helm release name (a DNS subdomain)")
    .nullish(),
  skipSchemaValidation: z.boolean().nullish(),
  disableDependencyUpdate: z.boolean().nullish(),
};

/** Problems of keys that are not in `known`: Fleet's refused ones with their reason. */
function keyProblems(
  raw: unknown,
  known: readonly string[],
  path: string,
  refusedHere: Readonly<Record<string, string>> = {},
): Problem[] {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return [];
  const problems: Problem[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (known.includes(key)) continue;
    const reason = refusedHere[key] ?? REFUSED_HELM_KEYS[key];
    problems.push({
      path: joinPath(path, key),
      message: reason ?? `unknown field; Helm options are ${known.join(", ")}`,
      ...(reason === undefined ? {} : { value }),
    });
  }
  return problems;
}

function stripKeys(raw: unknown, known: readonly string[]): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  return Object.fromEntries(
    Object.entries(raw).filter(([key]) => known.includes(key)),
  );
}

type RawLayers = z.infer<z.ZodObject<typeof layerShape>>;

function layersOf(raw: RawLayers): HelmValueLayers {
  return {
    ...(raw.values == null ? {} : { values: raw.values }),
    valuesFiles: raw.valuesFiles ?? [],
    valuesFrom: (raw.valuesFrom ?? []).map((v) => {
      const ref = v.configMapKeyRef ?? v.secretKeyRef;
      return {
        kind: v.configMapKeyRef == null ? "Secret" : "ConfigMap",
        name: ref?.name ?? "",
        ...(ref?.namespace == null ? {} : { namespace: ref.namespace }),
        key: ref?.key ?? DEFAULT_VALUES_KEY,
      };
    }),
  };
}

/** Parses fleet.yaml `helm` (null: an empty mapping); paths start at `path` (`helm`). */
export function parseHelmOptions(
  raw: unknown,
  path: string,
): Result<HelmOptions> {
  const known = Object.keys(helmShape);
  const problems = keyProblems(raw, known, path);
  const parsed = parseWith(
    z.object(helmShape),
    stripKeys(raw ?? {}, known),
    path,
  );
  if (!parsed.ok) problems.push(...parsed.problems);
  if (problems.length > 0 || !parsed.ok) return fail(problems);
  const d = parsed.value;
  if (d.repo != null && d.chart == null)
    return fail([
      {
        path: joinPath(path, "chart"),
        message:
          "is required with helm.repo: the chart's name in the repository",
      },
    ]);
  return ok({
    ...layersOf(d),
    ...(d.chart == null ? {} : { chart: d.chart }),
    ...(d.repo == null ? {} : { repo: d.repo }),
    ...(d.version == null ? {} : { version: d.version }),
    ...(d.releaseName == null ? {} : { releaseName: d.releaseName }),
    skipSchemaValidation: d.skipSchemaValidation ?? false,
    disableDependencyUpdate: d.disableDependencyUpdate ?? false,
  });
}

const CUSTOMIZATION_REFUSALS: Readonly<Record<string, string>> = {
  chart:
    "is not supported in a customization: every target of a bundle gets the same chart",
  repo: "is not supported in a customization: every target of a bundle gets the same chart",
  version:
    "is not supported in a customization: every target of a bundle gets the same chart",
  releaseName:
    "is not supported in a customization: the release name is the bundle's",
  skipSchemaValidation:
    "is not supported in a customization: set it in the bundle's helm options",
  disableDependencyUpdate:
    "is not supported in a customization: set it in the bundle's helm options",
};

/** Parses `targetCustomizations[].helm`: only the values layers. */
export function parseHelmCustomization(
  raw: unknown,
  path: string,
): Result<HelmValueLayers> {
  const known = Object.keys(layerShape);
  const problems = keyProblems(raw, known, path, CUSTOMIZATION_REFUSALS);
  const parsed = parseWith(
    z.object(layerShape),
    stripKeys(raw ?? {}, known),
    path,
  );
  if (!parsed.ok) problems.push(...parsed.problems);
  if (problems.length > 0 || !parsed.ok) return fail(problems);
  return ok(layersOf(parsed.value));
}

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `over` merged into `base`, as Fleet merges values layers: mappings merge key by key,
 * recursively; anything else in `over` (a scalar, a list, null) replaces what `base` has.
 */
export function mergeHelmValues(
  base: HelmValues,
  over: HelmValues,
): HelmValues {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] =
      isMapping(current) && isMapping(value)
        ? mergeHelmValues(current, value)
        : value;
  }
  return out;
}

/**
 * The static values of one layer (docs/bundles.md#value-merge-order): `values`, then each of
 * `valuesFiles` in order merged over it (`files` gives a file's parsed values).
 */
export function layerValues(
  layer: HelmValueLayers,
  files: (path: string) => HelmValues,
): HelmValues {
  return layer.valuesFiles.reduce(
    (values, path) => mergeHelmValues(values, files(path)),
    layer.values ?? {},
  );
}

/**
 * A target's values and valuesFrom: the bundle's layer, then its customization's merged over it;
 * valuesFrom lists the bundle's entries, then the customization's that are not already there.
 */
export function helmValuesFor(
  bundle: HelmValueLayers,
  customization: HelmValueLayers | undefined,
  files: (path: string) => HelmValues,
): { readonly values: HelmValues; readonly valuesFrom: HelmValuesFrom[] } {
  const base = layerValues(bundle, files);
  const values =
    customization === undefined
      ? base
      : mergeHelmValues(base, layerValues(customization, files));
  const valuesFrom = [...bundle.valuesFrom];
  const keyOf = (v: HelmValuesFrom): string =>
    `${v.kind}/${v.namespace ?? ""}/${v.name}/${v.key}`;
  for (const v of customization?.valuesFrom ?? [])
    if (!valuesFrom.some((known) => keyOf(known) === keyOf(v)))
      valuesFrom.push(v);
  return { values, valuesFrom };
}

/** The release name: `helm.releaseName`, else the bundle's name cut to Helm's length. */
export function releaseNameOf(
  options: Pick<HelmOptions, "releaseName">,
  bundle: string,
): string {
  return (
    options.releaseName ??
    bundle.slice(0, MAX_RELEASE_NAME_LENGTH).replace(/-+$/, "")
  );
}

/** Whether the chart is in the bundle directory (not a repository, OCI or URL reference). */
export function isLocalChart(
  options: Pick<HelmOptions, "chart" | "repo">,
): boolean {
  if (options.repo !== undefined) return false;
  const chart = options.chart ?? ".";
  return !/^(oci|https?):\/\//.test(chart);
}

/** The chart's directory in the bundle ("" for the top), for a local chart. */
export function localChartDir(options: Pick<HelmOptions, "chart">): string {
  const chart = (options.chart ?? ".")
    .replace(/^\.\/?/, "")
    .replace(/\/+$/, "");
  return chart;
}
