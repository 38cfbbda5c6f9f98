/**
 * The fleet.yaml of a bundle directory, as far as the CLI checks it: the keys flotilla supports,
 * with their basic types. Deep validation (targets, targetCustomizations, rolloutStrategy) is the
 * hub's, with core's parsers; those fields travel as the user's own JSON.
 */
import { joinPath, type Problem } from "@flotilla/core";
import { closestName } from "../suggest.js";

/** The fleet.yaml keys flotilla reads. */
export const FLEET_YAML_FIELDS = [
  "name",
  "namespace",
  "targets",
  "targetCustomizations",
  "rolloutStrategy",
  "paused",
] as const;

// Fleet's other bundle fields: recognised, so the message says "not supported" rather than "unknown".
const FLEET_ONLY_FIELDS: readonly string[] = [
  "defaultNamespace",
  "targetNamespace",
  "labels",
  "kustomize",
  "yaml",
  "dependsOn",
  "diff",
  "keepResources",
  "deleteCRDResources",
  "deleteNamespace",
  "ignore",
  "overrideTargets",
  "imageScans",
  "correctDrift",
  "namespaceLabels",
  "namespaceAnnotations",
  "serviceAccount",
  "forceSyncGeneration",
  "ociChartSpec",
];

/** What fleet.yaml says, its Fleet fields still raw for the hub. */
export interface FleetYaml {
  readonly name?: string;
  readonly namespace?: string;
  readonly targets?: unknown;
  readonly targetCustomizations?: unknown;
  readonly rolloutStrategy?: unknown;
  readonly paused?: boolean;
}

/** The message for a key flotilla does not read. */
function unknownKeyMessage(key: string): string {
  if (key === "defaultNamespace")
    return 'not supported; flotilla reads the default namespace from "namespace"';
  if (FLEET_ONLY_FIELDS.includes(key))
    return `is a Fleet field flotilla does not support (supported: ${FLEET_YAML_FIELDS.join(", ")})`;
  const guess = closestName(key, FLEET_YAML_FIELDS);
  return guess === undefined
    ? `unknown field (known fields: ${FLEET_YAML_FIELDS.join(", ")})`
    : `unknown field; did you mean "${guess}"?`;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Checks a parsed fleet.yaml (null: an empty file). `helm` is not checked here: the caller refuses
 * Helm bundles with their own message first.
 */
export function parseFleetYaml(
  raw: unknown,
): { ok: true; value: FleetYaml } | { ok: false; problems: Problem[] } {
  if (raw === null || raw === undefined) return { ok: true, value: {} };
  if (!isRecord(raw))
    return {
      ok: false,
      problems: [
        {
          path: "",
          message: "must be a mapping of fleet.yaml fields",
          value: raw,
        },
      ],
    };
  const problems: Problem[] = [];
  const known: readonly string[] = FLEET_YAML_FIELDS;
  for (const key of Object.keys(raw))
    if (!known.includes(key))
      problems.push({ path: key, message: unknownKeyMessage(key) });
  // YAML writes an empty field (`paused:`) as null: unset, as in Fleet's Go structs.
  const field = (key: string): unknown => raw[key] ?? undefined;
  const expect = (
    key: string,
    ok: (v: unknown) => boolean,
    what: string,
  ): void => {
    const value = field(key);
    if (value !== undefined && !ok(value))
      problems.push({
        path: joinPath("", key),
        message: `must be ${what}`,
        value,
      });
  };
  expect(
    "name",
    (v) => typeof v === "string" && v !== "",
    "a non-empty string",
  );
  expect("namespace", (v) => typeof v === "string", "a string");
  expect("paused", (v) => typeof v === "boolean", "true or false");
  expect("targets", Array.isArray, "a list of targets");
  expect(
    "targetCustomizations",
    Array.isArray,
    "a list of target customizations",
  );
  expect("rolloutStrategy", isRecord, "a mapping (Fleet's rolloutStrategy)");
  if (problems.length > 0) return { ok: false, problems };
  // Every field was checked above: the types are what FleetYaml says.
  const value: Record<string, unknown> = {};
  for (const key of FLEET_YAML_FIELDS)
    if (field(key) !== undefined) value[key] = field(key);
  return { ok: true, value };
}
