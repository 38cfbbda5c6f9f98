/**
 * A rollback as passes see it (docs/semantics.md#rolling-back-a-bundle): while targets still hold
 * the revision rolled back from, a pass releases the revision rolled back to only to them, paced
 * by core's `rollbackPass`; once none does, the partition rollout of the (now current) revision
 * goes on as usual. Also: when a revision counts as good, and how far a rollback got.
 */
import {
  bundleClusterState,
  rollbackPass,
  type DeploymentObservation,
  type FleetBundleSpec,
} from "@flotilla/core";
import type { BundleRollback, RollbackProgress } from "@flotilla/protocol";
import type { BundleRecord } from "./bundle-record.js";
import type { Evaluation } from "./bundle-status.js";

/**
 * The releases of the rollback in progress on `record`, or undefined when there is none (no
 * rollback, or no target holds the revision rolled back from any more).
 */
export function rollbackReleases(
  record: BundleRecord,
  spec: Pick<FleetBundleSpec, "paused">,
  evaluation: Evaluation,
):
  | readonly { readonly cluster: string; readonly revision: string }[]
  | undefined {
  const rolled = record.rolledBack;
  if (rolled === undefined || rolled.to !== record.revision) return undefined;
  const result = rollbackPass({
    from: rolled.from,
    to: rolled.to,
    targets: evaluation.targets.map((t) => t.cluster),
    deployments: evaluation.deployments,
    maxUnavailable: evaluation.pass.limits.maxUnavailable,
    allAtOnce: rolled.allAtOnce === true,
    paused: spec.paused,
  });
  if (result.complete) return undefined;
  return result.release.map((cluster) => ({ cluster, revision: rolled.to }));
}

/**
 * Whether the current revision is good: every target in a partition and not paused is Ready (or
 * Modified) at it, and there is at least one.
 */
export function isGood(evaluation: Evaluation): boolean {
  const unassigned = new Set(evaluation.pass.unassigned);
  const counted = evaluation.targets.filter(
    (t) => t.cluster.paused !== true && !unassigned.has(t.cluster.name),
  );
  return (
    counted.length > 0 &&
    counted.every((t) => {
      const state = evaluation.pass.states.get(t.cluster.name);
      return state === "Ready" || state === "Modified";
    })
  );
}

/** Of the clusters `rolled` moves, how many are Ready at the revision rolled back to. */
export function rollbackProgress(
  rolled: BundleRollback,
  deployments: ReadonlyMap<string, DeploymentObservation>,
): RollbackProgress {
  const back = rolled.clusters.filter((cluster) => {
    const d = deployments.get(cluster);
    if (d === undefined) return false;
    const state = bundleClusterState(d, rolled.to);
    return state === "Ready" || state === "Modified";
  }).length;
  return { back, touched: rolled.clusters.length };
}
