/**
 * Metric gates between the partitions of a Fleet-style rollout, a flotilla extension
 * (docs/semantics.md#partition-gates): the rolloutStrategy `gates` key, each gate's verdict from
 * the measurements the hub took at the current revision, and which measurements are due. The
 * judging and counting are the staged runs' (docs/engine.md#metric-gates); the pass
 * (rollout-pass.ts) holds the partitions after one whose gates have not passed.
 */
import { z } from "zod";
import { compact } from "../compact.js";
import {
  analyse,
  judge,
  type Measurement,
  type QueryOutcome,
} from "../metrics/analysis.js";
import { fail, joinPath, ok, type Problem, type Result } from "../result.js";
import { DNS_LABEL, parseWith, strictObject } from "../schema.js";
import { judgementOf } from "../staged/gates.js";
import {
  METRIC_GATE_NEEDS_CONDITION,
  metricGateShape,
  metricGateSpecOf,
  type MetricGateSpec,
} from "../update-strategy.js";

/** What a partition gate's query may name in `{{…}}` (docs/semantics.md#partition-gates). */
export const FLEET_GATE_PLACEHOLDERS = [
  "clusters",
  "partition",
  "bundle",
  "revision",
] as const;

/** A metric gate between partitions, as declared in a rolloutStrategy's `gates`. */
export interface FleetGateSpec extends MetricGateSpec {
  /** As declared, or `gate-<index>`; what `bundle approve --gate` names. */
  readonly name: string;
  /** The partitions it is measured after; absent: every partition but the last. */
  readonly afterPartitions?: readonly string[];
}

const fleetGateSchema = strictObject({
  ...metricGateShape(FLEET_GATE_PLACEHOLDERS),
  name: z
    .string()
    .max(63, "must be at most 63 characters")
    .regex(
      DNS_LABEL,
      "must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ (lower-case letters, digits, '-')",
    )
    .optional(),
  afterPartitions: z
    .array(z.string().min(1, "must not be empty"))
    .min(1, "must name at least one partition")
    .optional(),
});

/**
 * Parses a rolloutStrategy's `gates` (a list; problem paths start at `path`). `partitionNames`:
 * the manual partitions' names when they are all the partitions there can be, so that
 * `afterPartitions` naming another is refused; undefined when partitions are formed automatically.
 */
export function parseFleetGates(
  raw: readonly unknown[],
  path: string,
  partitionNames: readonly string[] | undefined,
): Result<readonly FleetGateSpec[]> {
  const problems: Problem[] = [];
  const gates: FleetGateSpec[] = [];
  const seen = new Map<string, number>();
  raw.forEach((item, index) => {
    const at = joinPath(path, index);
    const type =
      item !== null && typeof item === "object"
        ? (item as Record<string, unknown>)["type"]
        : undefined;
    if (type !== "Metric") {
      problems.push({
        path: joinPath(at, "type"),
        message:
          'must be "Metric" (the gates between partitions are metric gates)',
        value: type,
      });
      return;
    }
    const parsed = parseWith(fleetGateSchema, item, at);
    if (!parsed.ok) {
      problems.push(...parsed.problems);
      return;
    }
    const spec = metricGateSpecOf(parsed.value);
    if (spec === undefined) {
      problems.push({
        path: joinPath(at, "successCondition"),
        message: METRIC_GATE_NEEDS_CONDITION,
      });
      return;
    }
    const name = parsed.value.name ?? `gate-${String(index)}`;
    const first = seen.get(name);
    if (first !== undefined)
      problems.push({
        path: joinPath(at, "name"),
        message: `duplicate gate name; first defined at ${joinPath(path, first)}`,
        value: name,
      });
    else seen.set(name, index);
    const after = parsed.value.afterPartitions;
    after?.forEach((partition, i) => {
      if (partitionNames !== undefined && !partitionNames.includes(partition))
        problems.push({
          path: joinPath(joinPath(at, "afterPartitions"), i),
          message: `names no partition (partitions: ${partitionNames.map((n) => JSON.stringify(n)).join(", ")})`,
          value: partition,
        });
    });
    gates.push({ ...spec, name, ...compact({ afterPartitions: after }) });
  });
  return problems.length > 0 ? fail(problems) : ok(gates);
}

/** The gates measured after the partition at `index` of `partitions` (names in rollout order). */
export function gatesAfter(
  gates: readonly FleetGateSpec[],
  partitions: readonly string[],
  index: number,
): readonly FleetGateSpec[] {
  const name = partitions[index];
  if (name === undefined) return [];
  return gates.filter((g) =>
    g.afterPartitions === undefined
      ? index < partitions.length - 1
      : g.afterPartitions.includes(name),
  );
}

/** What the hub keeps of one gate of one partition at the bundle's current revision. */
export interface PartitionGateRecord {
  /** Every measurement taken, oldest first. */
  readonly measurements: readonly Measurement[];
  /** Who approved the gate, which passes it whatever the measurements say. */
  readonly approvedBy?: string;
}

