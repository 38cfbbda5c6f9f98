/**
 * Fleet's `rolloutStrategy` (docs/semantics.md#partitioned-rollouts): the schema with Fleet's own
 * field names and defaults, plus flotilla's opt-in `unassigned: autoPartition`
 * (docs/semantics.md#unassigned-clusters), and the detection of a fleet.yaml or bare
 * rolloutStrategy document for `flotilla plan` (docs/semantics.md#offline-planning).
 */
import { z } from "zod";
import type { IntOrPercent } from "../int-or-percent.js";
import type { LabelSelector } from "../label-selector.js";
import { fail, joinPath, ok, type Problem, type Result } from "../result.js";
import {
  intOrPercentField,
  parseWith,
  selectorStructField,
  strictObject,
} from "../schema.js";
import { FLEET_YAML_KEYS } from "./fleet-yaml-keys.js";
import { parseFleetGates, type FleetGateSpec } from "./rollout-gates.js";

/**
 * What happens to clusters that match no manual partition (docs/semantics.md#partition-forming
 * Decision).
 */
export type UnassignedPolicy = "report" | "autoPartition";

/** One manual partition as declared; criteria that are set must all match. */
export interface FleetPartitionSpec {
  /**
   * As declared, or `partition-<index>` for an unnamed one (docs/semantics.md#unnamed-partitions).
   */
  readonly name: string;
  /** False when `name` was given by flotilla because the partition has none. */
  readonly named: boolean;
  /** Falls back to the strategy's maxUnavailable, then 100% (not the 10% Fleet's field comment claims). */
  readonly maxUnavailable?: IntOrPercent;
  readonly clusterName?: string;
  readonly clusterSelector?: LabelSelector;
  readonly clusterGroup?: string;
  readonly clusterGroupSelector?: LabelSelector;
}

/** A parsed rolloutStrategy with the defaults of docs/semantics.md#partitioned-rollouts filled in. */
export interface FleetRolloutStrategy {
  readonly maxUnavailable: IntOrPercent;
  readonly maxUnavailablePartitions: IntOrPercent;
  readonly autoPartitionSize: IntOrPercent;
  readonly autoPartitionThreshold: number;
  readonly maxNew: number;
  /** Empty means automatic partitioning, as in Fleet (`len(partitions) == 0`). */
  readonly partitions: readonly FleetPartitionSpec[];
  readonly unassigned: UnassignedPolicy;
  /**
   * Metric gates between partitions, a flotilla extension (docs/semantics.md#partition-gates);
   * empty: none.
   */
  readonly gates: readonly FleetGateSpec[];
}

/**
 * The defaults (docs/semantics.md#partitioned-rollouts): 100%, 0, 25%, 200, 50, no partitions;
 * unmatched clusters are reported.
 */
export const FLEET_STRATEGY_DEFAULTS: FleetRolloutStrategy = {
  maxUnavailable: { kind: "percent", value: 100 },
  maxUnavailablePartitions: { kind: "int", value: 0 },
  autoPartitionSize: { kind: "percent", value: 25 },
  autoPartitionThreshold: 200,
  maxNew: 50,
  partitions: [],
  unassigned: "report",
  gates: [],
};

const fleetLimitField = intOrPercentField("fleetLimit");
const countField = z
  .number()
  .int("must be an integer")
  .min(0, "must not be negative");
// Fleet reads a threshold at or below 0 as "no automatic partitions"
// (docs/semantics.md#negative-values).
const thresholdField = z.number().int("must be an integer");

const partitionSchema = strictObject({
  name: z.string().min(1, "must not be empty").nullish(),
  maxUnavailable: fleetLimitField.nullish(),
  clusterName: z.string().min(1, "must not be empty").nullish(),
  clusterSelector: selectorStructField.nullish(),
  clusterGroup: z.string().min(1, "must not be empty").nullish(),
  clusterGroupSelector: selectorStructField.nullish(),
});

// YAML writes an empty field (`maxNew:`) as null; it means "unset", as in Fleet's Go structs.
const strategySchema = strictObject({
  maxUnavailable: fleetLimitField.nullish(),
  maxUnavailablePartitions: fleetLimitField.nullish(),
  autoPartitionSize: fleetLimitField.nullish(),
  autoPartitionThreshold: thresholdField.nullish(),
  maxNew: countField.nullish(),
  partitions: z.array(partitionSchema).nullish(),
  unassigned: z.enum(["report", "autoPartition"]).nullish(),
  // Each gate is parsed by parseFleetGates, which knows the partitions' names.
  gates: z.array(z.unknown()).nullish(),
});

/** The top-level keys of a rolloutStrategy, used to recognise a bare one. */
export const ROLLOUT_STRATEGY_KEYS: readonly string[] = [
  "maxUnavailable",
  "maxUnavailablePartitions",
  "autoPartitionSize",
  "autoPartitionThreshold",
  "maxNew",
  "partitions",
  "unassigned",
  "gates",
];

