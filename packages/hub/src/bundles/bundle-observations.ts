/**
 * What agents last reported about each cluster's copy of each bundle, and how that becomes core's
 * DeploymentObservation.
 *
 * Kept in memory only, deliberately: reports are frequent and only the latest counts, and after
 * a hub restart every agent re-sends its current status for every item of its intent when it
 * reconnects (docs/agent-protocol.md, Session 6). Until it has, the cluster shows WaitApplied at
 * its released revision and counts as unavailable, so a restarted hub holds releases back rather
 * than overshoot a limit. Released revisions are never kept here: the intent is their record.
 */
import type { DeploymentObservation } from "@flotilla/core";
import type {
  ResourceReason,
  StatusPhase,
  StatusReport,
} from "@flotilla/protocol";
import { compact } from "@flotilla/core";

/** The latest counted report on one cluster's copy of one bundle. */
export interface BundleReport {
  readonly revision: string;
  readonly phase: StatusPhase;
  readonly reasons: readonly ResourceReason[];
  readonly reasonsTruncated: number;
  readonly message?: string;
  readonly error?: string;
  readonly observedAtMs: number;
}

/** Latest reports by bundle, then cluster. */
export class BundleObservations {
  readonly #reports = new Map<string, Map<string, BundleReport>>();

  /**
   * Records a bundle report (other subjects are ignored). Returns true when it changes what a pass
   * decides on (the revision or the phase): a report that only repeats them, or changes reasons
   * and messages, needs no pass.
   */
  record(cluster: string, report: StatusReport): boolean {
    if (report.subject.kind !== "bundle") return false;
    const { bundle, revision } = report.subject;
    let byCluster = this.#reports.get(bundle);
    if (byCluster === undefined) {
      byCluster = new Map();
      this.#reports.set(bundle, byCluster);
    }
    const previous = byCluster.get(cluster);
    byCluster.set(cluster, {
      revision,
      phase: report.phase,
      reasons: report.reasons,
      reasonsTruncated: report.reasonsTruncated,
      ...compact({ message: report.message, error: report.error }),
      observedAtMs: report.observedAtMs,
    });
    return previous?.revision !== revision || previous.phase !== report.phase;
  }

  get(bundle: string, cluster: string): BundleReport | undefined {
    return this.#reports.get(bundle)?.get(cluster);
  }

  /** Forgets a cluster's report on `bundle` (the bundle was removed from its intent). */
  forget(bundle: string, cluster: string): void {
    this.#reports.get(bundle)?.delete(cluster);
  }

  forgetBundle(bundle: string): void {
    this.#reports.delete(bundle);
  }

  /** Forgets reports from clusters not in `present` (they left the fleet). */
  retainClusters(present: ReadonlySet<string>): void {
    for (const byCluster of this.#reports.values()) {
      for (const cluster of byCluster.keys()) {
        if (!present.has(cluster)) byCluster.delete(cluster);
      }
    }
  }
}

/**
 * Core's view of one cluster's copy: the revision its intent holds (`released`), what its latest
 * report says about that, and whether its agent is unreachable. A report on another revision than
 * the released one says nothing about the released one (it is not applied yet).
 */
export function deploymentObservation(
  released: string | undefined,
  report: BundleReport | undefined,
  unreachable: boolean,
): DeploymentObservation {
  const base = {
    ready: false,
    errored: false,
    modified: false,
    unreachable,
  };
  if (released === undefined) return base;
  if (report === undefined) return { ...base, releasedRevision: released };
  const applied = {
    releasedRevision: released,
    appliedRevision: report.revision,
  };
  switch (report.phase) {
    case "Ready":
      return { ...base, ...applied, ready: true };
    case "Modified":
      // Drifted but ready: never blocks a rollout (docs/semantics.md#cluster-states).
      return { ...base, ...applied, ready: true, modified: true };
    case "Applied":
    case "NotReady":
      return { ...base, ...applied };
    case "Failed":
      return {
        ...base,
        releasedRevision: released,
        errored: report.revision === released,
      };
    case "Applying":
    case "Pending":
      return { ...base, releasedRevision: released };
    default: {
      const never: never = report.phase;
      return never;
    }
  }
}
