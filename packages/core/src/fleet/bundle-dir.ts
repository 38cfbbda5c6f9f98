/**
 * What a Fleet bundle directory reads as (docs/bundles.md), the pure half: fleet.yaml's checked
 * fields, the one rule for which renderer a directory takes, and the shape of a directory once
 * read. Reading the files is `readBundleDir` in @flotilla/node; the CLI (`bundle apply`) and the
 * hub (git repositories, docs/gitops.md) both use it, so a directory means the same to both.
 */
import { fail, ok, type Result } from "../result.js";
import { parseBundleSpec } from "./bundle-spec.js";
import { SUPPORTED_BUNDLE_KEYS } from "./fleet-yaml-keys.js";
import { KUSTOMIZATION_FILES } from "./kustomize-options.js";

/** The descriptor file of a bundle directory. */
export const FLEET_YAML = "fleet.yaml";

/** What fleet.yaml says, its Fleet fields still raw for the hub. */
export interface FleetYaml {
  readonly name?: string;
  /** Namespace of namespaced resources that set none (docs/semantics.md#namespaces). */
  readonly defaultNamespace?: string;
  /** Every namespaced resource goes here; cluster-scoped ones are refused. */
  readonly namespace?: string;
  readonly targets?: unknown;
  readonly targetCustomizations?: unknown;
  readonly rolloutStrategy?: unknown;
  readonly paused?: boolean;
  /** `helm`: a Helm bundle (docs/bundles.md#helm-bundles), checked by core's parser. */
  readonly helm?: unknown;
  /** `kustomize`: a Kustomize bundle (docs/bundles.md#kustomize-bundles), checked by core's parser. */
  readonly kustomize?: unknown;
  /** The bundle's labels (docs/semantics.md#dependencies-between-bundles). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Bundles to wait for, by name or selector; checked by core's parser, sent as JSON. */
  readonly dependsOn?: unknown;
  /** Drift correction (docs/semantics.md#drift-correction), checked by core's parser. */
  readonly correctDrift?: unknown;
  /** The namespace's labels and annotations (docs/bundles.md#namespace-labels-and-annotations). */
  readonly namespaceLabels?: unknown;
  readonly namespaceAnnotations?: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks a parsed fleet.yaml (null: an empty file). */
export function parseFleetYaml(raw: unknown): Result<FleetYaml> {
  if (raw === null || raw === undefined) return ok({});
  if (!isRecord(raw))
    return fail([
      {
        path: "",
        message: "must be a mapping of fleet.yaml fields",
        value: raw,
      },
    ]);
  // Core's parser is the hub's: the same field paths, "did you mean" hints, and refusals of
  // the Fleet fields flotilla does not support, before anything is sent.
  const checked = parseBundleSpec(raw);
  if (!checked.ok) return fail([...checked.problems]);
  // YAML writes an empty field (`paused:`) as null: unset, as in Fleet's Go structs.
  const field = (key: string): unknown => raw[key] ?? undefined;
  // Every field was checked above: the types are what FleetYaml says.
  const value: Record<string, unknown> = {};
  for (const key of SUPPORTED_BUNDLE_KEYS)
    if (field(key) !== undefined) value[key] = field(key);
  return ok(value);
}

/** One file of a bundle directory: its path inside the directory (`/`-separated) and its bytes. */
export interface ManifestFile {
  readonly path: string;
  readonly content: Uint8Array;
}

/** A bundle directory, read and checked. */
export interface BundleDir {
  readonly fleet: FleetYaml;
  /** Whether the directory has a fleet.yaml (messages name it only then). */
  readonly hasFleetYaml: boolean;
  readonly manifests: readonly ManifestFile[];
  /** Renderer input files (BundleSpec.files), path order; none for a bundle of manifests. */
  readonly files: readonly ManifestFile[];
}

/** What turns a bundle directory into Kubernetes objects. */
export type BundleRenderer = "manifests" | "helm" | "kustomize";

/**
 * The one rule for what renders a bundle directory, hence whether its files travel as renderer
 * input files: a `Chart.yaml` at the top or a `helm` key in fleet.yaml is a Helm chart; a
 * kustomization file at the top or a `kustomize` key (the bundle's or a target customization's)
 * is Kustomize; anything else is manifests.
 */
export function bundleRenderer(
  topNames: readonly string[],
  fleetDoc: unknown,
): BundleRenderer {
  const has = (key: string): boolean => isRecord(fleetDoc) && key in fleetDoc;
  if (topNames.includes("Chart.yaml") || has("helm")) return "helm";
  if (
    topNames.some((n) => KUSTOMIZATION_FILES.includes(n)) ||
    has("kustomize") ||
    customizationHas(fleetDoc, "kustomize")
  )
    return "kustomize";
  return "manifests";
}

/** Whether some entry of fleet.yaml's `targetCustomizations` has `key`. */
function customizationHas(fleetDoc: unknown, key: string): boolean {
  const list = isRecord(fleetDoc)
    ? fleetDoc["targetCustomizations"]
    : undefined;
  return (
    Array.isArray(list) && list.some((c: unknown) => isRecord(c) && key in c)
  );
}
