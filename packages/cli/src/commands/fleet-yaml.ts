/**
 * The fleet.yaml of a bundle directory, checked with core's bundle-spec parser (the one the hub
 * uses) so that mistakes are reported with fleet.yaml's own field paths before anything is sent.
 * The fields still travel as the user's own JSON: the hub parses them again.
 */
import {
  fail,
  ok,
  parseBundleSpec,
  SUPPORTED_BUNDLE_KEYS,
  type Result,
} from "@flotilla/core";

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
  // Helm and of the Fleet fields flotilla does not support, before anything is sent.
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
