/**
 * One release pass of a partitioned rollout (docs/semantics.md#cluster-states,
 * docs/semantics.md#releasing): given what the hub knows about every target's copy of a bundle,
 * decide which clusters receive the current revision now. Pure and recomputed from scratch each
 * pass, like Fleet's reconcile, but with flotilla's deliberate deviations:
 * first-deployment batches wait for the gate, new releases count as unavailable at once, maxNew
 * also caps updates, and a limit of 0 means one at a time.
 */
import { compareNames, type Cluster, type ClusterGroup } from "../cluster.js";
import { isOpenAt, nextOpening } from "../maintenance/windows.js";
import {
  formPartitions,
  type FleetLimits,
  type Partition,
} from "./partitions.js";
import type { FleetRolloutStrategy } from "./strategy.js";
import { compact } from "../compact.js";
import {
  gatesAfter,
  isGateOpen,
  partitionGateStatus,
  type PartitionGateRecord,
  type PartitionGateStatus,
} from "./rollout-gates.js";

/** A cluster's state in a bundle (docs/semantics.md#cluster-states), Fleet's names. */
export type BundleClusterState =
  | "Pending"
  | "OutOfSync"
  | "WaitApplied"
  | "ErrApplied"
  | "NotReady"
  | "Modified"
  | "Ready";

/** What the hub knows about one cluster's copy of this bundle. */
export interface DeploymentObservation {
  /** Revision the hub has released to this cluster (undefined: never deployed). */
  readonly releasedRevision?: string;
  /** Revision the agent reports as applied. */
  readonly appliedRevision?: string;
  /** Resources Ready at appliedRevision. */
  readonly ready: boolean;
  /** The agent failed to apply releasedRevision. */
  readonly errored: boolean;
  /** Drifted from the manifests; never blocks a rollout. */
  readonly modified: boolean;
  /** The agent missed heartbeats (docs/semantics.md#offline-clusters): counts as unavailable. */
  readonly unreachable: boolean;
}

/** Inputs of one pass; `nowMs` is the only clock. */
export interface PassInput {
  readonly strategy: FleetRolloutStrategy;
  readonly targets: readonly Cluster[];
  readonly clusterGroups: readonly ClusterGroup[];
  /** The bundle's current revision. */
  readonly revision: string;
  /** Observations by cluster name; a target without one has never been deployed. */
  readonly deployments: ReadonlyMap<string, DeploymentObservation>;
  readonly nowMs: number;
  /** A paused bundle releases nothing. */
  readonly paused?: boolean;
  /**
   * Clusters whose bundles this one depends on are not all Ready there, with the message naming
   * them (depends-on.ts `dependencyHolds`): held with DependenciesNotReady.
   */
  readonly dependencyHolds?: ReadonlyMap<string, string>;
  /** The bundle's name, for `{{bundle}}` in gate queries (docs/semantics.md#partition-gates). */
  readonly bundle?: string;
  /**
   * What the hub kept of each partition gate at `revision` (docs/semantics.md#partition-gates);
   * absent: nothing measured yet.
   */
  readonly gateRecords?: (
    partition: string,
    gate: string,
  ) => PartitionGateRecord | undefined;
}

/** One release: give `cluster` the revision; `first` when it never had this bundle. */
export interface ReleaseDecision {
  readonly cluster: string;
  readonly partition: string;
  readonly revision: string;
  readonly kind: "first" | "update";
}

/** Why a cluster that does not hold the current revision was not released this pass. */
export type HoldReason =
  | "Paused"
  | "WindowClosed"
  | "MaxUnavailable"
  | "MaxNew"
  | "PartitionsNotReady"
  | "DependenciesNotReady"
  | "GateNotPassed"
  | "GateFailed";

/** A cluster waiting for the current revision, with the reason and (for windows) the next opening. */
export interface HeldCluster {
  readonly cluster: string;
  readonly partition: string;
  readonly reason: HoldReason;
  /** Next opening of the cluster's `workloads` window, for WindowClosed (undefined if none is known). */
  readonly nextOpeningMs?: number;
  readonly message: string;
}