/**
 * Where a partition gate stands: Waiting (its partition is not Ready at the current revision yet),
 * Measuring, or ended; Approved is an operator's override of any of them.
 */
export type PartitionGateVerdict =
  "Waiting" | "Measuring" | "Passed" | "Failed" | "Inconclusive" | "Approved";

/** One gate of a partition after a pass. */
export interface PartitionGateStatus {
  readonly gate: string;
  readonly partition: string;
  readonly verdict: PartitionGateVerdict;
  /** The query with its placeholders filled in for this partition. */
  readonly query: string;
  readonly successCondition?: string;
  readonly failureCondition?: string;
  readonly count: number;
  readonly measurements: readonly Measurement[];
  /** Why it stands where it does, naming the gate and its last measurement. */
  readonly message: string;
  /** When the next measurement is due (while Measuring). */
  readonly nextAtMs?: number;
}

/** True when the gate lets the next partitions start. */
export function isGateOpen(verdict: PartitionGateVerdict): boolean {
  return verdict === "Passed" || verdict === "Approved";
}

/** What fills a partition gate's placeholders. */
export interface GateScope {
  readonly partition: string;
  /** The partition's clusters. */
  readonly clusters: readonly string[];
  readonly bundle: string;
  readonly revision: string;
}

/**
 * `query` with its placeholders filled in: `{{clusters}}` the partition's cluster names as a
 * regular-expression alternation (`a|b|c`, sorted; cluster names are DNS labels, nothing to
 * escape), `{{partition}}`, `{{bundle}}`, `{{revision}}`.
 */
export function fillGateQuery(query: string, scope: GateScope): string {
  const values: Readonly<Record<string, string>> = {
    clusters: [...scope.clusters].sort().join("|"),
    partition: scope.partition,
    bundle: scope.bundle,
    revision: scope.revision,
  };
  return query.replace(
    /\{\{\s*([a-z]+)\s*\}\}/g,
    (whole, name: string) => values[name] ?? whole,
  );
}

/** Judges one query outcome of `gate` (a condition that no longer parses: inconclusive). */
export function judgeGateOutcome(
  gate: FleetGateSpec,
  outcome: QueryOutcome,
  atMs: number,
): Measurement {
  const { judgement, problem } = judgementOf(gate);
  return judge(
    judgement,
    problem === undefined ? outcome : { ok: false, reason: problem },
    atMs,
  );
}

/** A measurement as a status line shows it: values, verdict and why. */
function lastText(measurements: readonly Measurement[]): string {
  const last = measurements.at(-1);
  if (last === undefined) return "";
  const values =
    last.values === undefined
      ? "no value"
      : last.values.length === 0
        ? "no series"
        : last.values.map((v) => String(v)).join(", ");
  return `; last measurement: ${values} → ${last.verdict} (${last.message})`;
}

/**
 * The status of `gate` after the partition `scope`: `ready` when every cluster of it holds the
 * current revision and is available; `notReadyCount` says how many do not.
 */
export function partitionGateStatus(
  gate: FleetGateSpec,
  scope: GateScope,
  ready: boolean,
  notReadyCount: number,
  record: PartitionGateRecord | undefined,
  nowMs: number,
): PartitionGateStatus {
  const measurements = record?.measurements ?? [];
  const { judgement } = judgementOf(gate);
  const state = analyse(judgement, measurements);
  const named = `gate "${gate.name}" after partition "${scope.partition}"`;
  const base = {
    gate: gate.name,
    partition: scope.partition,
    query: fillGateQuery(gate.query, scope),
    ...compact({
      successCondition: gate.successCondition,
      failureCondition: gate.failureCondition,
    }),
    count: gate.count,
    measurements,
  };
  const last = lastText(measurements);
  if (record?.approvedBy !== undefined)
    return {
      ...base,
      verdict: "Approved",
      message: `${named} approved by ${record.approvedBy}${last}`,
    };
  switch (state.verdict) {
    case "Passed":
      return {
        ...base,
        verdict: "Passed",
        message: `${named} passed: ${state.message ?? ""}`,
      };
    case "Failed":
      return {
        ...base,
        verdict: "Failed",
        message: `${named} failed: ${state.message ?? ""}`,
      };
    case "Inconclusive":
      return {
        ...base,
        verdict: "Inconclusive",
        message: `${named} is inconclusive: ${state.message ?? ""}; approve the gate to go on`,
      };
    case "Running": {
      if (!ready)
        return {
          ...base,
          verdict: "Waiting",
          message: `${named} waits for the partition to be Ready at revision ${scope.revision} (${String(notReadyCount)} cluster(s) not yet)${last}`,
        };
      const lastAt = measurements.at(-1)?.atMs;
      const nextAtMs =
        lastAt === undefined
          ? nowMs
          : Math.max(nowMs, lastAt + gate.intervalSeconds * 1000);
      return {
        ...base,
        verdict: "Measuring",
        nextAtMs,
        message: `${named} is measuring: ${String(measurements.length)} of ${String(gate.count)} measurement(s)${last}`,
      };
    }
  }
}
