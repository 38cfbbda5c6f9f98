/**
 * Status reports count only for the cluster's current intent generation (revision-correct
 * readiness): the `ack` says whether a report counted, and why not. Counted upgrade reports go to
 * the run manager, counted bundle reports to the bundle manager.
 */
import { showValue, type ClusterIntent } from "@flotilla/core";
import type { StatusReport, wire } from "@flotilla/protocol";
import type { IntentWriter } from "../intents/intent-writer.js";

/** Where counted reports go. */
export interface ReportSinks {
  readonly upgrade: (
    cluster: string,
    run: string,
    report: StatusReport,
  ) => void;
  readonly bundle: (cluster: string, report: StatusReport) => void;
}

/** Why `report` does not count against the cluster's current `intent`; "" when it does. */
export function reportRejection(
  intent: ClusterIntent,
  report: StatusReport,
): string {
  if (report.generation !== intent.generation) {
    return `generation ${String(report.generation)} is not the current intent generation ${String(intent.generation)}`;
  }
  if (report.subject.kind === "upgrade") {
    return intent.upgrade?.run === report.subject.upgradeId
      ? ""
      : `upgrade ${showValue(report.subject.upgradeId)} is not in the current intent`;
  }
  const bundle = intent.bundles[report.subject.bundle];
  return bundle?.revision === report.subject.revision
    ? ""
    : `bundle ${showValue(report.subject.bundle)} revision ${showValue(report.subject.revision)} is not in the current intent`;
}

export interface ReportDeps {
  readonly intents: Pick<IntentWriter, "peek" | "current" | "refresh">;
  readonly sinks: ReportSinks;
  readonly onReport?: ((phase: string, accepted: boolean) => void) | undefined;
}

/** Acks `report` of `cluster` (through `ack`) and hands it on if it counted. */
export async function takeReport(
  cluster: string,
  report: StatusReport,
  ack: (ack: wire.Ack) => void,
  deps: ReportDeps,
): Promise<void> {
  let { intent } =
    deps.intents.peek(cluster) ?? (await deps.intents.current(cluster));
  // The agent works on a newer generation than this replica has seen: another replica wrote it.
  if (report.generation > intent.generation) {
    ({ intent } = await deps.intents.refresh(cluster));
  }
  const reason = reportRejection(intent, report);
  const accepted = reason === "";
  deps.onReport?.(report.phase, accepted);
  ack({
    sequence: report.sequence,
    generation: report.generation,
    accepted,
    reason,
  });
  if (!accepted) return;
  if (report.subject.kind === "upgrade") {
    deps.sinks.upgrade(cluster, report.subject.upgradeId, report);
  } else deps.sinks.bundle(cluster, report);
}