/** A partition after the pass; counts include this pass's releases. */
export interface PartitionStatus extends Partition {
  /** Clusters released and not Ready at their released revision, or unreachable. */
  readonly unavailable: number;
  /** Clusters that are not (at the current revision and available): the NotReady predicate's count. */
  readonly notReadyCount: number;
  /** notReadyCount > maxUnavailable (docs/semantics.md#releasing). */
  readonly notReady: boolean;
  /** Clusters released in this partition by this pass. */
  readonly released: number;
  /** False for partitions after the one the pass stopped at (they were not touched). */
  readonly visited: boolean;
  /** The metric gates measured after this partition (docs/semantics.md#partition-gates). */
  readonly gates?: readonly PartitionGateStatus[];
}

/** A partition gate that failed at the current revision: the rollout of that revision halts. */
export interface GateFailure {
  readonly partition: string;
  readonly gate: string;
  readonly message: string;
}

/** The outcome of one pass. */
export interface PassResult {
  readonly partitions: readonly PartitionStatus[];
  /** Releases in the order they were decided. */
  readonly release: readonly ReleaseDecision[];
  /** Every partitioned target left without the current revision, in walk order. */
  readonly held: readonly HeldCluster[];
  /** The state of every target BEFORE this pass's releases, by cluster name in byte order. */
  readonly states: ReadonlyMap<string, BundleClusterState>;
  /** Targets in no partition: not deployed (docs/semantics.md#unassigned-clusters). */
  readonly unassigned: readonly string[];
  readonly limits: FleetLimits;
  /** Bundle-wide unavailable count after this pass's releases. */
  readonly unavailable: number;
  /** NotReady partitions among those visited. */
  readonly notReadyPartitions: number;
  /** The partition after which the pass stopped, when later partitions were left untouched. */
  readonly stoppedAfter?: string;
  /**
   * Partition gates whose measurement is due now (the hub takes them, then passes again), with
   * the query to ask.
   */
  readonly gateMeasurements: readonly PartitionGateStatus[];
  /** The earliest later time a gate measurement is due, for the hub to come back. */
  readonly nextGateAtMs?: number;
  /**
   * Set when a partition gate failed (and no approval overrides it): nothing more is released at
   * this revision (docs/semantics.md#partition-gates). The point a rollback hooks into.
   */
  readonly gateFailed?: GateFailure;
}

const NEVER_DEPLOYED: DeploymentObservation = {
  ready: false,
  errored: false,
  modified: false,
  unreachable: false,
};

/**
 * The docs/semantics.md#cluster-states state of one cluster's copy, relative to the bundle's
 * current `revision`.
 */
export function bundleClusterState(
  o: DeploymentObservation,
  revision: string,
): BundleClusterState {
  if (o.releasedRevision === undefined) return "Pending";
  // An agent-reported failure wins even when it recorded the revision as applied (Fleet's Installed=False).
  if (o.errored) return "ErrApplied";
  if (o.appliedRevision !== o.releasedRevision) return "WaitApplied";
  if (!o.ready) return "NotReady";
  if (o.releasedRevision !== revision) return "OutOfSync";
  return o.modified ? "Modified" : "Ready";
}

/**
 * docs/semantics.md#cluster-states: released and not Ready at the released revision, or unreachable
 * (docs/semantics.md#offline-clusters).
 */
export function isUnavailable(o: DeploymentObservation): boolean {
  if (o.unreachable) return true;
  if (o.releasedRevision === undefined) return false;
  return o.errored || o.appliedRevision !== o.releasedRevision || !o.ready;
}

/**
 * Runs one pass: walks the partitions in order and decides the releases
 * (docs/semantics.md#releasing).
 */
