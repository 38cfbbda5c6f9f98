/**
 * Gates of a run (docs/semantics.md#gates-and-waits): approvals that wait for an operator and
 * scheduled starts that open at the next weekly occurrence of `startDay startTime utcOffset`.
 */
import {
  DAY_MS,
  DAYS_OF_WEEK,
  MINUTE_MS,
  weekdayOf,
  type DayOfWeek,
} from "../maintenance/calendar.js";
import { compact } from "../compact.js";
import {
  analyse,
  judge,
  type MetricJudgement,
  type QueryOutcome,
} from "../metrics/analysis.js";
import { parseCondition } from "../metrics/condition.js";
import { isoTime, setGateState, type StepContext } from "./context.js";
import type { Gate, MetricGate, Run } from "./run.js";

/**
 * The first instant at or after `fromMs` that is `day` at `minutes` past local midnight in the
 * given offset. "At or after": a gate reached exactly at its start time opens at once; one reached
 * after it this week waits for next week (docs/semantics.md#gates-and-waits).
 */
export function nextWeeklyOccurrence(
  fromMs: number,
  day: DayOfWeek,
  minutes: number,
  utcOffsetMinutes: number,
): number {
  const offsetMs = utcOffsetMinutes * MINUTE_MS;
  const local = fromMs + offsetMs;
  const localDay = Math.floor(local / DAY_MS);
  const weekday = weekdayOf(localDay);
  const target = DAYS_OF_WEEK.indexOf(day);
  let candidate =
    (localDay + ((target - weekday + 7) % 7)) * DAY_MS + minutes * MINUTE_MS;
  if (candidate < local) candidate += 7 * DAY_MS;
  return candidate - offsetMs;
}

/** Where a gate sits, for transition records. */
export interface GateScope {
  readonly stage: string;
  readonly group?: string;
}

/**
 * Reaches the gates of one position: NotStarted gates become Pending (a scheduled start gets its
 * absolute time), scheduled starts whose time has come complete. Returns the first gate still
 * Pending, or undefined when all have passed.
 */
export function passGates(
  ctx: StepContext,
  gates: readonly Gate[],
  scope: GateScope,
): Gate | undefined {
  let blocking: Gate | undefined;
  for (const gate of gates) {
    if (gate.state === "NotStarted") {
      if (gate.metric !== undefined) {
        // Reached (again): a fresh analysis, measured at once.
        gate.metric.measurements = [];
        delete gate.metric.verdict;
        gate.metric.nextAtMs = ctx.nowMs;
        setGateState(
          ctx,
          gate,
          "Pending",
          `Measuring ${gate.displayName}: 0 of ${String(gate.metric.count)} measurement(s)`,
          scope,
        );
      } else if (
        gate.type === "ScheduledStart" &&
        gate.schedule !== undefined
      ) {
        const at = nextWeeklyOccurrence(
          ctx.nowMs,
          gate.schedule.startDay,
          gate.schedule.startMinutes,
          gate.schedule.utcOffsetMinutes,
        );
        gate.scheduledAtMs = at;
        setGateState(
          ctx,
          gate,
          "Pending",
          `Scheduled to start at ${isoTime(at)}`,
          scope,
        );
      } else {
        setGateState(
          ctx,
          gate,
          "Pending",
          `Waiting for approval "${gate.displayName}" (${gate.id})`,
          scope,
        );
      }
    }
    if (
      gate.state === "Pending" &&
      gate.type === "ScheduledStart" &&
      gate.scheduledAtMs !== undefined &&
      gate.scheduledAtMs <= ctx.nowMs
    ) {
      gate.completedBy = "schedule";
      setGateState(
        ctx,
        gate,
        "Completed",
        `Scheduled start reached at ${isoTime(gate.scheduledAtMs)}`,
        scope,
      );
    }
    if (gate.state === "Pending" && gate.metric !== undefined)
      measureIfDue(ctx, gate, gate.metric, scope);
    if (gate.state === "Pending" || gate.state === "Failed") blocking ??= gate;
  }
  return blocking;
}

/**
 * Asks for a measurement of a metric gate that is measuring and due (docs/engine.md#metric-gates):
 * the `MeasureGate` action with the query's placeholders filled in, and the next one an interval
 * later whether or not this one comes back.
 */
function measureIfDue(
  ctx: StepContext,
  gate: Gate,
  metric: MetricGate,
  scope: GateScope,
): void {
  if (metric.verdict !== undefined) return;
  if (metric.nextAtMs !== undefined && metric.nextAtMs > ctx.nowMs) return;
  const query = fillQuery(ctx.run, metric.query, scope);
  metric.lastQuery = query;
  metric.nextAtMs = ctx.nowMs + metric.intervalSeconds * 1000;
  ctx.actions.push({
    type: "MeasureGate",
    gate: gate.id,
    query,
    stage: scope.stage,
    ...compact({ group: scope.group }),
  });
}

