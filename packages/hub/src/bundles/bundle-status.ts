/**
 * A bundle's status as the admin API shows it (docs/semantics.md#cluster-states): each target's
 * state with its partition, released and applied revisions, hold reason and the agent's
 * per-resource reasons; the partitions with their counts; the resolved limits; the targets in no
 * partition.
 */
import {
  bundleClusterState,
  compareNames,
  type BundleClusterState,
  type BundleTarget,
  type DeploymentObservation,
  type PassResult,
  compact,
} from "@flotilla/core";
import type {
  BundleClusterView,
  BundleCounts,
  BundleDriver,
  BundleRecord,
  BundleStatus,
} from "@flotilla/protocol";
import type { BundleReport } from "./bundle-observations.js";

export type {
  BundleClusterView,
  BundleCounts,
  BundleStatus,
  BundleSummary,
} from "@flotilla/protocol";

/** Where a bundle stands now: its targets and what the hub knows about each. */
export interface Evaluation {
  readonly targets: readonly BundleTarget[];
  readonly deployments: ReadonlyMap<string, DeploymentObservation>;
  readonly reports: ReadonlyMap<string, BundleReport>;
  /** A pass over exactly this state (not necessarily published). */
  readonly pass: PassResult;
}

const NO_DEPLOYMENT: DeploymentObservation = {
  ready: false,
  errored: false,
  modified: false,
  unreachable: false,
};

/** The docs/semantics.md#cluster-states state of every target, byte order. */
export function targetStates(
  evaluation: Pick<Evaluation, "targets" | "deployments">,
  revision: string,
): Map<string, BundleClusterState> {
  const names = evaluation.targets
    .map((t) => t.cluster.name)
    .sort(compareNames);
  return new Map(
    names.map((n) => [
      n,
      bundleClusterState(
        evaluation.deployments.get(n) ?? NO_DEPLOYMENT,
        revision,
      ),
    ]),
  );
}

/** Targets counted by state. */
export function countsOf(
  evaluation: Evaluation,
  revision: string,
): BundleCounts {
  const counts = {
    targets: evaluation.targets.length,
    pending: 0,
    outOfSync: 0,
    waitApplied: 0,
    errApplied: 0,
    notReady: 0,
    modified: 0,
    ready: 0,
    unassigned: evaluation.pass.unassigned.length,
  };
  for (const state of targetStates(evaluation, revision).values()) {
    switch (state) {
      case "Pending":
        counts.pending++;
        break;
      case "OutOfSync":
        counts.outOfSync++;
        break;
      case "WaitApplied":
        counts.waitApplied++;
        break;
      case "ErrApplied":
        counts.errApplied++;
        break;
      case "NotReady":
        counts.notReady++;
        break;
      case "Modified":
        counts.modified++;
        break;
      case "Ready":
        counts.ready++;
        break;
      default: {
        const never: never = state;
        return never;
      }
    }
  }
  return counts;
}

/** What the hub knows of one target, for {@link clusterView}. */
export interface TargetFacts {
  readonly deployment: DeploymentObservation | undefined;
  readonly report: BundleReport | undefined;
  /** The last pass's hold of the cluster, if it held it. */
  readonly held: PassResult["held"][number] | undefined;
  readonly partition: string | undefined;
}

/** The view of one target `cluster` in `state` (docs/semantics.md#cluster-states). */
export function clusterView(
  cluster: string,
  state: BundleClusterState,
  facts: TargetFacts,
): BundleClusterView {
  const d = facts.deployment ?? NO_DEPLOYMENT;
  const { report } = facts;
  const waiting = state === "Pending" || state === "OutOfSync";
  const held = waiting ? facts.held : undefined;
  return {
    cluster,
    state,
    ...compact({
      partition: facts.partition,
      releasedRevision: d.releasedRevision,
      appliedRevision: d.appliedRevision,
    }),
    ...(held === undefined ? {} : { held: held.reason }),
    ...compact({ nextOpeningMs: held?.nextOpeningMs }),
    message: held?.message ?? report?.error ?? report?.message ?? "",
    reasons: report?.reasons ?? [],
    reasonsTruncated: report?.reasonsTruncated ?? 0,
    unreachable: d.unreachable,
    ...(report === undefined ? {} : { updatedAtMs: report.observedAtMs }),
  };
}

/**
 * The status of `record`: states from `evaluation` (now), partitions and hold reasons from
 * `pass` (the last published pass of this revision, else the evaluation's own).
 */
export function bundleStatus(
  record: BundleRecord,
  evaluation: Evaluation,
  pass: PassResult,
  runMember: RunMemberOf = () => undefined,
): BundleStatus {
  const driver = record.drivenBy;
  const partitionOf = new Map<string, string>();
  for (const p of pass.partitions)
    for (const c of p.clusters) partitionOf.set(c, p.name);
  const heldOf = new Map(pass.held.map((h) => [h.cluster, h]));
  const clusters = [...targetStates(evaluation, record.revision)].map(
    ([cluster, state]) => {
      const view = clusterView(cluster, state, {
        deployment: evaluation.deployments.get(cluster),
        report: evaluation.reports.get(cluster),
        // While a run drives the bundle, the partition rollout's holds are not what holds it.
        held: driver === undefined ? heldOf.get(cluster) : undefined,
        partition: partitionOf.get(cluster),
      });
      return driver === undefined ? view : drivenView(view, driver, runMember);
    },
  );
  return {
    summary: { record, counts: countsOf(evaluation, record.revision) },
    clusters,
    partitions: pass.partitions,
    limits: pass.limits,
    unassigned: pass.unassigned,
    ...compact({
      stoppedAfter: pass.stoppedAfter,
      gateFailed: driver === undefined ? pass.gateFailed?.message : undefined,
    }),
    ...(driver === undefined
      ? {}
      : { drivenBy: { run: driver.run, revision: driver.revision } }),
  };
}

/** Where a cluster is in a run, if it is a member: stage, group and member state. */
export type RunMemberOf = (
  run: string,
  cluster: string,
) => NonNullable<BundleClusterView["run"]> | undefined;

/**
 * A target's view while a staged run drives the bundle (docs/semantics.md#staged-bundle-runs): a
 * member's place in the run, and why a target that does not hold the current revision waits.
 */
function drivenView(
  view: BundleClusterView,
  driver: BundleDriver,
  runMember: RunMemberOf,
): BundleClusterView {
  const run = runMember(driver.run, view.cluster);
  const waiting = view.state === "Pending" || view.state === "OutOfSync";
  const message =
    waiting && view.message === ""
      ? run === undefined
        ? `Held: the bundle is driven by staged run ${driver.run} (revision ${driver.revision}), which this cluster is not a member of`
        : `Held: staged run ${driver.run} releases revision ${driver.revision} here when this member's turn comes`
      : view.message;
  return { ...view, message, ...(run === undefined ? {} : { run }) };
}
