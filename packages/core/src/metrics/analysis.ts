/**
 * How a metric gate decides (docs/engine.md#metric-gates): each measurement is one query result
 * judged by the gate's conditions, and the gate's verdict follows from the measurements so far, as
 * Argo Rollouts' analysis counts them: it fails once more than `failureLimit` measurements failed,
 * is inconclusive once more than `inconclusiveLimit` were inconclusive, and passes once `count`
 * measurements were taken within both limits. A query error, an empty result and a condition that
 * cannot be evaluated are inconclusive, never a pass. Pure: the hub (and `simulate`) feed it.
 */
import { evaluateCondition, type Condition } from "./condition.js";

/** What a gate needs to judge measurements. */
export interface MetricJudgement {
  /** True means the measurement succeeded. */
  readonly successCondition?: Condition;
  /** True means the measurement failed (checked first). */
  readonly failureCondition?: Condition;
  /** Measurements to take before the gate passes (at least 1). */
  readonly count: number;
  /** Failed measurements tolerated. */
  readonly failureLimit: number;
  /** Inconclusive measurements tolerated. */
  readonly inconclusiveLimit: number;
}

/** What one query gave: its numbers, or why there are none. */
export type QueryOutcome =
  | { readonly ok: true; readonly values: readonly number[] }
  | { readonly ok: false; readonly reason: string };

export type MeasurementVerdict = "Successful" | "Failed" | "Inconclusive";

/** One judged measurement. */
export interface Measurement {
  readonly atMs: number;
  /** The query's numbers (absent when the query failed). */
  readonly values?: readonly number[];
  readonly verdict: MeasurementVerdict;
  /** Why: the condition that decided, or what made it inconclusive. */
  readonly message: string;
}

/**
 * Judges one query outcome:
 * - `failureCondition` true: Failed; `successCondition` true: Successful;
 * - with one condition only, its opposite when false (false success = Failed, false failure =
 *   Successful); with both, neither true: Inconclusive;
 * - a failed query, an empty result, or a condition that cannot be evaluated: Inconclusive.
 */
export function judge(
  gate: MetricJudgement,
  outcome: QueryOutcome,
  atMs: number,
): Measurement {
  if (!outcome.ok)
    return { atMs, verdict: "Inconclusive", message: outcome.reason };
  const { values } = outcome;
  const base = { atMs, values };
  if (
    gate.successCondition === undefined &&
    gate.failureCondition === undefined
  )
    return {
      ...base,
      verdict: "Inconclusive",
      message: "the gate has no condition to judge by",
    };
  if (values.length === 0)
    return {
      ...base,
      verdict: "Inconclusive",
      message: "the query returned no series",
    };
  const check = (condition: Condition | undefined) =>
    condition === undefined ? undefined : evaluateCondition(condition, values);
  const failure = check(gate.failureCondition);
  if (failure?.ok === false)
    return {
      ...base,
      verdict: "Inconclusive",
      message: `failureCondition: ${failure.reason}`,
    };
  if (failure?.value === true)
    return {
      ...base,
      verdict: "Failed",
      message: `failureCondition ${gate.failureCondition?.text ?? ""} is true`,
    };
  const success = check(gate.successCondition);
  if (success?.ok === false)
    return {
      ...base,
      verdict: "Inconclusive",
      message: `successCondition: ${success.reason}`,
    };
  if (success?.value === true)
    return {
      ...base,
      verdict: "Successful",
      message: `successCondition ${gate.successCondition?.text ?? ""} is true`,
    };
  if (success !== undefined && failure !== undefined)
    return {
      ...base,
      verdict: "Inconclusive",
      message: "neither successCondition nor failureCondition is true",
    };
  return success === undefined
    ? {
        ...base,
        verdict: "Successful",
        message: `failureCondition ${gate.failureCondition?.text ?? ""} is false`,
      }
    : {
        ...base,
        verdict: "Failed",
        message: `successCondition ${gate.successCondition?.text ?? ""} is false`,
      };
}

/** Where a gate stands after its measurements. */
export type AnalysisVerdict = "Running" | "Passed" | "Failed" | "Inconclusive";

/** The measurements counted by verdict, and the gate's verdict from them. */
export interface AnalysisState {
  readonly verdict: AnalysisVerdict;
  readonly successful: number;
  readonly failed: number;
  readonly inconclusive: number;
  /** Why the gate ended, when it did. */
  readonly message?: string;
}

/** The verdict of `gate` after `measurements` (in order; later ones after an end are ignored). */
export function analyse(
  gate: MetricJudgement,
  measurements: readonly Measurement[],
): AnalysisState {
  let successful = 0;
  let failed = 0;
  let inconclusive = 0;
  for (const [i, m] of measurements.entries()) {
    if (m.verdict === "Successful") successful++;
    else if (m.verdict === "Failed") failed++;
    else inconclusive++;
    const counts = { successful, failed, inconclusive };
    if (failed > gate.failureLimit)
      return {
        verdict: "Failed",
        ...counts,
        message: `${String(failed)} failed measurement${failed === 1 ? "" : "s"}, more than failureLimit ${String(gate.failureLimit)}: ${m.message}`,
      };
    if (inconclusive > gate.inconclusiveLimit)
      return {
        verdict: "Inconclusive",
        ...counts,
        message: `${String(inconclusive)} inconclusive measurement${inconclusive === 1 ? "" : "s"}, more than inconclusiveLimit ${String(gate.inconclusiveLimit)}: ${m.message}`,
      };
    if (i + 1 >= gate.count)
      return {
        verdict: "Passed",
        ...counts,
        message: `${String(i + 1)} measurement${i === 0 ? "" : "s"} within the limits`,
      };
  }
  return { verdict: "Running", successful, failed, inconclusive };
}