/**
 * `query` with its placeholders filled in for a gate at `scope`: `{{clusters}}` is a regular
 * expression alternation of the scope's members (`a|b|c`: cluster names are DNS labels, nothing to
 * escape), `{{stage}}`, `{{group}}` (empty for a stage's gate) and `{{run}}` the names.
 */
export function fillQuery(run: Run, query: string, scope: GateScope): string {
  const stage = run.stages.find((s) => s.name === scope.stage);
  const groups =
    stage?.groups.filter(
      (g) => scope.group === undefined || g.name === scope.group,
    ) ?? [];
  const members = groups.flatMap((g) => g.members.map((m) => m.name)).sort();
  const values: Readonly<Record<string, string>> = {
    clusters: members.join("|"),
    stage: scope.stage,
    group: scope.group ?? "",
    run: run.name,
  };
  return query.replace(
    /\{\{\s*([a-z]+)\s*\}\}/g,
    (whole, name: string) => values[name] ?? whole,
  );
}

/**
 * Takes a measurement of metric gate `gate` at `scope` (docs/engine.md#metric-gates): judged by
 * its conditions, counted, and the gate decided when the counts say so: Passed completes it,
 * Failed fails it and halts the run as an exceeded failure budget does, Inconclusive leaves it
 * Pending for an approval.
 */
export function takeMeasurement(
  ctx: StepContext,
  gate: Gate,
  scope: GateScope,
  outcome: QueryOutcome,
): void {
  const metric = gate.metric;
  if (metric === undefined) return;
  const { judgement, problem } = judgementOf(metric);
  // A condition that no longer reads (a run stored by another version) judges nothing: inconclusive.
  const measurement = judge(
    judgement,
    problem === undefined ? outcome : { ok: false, reason: problem },
    ctx.nowMs,
  );
  metric.measurements.push(measurement);
  const state = analyse(judgement, metric.measurements);
  const counts = `${String(metric.measurements.length)} of ${String(metric.count)} measurement(s): ${measurement.verdict} (${measurement.message})`;
  switch (state.verdict) {
    case "Running":
      setGateState(
        ctx,
        gate,
        "Pending",
        `Measuring ${gate.displayName}: ${counts}`,
        scope,
      );
      return;
    case "Passed":
      metric.verdict = "Passed";
      delete metric.nextAtMs;
      gate.completedBy = "metric";
      setGateState(
        ctx,
        gate,
        "Completed",
        `Passed: ${state.message ?? counts}`,
        scope,
      );
      return;
    case "Failed": {
      metric.verdict = "Failed";
      delete metric.nextAtMs;
      const message = `Metric gate ${gate.id} failed: ${state.message ?? counts}`;
      setGateState(ctx, gate, "Failed", message, scope);
      ctx.run.budgetExceeded = true;
      ctx.run.haltMessage = message;
      return;
    }
    case "Inconclusive":
      metric.verdict = "Inconclusive";
      delete metric.nextAtMs;
      setGateState(
        ctx,
        gate,
        "Pending",
        `Inconclusive: ${state.message ?? counts}; approve the gate to go on`,
        scope,
      );
      return;
  }
}

/**
 * The conditions and limits of a metric gate, its condition texts parsed again (they were
 * checked); `problem` says why a stored text no longer parses (its measurements are inconclusive).
 */
export function judgementOf(
  metric: Pick<
    MetricGate,
    | "successCondition"
    | "failureCondition"
    | "count"
    | "failureLimit"
    | "inconclusiveLimit"
  >,
): {
  readonly judgement: MetricJudgement;
  readonly problem?: string;
} {
  const problems: string[] = [];
  const parsed = (text: string | undefined, field: string) => {
    if (text === undefined) return undefined;
    const result = parseCondition(text, field);
    if (result.ok) return result.value;
    problems.push(
      ...result.problems.map((p) => `${field} ${text}: ${p.message}`),
    );
    return undefined;
  };
  const judgement: MetricJudgement = {
    ...compact({
      successCondition: parsed(metric.successCondition, "successCondition"),
      failureCondition: parsed(metric.failureCondition, "failureCondition"),
    }),
    count: metric.count,
    failureLimit: metric.failureLimit,
    inconclusiveLimit: metric.inconclusiveLimit,
  };
  return problems.length === 0
    ? { judgement }
    : { judgement, problem: problems.join("; ") };
}

/** Marks every unfinished gate of a skipped scope Skipped. */
export function skipGates(
  ctx: StepContext,
  gates: readonly Gate[],
  scope: GateScope,
  message: string,
): void {
  for (const gate of gates) {
    if (
      gate.state === "NotStarted" ||
      gate.state === "Pending" ||
      gate.state === "Failed"
    ) {
      if (gate.metric !== undefined) delete gate.metric.nextAtMs;
      setGateState(ctx, gate, "Skipped", message, scope);
    }
  }
}

/** True when `id` names this gate exactly or names its position (`stage:canary:after` for `...#2`). */
export function gateMatches(gate: Gate, id: string): boolean {
  return gate.id === id || gate.id.split("#")[0] === id;
}