export function rolloutPass(input: PassInput): PassResult {
  const { revision, nowMs } = input;
  const plan = formPartitions(
    input.strategy,
    input.targets,
    input.clusterGroups,
  );
  const { limits } = plan;
  const clusters = new Map(input.targets.map((c) => [c.name, c]));
  const observe = (name: string): DeploymentObservation =>
    input.deployments.get(name) ?? NEVER_DEPLOYED;
  const names = [...clusters.keys()].sort(compareNames);
  const states = new Map(
    names.map((n) => [n, bundleClusterState(observe(n), revision)]),
  );

  const releasedNow = new Set<string>();
  // A paused cluster is set aside: it gets nothing new, and its state never holds others back.
  const paused = (name: string): boolean => clusters.get(name)?.paused === true;
  const unavailable = (name: string): boolean =>
    !paused(name) && (releasedNow.has(name) || isUnavailable(observe(name)));
  const current = (name: string): boolean =>
    releasedNow.has(name) || observe(name).releasedRevision === revision;
  // docs/semantics.md#limit-zero: a limit of 0 still lets one batch / one cluster through,
  // each Ready before the next.
  const bundleGate = Math.max(limits.maxUnavailable, 1);
  let bundleUnavailable = names.filter(unavailable).length;
  let newCount = 0;
  let notReadyPartitions = 0;
  let stoppedAfter: string | undefined;
  // Why the partitions after `stoppedAfter` wait, when a gate stopped the pass.
  let gateHold: { reason: HoldReason; message: string } | undefined;
  let gateFailed: GateFailure | undefined;
  const gateMeasurements: PartitionGateStatus[] = [];
  let nextGateAtMs: number | undefined;
  const partitionNames = plan.partitions.map((p) => p.name);
  const release: ReleaseDecision[] = [];
  const held: HeldCluster[] = [];
  const statuses: PartitionStatus[] = [];

  for (const [index, p] of plan.partitions.entries()) {
    const hold = (
      cluster: string,
      reason: HoldReason,
      message: string,
      nextOpeningMs?: number,
    ): void => {
      held.push({
        cluster,
        partition: p.name,
        reason,
        message,
        ...compact({ nextOpeningMs }),
      });
    };
    const visited = stoppedAfter === undefined;
    let releasedHere = 0;
    const waiting: string[] = [];
    for (const n of p.clusters) {
      if (current(n)) continue;
      // Held for its dependencies, a cluster is not released yet and counts like any other held
      // cluster (docs/semantics.md#dependencies-between-bundles), unlike a paused one.
      const dependencies = input.dependencyHolds?.get(n);
      if (input.paused === true) hold(n, "Paused", "bundle is paused");
      else if (paused(n)) hold(n, "Paused", "cluster is paused");
      else if (dependencies !== undefined)
        hold(n, "DependenciesNotReady", dependencies);
      else waiting.push(n);
    }
    // With the bundle paused, every cluster was held above and `waiting` is empty.
    if (!visited && gateHold !== undefined) {
      for (const n of waiting) hold(n, gateHold.reason, gateHold.message);
    } else if (!visited) {
      const why = `pass stopped after partition "${stoppedAfter ?? ""}": ${String(notReadyPartitions)} NotReady partition(s) exceed maxUnavailablePartitions ${String(limits.maxUnavailablePartitions)}`;
      for (const n of waiting) hold(n, "PartitionsNotReady", why);
    } else {
      let partitionUnavailable = p.clusters.filter(unavailable).length;
      const partitionGate = Math.max(p.maxUnavailable, 1);
      const gateMessage = (): string | undefined =>
        partitionUnavailable >= partitionGate
          ? `partition "${p.name}" has ${String(partitionUnavailable)} unavailable cluster(s), limit ${String(p.maxUnavailable)}`
          : bundleUnavailable >= bundleGate
            ? `bundle has ${String(bundleUnavailable)} unavailable cluster(s), limit ${String(limits.maxUnavailable)}`
            : undefined;
      const maxNewMessage = `maxNew ${String(limits.maxNew)} releases already decided this pass`;
      const give = (n: string, kind: ReleaseDecision["kind"]): void => {
        // A release makes the cluster unavailable at once (docs/semantics.md#releasing), unless it
        // already was.
        if (!unavailable(n)) {
          partitionUnavailable++;
          bundleUnavailable++;
        }
        releasedNow.add(n);
        newCount++;
        releasedHere++;
        release.push({ cluster: n, partition: p.name, revision, kind });
      };

      const firsts: string[] = [];
      const updates: string[] = [];
      for (const n of waiting) {
        const cluster = clusters.get(n);
        if (!isOpenAt(cluster?.maintenance, "workloads", nowMs)) {
          const next = nextOpening(cluster?.maintenance, "workloads", nowMs);
          const when =
            next === undefined
              ? "no opening known"
              : `next opening ${new Date(next).toISOString()}`;
          hold(
            n,
            "WindowClosed",
            `workloads maintenance window closed; ${when}`,
            next,
          );
        } else if (observe(n).releasedRevision === undefined) firsts.push(n);
        else updates.push(n);
      }

      // First deployments: one batch of up to the remaining maxNew, started only while both counts
      // are below their gates; the batch itself ignores the limits ("25 clusters, maxUnavailable 5:
      // all 25 deploy before the check").
      const blocked = firsts.length > 0 ? gateMessage() : undefined;
      firsts.forEach((n) => {
        if (blocked !== undefined) hold(n, "MaxUnavailable", blocked);
        else if (newCount >= limits.maxNew) hold(n, "MaxNew", maxNewMessage);
        else give(n, "first");
      });

      // Updates: one cluster at a time while both counts are below their gates. A cluster already
      // unavailable at an older revision is switched regardless (Fleet), but still uses maxNew.
      for (const n of updates) {
        const gate = unavailable(n) ? undefined : gateMessage();
        if (newCount >= limits.maxNew) hold(n, "MaxNew", maxNewMessage);
        else if (gate !== undefined) hold(n, "MaxUnavailable", gate);
        else give(n, "update");
      }
    }

    const notReadyCount = p.clusters.filter(
      (n) => !paused(n) && (!current(n) || unavailable(n)),
    ).length;
    const notReady = notReadyCount > p.maxUnavailable;
    // A gate measures once every cluster of its partition holds the revision and is available.
    const gates = visited
      ? gatesAfter(input.strategy.gates, partitionNames, index).map((g) =>
          partitionGateStatus(
            g,
            {
              partition: p.name,
              clusters: p.clusters,
              bundle: input.bundle ?? "",
              revision,
            },
            notReadyCount === 0,
            notReadyCount,
            input.gateRecords?.(p.name, g.name),
            nowMs,
          ),
        )
      : [];
    statuses.push({
      ...p,
      unavailable: p.clusters.filter(unavailable).length,
      notReadyCount,
      notReady,
      released: releasedHere,
      visited,
      ...(gates.length > 0 ? { gates } : {}),
    });
    if (!visited) continue;
    if (notReady) notReadyPartitions++;
    for (const g of gates) {
      if (g.nextAtMs === undefined) continue;
      if (g.nextAtMs <= nowMs) gateMeasurements.push(g);
      else nextGateAtMs = Math.min(nextGateAtMs ?? g.nextAtMs, g.nextAtMs);
    }
    const failed = gates.find((g) => g.verdict === "Failed");
    if (failed !== undefined)
      gateFailed ??= {
        partition: p.name,
        gate: failed.gate,
        message: failed.message,
      };
    // Fleet's rule: stop once the NotReady partitions seen exceed the limit (the default 0 stops
    // right after the first NotReady partition, which itself was processed).
    const more = index < plan.partitions.length - 1;
    if (more && notReadyPartitions > limits.maxUnavailablePartitions)
      stoppedAfter = p.name;
    else if (more) {
      // docs/semantics.md#partition-gates: the next partitions start once this one's gates passed.
      const closed = failed ?? gates.find((g) => !isGateOpen(g.verdict));
      if (closed !== undefined) {
        stoppedAfter = p.name;
        gateHold = {
          reason: closed.verdict === "Failed" ? "GateFailed" : "GateNotPassed",
          message: closed.message,
        };
      }
    }
  }

  return {
    partitions: statuses,
    release,
    held,
    states,
    unassigned: plan.unassigned,
    limits,
    unavailable: bundleUnavailable,
    notReadyPartitions,
    gateMeasurements,
    ...compact({ stoppedAfter, nextGateAtMs, gateFailed }),
  };
}