/** Parses a rolloutStrategy; `undefined`/`null` gives the defaults. Problem paths start at `path`. */
export function parseRolloutStrategy(
  raw: unknown,
  path: string,
): Result<FleetRolloutStrategy> {
  const parsed = parseWith(strategySchema, raw ?? {}, path);
  if (!parsed.ok) return parsed;
  const s = parsed.value;
  const partitions: FleetPartitionSpec[] = (s.partitions ?? []).map((p, i) => ({
    // Fleet's `name` is optional; the index keeps the shown name stable while the list is.
    name: p.name ?? `partition-${String(i)}`,
    named: p.name != null,
    ...(p.maxUnavailable == null ? {} : { maxUnavailable: p.maxUnavailable }),
    ...(p.clusterName == null ? {} : { clusterName: p.clusterName }),
    ...(p.clusterSelector == null
      ? {}
      : { clusterSelector: p.clusterSelector }),
    ...(p.clusterGroup == null ? {} : { clusterGroup: p.clusterGroup }),
    ...(p.clusterGroupSelector == null
      ? {}
      : { clusterGroupSelector: p.clusterGroupSelector }),
  }));
  const problems = duplicateNames(partitions, joinPath(path, "partitions"));
  // With manual partitions only, every partition a gate may follow is known.
  const known =
    partitions.length > 0 && s.unassigned !== "autoPartition"
      ? partitions.map((p) => p.name)
      : undefined;
  const gates = parseFleetGates(s.gates ?? [], joinPath(path, "gates"), known);
  if (!gates.ok) problems.push(...gates.problems);
  if (problems.length > 0 || !gates.ok) return fail(problems);
  const d = FLEET_STRATEGY_DEFAULTS;
  return ok({
    maxUnavailable: s.maxUnavailable ?? d.maxUnavailable,
    maxUnavailablePartitions:
      s.maxUnavailablePartitions ?? d.maxUnavailablePartitions,
    autoPartitionSize: s.autoPartitionSize ?? d.autoPartitionSize,
    autoPartitionThreshold:
      s.autoPartitionThreshold ?? d.autoPartitionThreshold,
    maxNew: s.maxNew ?? d.maxNew,
    partitions,
    unassigned: s.unassigned ?? d.unassigned,
    gates: gates.value,
  });
}

// Partition names label status and plan output, so two partitions may not share one.
function duplicateNames(
  partitions: readonly FleetPartitionSpec[],
  listPath: string,
): Problem[] {
  const seen = new Map<string, number>();
  const problems: Problem[] = [];
  partitions.forEach((p, index) => {
    const first = seen.get(p.name);
    if (first === undefined) {
      seen.set(p.name, index);
      return;
    }
    const path = joinPath(joinPath(listPath, index), "name");
    const firstEntry = joinPath(listPath, first);
    // An unnamed partition's name is flotilla's, not the user's: say where it came from.
    if (!p.named)
      problems.push({
        path,
        message: `is not set, so the partition is shown as "${p.name}", the name of ${firstEntry}; give one of them another name`,
      });
    else if (partitions[first]?.named === false)
      problems.push({
        path,
        message: `duplicate partition name: ${firstEntry} has no name and is shown as "${p.name}"; give one of them another name`,
        value: p.name,
      });
    else
      problems.push({
        path,
        message: `duplicate partition name; first defined at ${joinPath(firstEntry, "name")}`,
        value: p.name,
      });
  });
  return problems;
}

/** Where a document keeps its rolloutStrategy: the raw object and the path to prefix problems with. */
export interface FleetStrategySource {
  /** The raw rolloutStrategy (undefined: a fleet.yaml without one, i.e. the defaults). */
  readonly raw: unknown;
  /** `"rolloutStrategy"` for a fleet.yaml, `""` for a bare rolloutStrategy. */
  readonly path: string;
}

/**
 * Recognises a Fleet document: a fleet.yaml (its `rolloutStrategy`, other keys ignored) or a bare
 * rolloutStrategy (any of its keys at top level). Anything else, e.g. AKS `{stages}`, is undefined.
 */
export function detectFleetStrategy(
  raw: unknown,
): FleetStrategySource | undefined {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    return undefined;
  const keys = Object.keys(raw);
  if (keys.includes("rolloutStrategy")) {
    return {
      raw: (raw as Record<string, unknown>)["rolloutStrategy"],
      path: "rolloutStrategy",
    };
  }
  if (keys.some((k) => ROLLOUT_STRATEGY_KEYS.includes(k)))
    return { raw, path: "" };
  // A fleet.yaml that relies on the defaults; `stages` means an AKS strategy, whatever else is there.
  if (
    !keys.includes("stages") &&
    keys.some((k) => FLEET_YAML_KEYS.includes(k))
  ) {
    return { raw: undefined, path: "rolloutStrategy" };
  }
  return undefined;
}
