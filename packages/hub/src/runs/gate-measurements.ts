/**
 * Measuring the metric gates of runs (docs/engine.md#metric-gates): core asks for a measurement
 * (`MeasureGate`, its query's placeholders filled in); this asks the hub's Prometheus, records the
 * answer in the audit log (the verdict is in the run's status), and hands the outcome back to the
 * run as a `GateMeasured` event. A query that fails is an outcome with its reason: inconclusive,
 * never a pass.
 */
import type { QueryOutcome } from "@flotilla/core";
import type { Logger } from "pino";
import type { AuditLog } from "../audit/audit-log.js";
import { hubRunRecord } from "../audit/takeover-audit.js";
import type { MeasureGate } from "./step-batch.js";

/** The method of the audit records (not an RPC: the hub acts on its own). */
export const MEASURE_GATE_METHOD = "/flotilla.hub/MeasureGate";

/** What asks a Prometheus-compatible API an instant query. */
export interface MetricSource {
  query(
    promql: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<QueryOutcome>;
}

export interface GateMeasurerDeps {
  readonly source: MetricSource;
  readonly audit: AuditLog;
  readonly now: () => number;
  readonly log: Logger;
  /** This replica's id, for the actor of the records. */
  readonly replica: () => string;
}

/** The numbers of an outcome as a record shows them. */
export function outcomeText(outcome: QueryOutcome): string {
  if (!outcome.ok) return `no value: ${outcome.reason}`;
  if (outcome.values.length === 0) return "no series";
  const shown = outcome.values.slice(0, 10).map((v) => String(v));
  return `${shown.join(", ")}${outcome.values.length > 10 ? `, … (${String(outcome.values.length)} series)` : ""}`;
}

/** The run manager's `measureGate`: asks, audits, answers (never rejects). */
export function createGateMeasurer(
  deps: GateMeasurerDeps,
): (run: string, action: MeasureGate) => Promise<QueryOutcome> {
  return async (run, action) => {
    let outcome: QueryOutcome;
    try {
      outcome = await deps.source.query(action.query);
    } catch (error) {
      outcome = {
        ok: false,
        reason: error instanceof Error ? error.message : String(error),
      };
    }
    deps.audit
      .append(
        hubRunRecord({
          atMs: deps.now(),
          replica: deps.replica(),
          method: MEASURE_GATE_METHOD,
          run,
          reason: `gate ${action.gate}`,
          message: `${action.query} → ${outcomeText(outcome)}`,
        }),
      )
      .catch((error: unknown) => {
        deps.log.warn(
          { err: error, runName: run, gate: action.gate },
          "audit record of a measurement lost",
        );
      });
    return outcome;
  };
}
