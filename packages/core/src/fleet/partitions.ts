/**
 * Forming Fleet partitions (docs/semantics.md#partition-forming):
 * manual partitions by criteria, automatic slices of the name-sorted targets, and the resolved
 * limits of a bundle.
 */
import {
  groupsOfCluster,
  compareNames,
  type Cluster,
  type ClusterGroup,
} from "../cluster.js";
import { fleetLimit } from "../int-or-percent.js";
import { matchesSelector } from "../label-selector.js";
import type { FleetPartitionSpec, FleetRolloutStrategy } from "./strategy.js";

/** A formed partition: its clusters in byte order and its resolved maxUnavailable. */
export interface Partition {
  readonly name: string;
  readonly clusters: readonly string[];
  readonly maxUnavailable: number;
  /** True for automatic partitions (including `All` and those appended for unassigned clusters). */
  readonly auto: boolean;
}

/**
 * The bundle-wide limits, resolved with fleetLimit (docs/semantics.md#partition-forming, last
 * bullet).
 */
export interface FleetLimits {
  readonly maxUnavailable: number;
  readonly maxUnavailablePartitions: number;
  readonly maxNew: number;
}

/** The partitions of a bundle, the targets left out of every partition, and the limits. */
export interface PartitionPlan {
  readonly partitions: readonly Partition[];
  /** Targets that match no manual partition, byte order; not deployed unless `unassigned: autoPartition`. */
  readonly unassigned: readonly string[];
  readonly limits: FleetLimits;
}

/** Fleet matches `clusterName` against this label too. */
export const DISPLAY_NAME_LABEL = "management.cattle.io/cluster-display-name";

/**
 * Forms the partitions of `targets` under `strategy`. Recomputed from scratch on every pass, like
 * Fleet: nothing about membership is remembered (docs/semantics.md#releasing, last bullet).
 */
export function formPartitions(
  strategy: FleetRolloutStrategy,
  targets: readonly Cluster[],
  clusterGroups: readonly ClusterGroup[],
): PartitionPlan {
  const sorted = [...targets].sort((a, b) => compareNames(a.name, b.name));
  let partitions: Partition[];
  let unassigned: string[] = [];
  if (strategy.partitions.length === 0) {
    partitions = autoPartitions(
      strategy,
      sorted.map((c) => c.name),
      "All",
    );
  } else {
    const manual = manualPartitions(strategy, sorted, clusterGroups);
    partitions = manual.partitions;
    unassigned = manual.unassigned;
    if (strategy.unassigned === "autoPartition" && unassigned.length > 0) {
      // docs/semantics.md#unassigned-clusters: unmatched clusters get the automatic rules,
      // applied to them alone.
      const taken = new Set(partitions.map((p) => p.name));
      for (const p of autoPartitions(strategy, unassigned, "Unassigned")) {
        let name = p.name;
        while (taken.has(name)) name = `${name} (auto)`;
        taken.add(name);
        partitions.push({ ...p, name });
      }
      unassigned = [];
    }
  }
  return {
    partitions,
    unassigned,
    limits: resolveFleetLimits(strategy, sorted.length, partitions.length),
  };
}

/** Bundle-wide limits: maxUnavailable of all N targets, maxUnavailablePartitions of the partition count. */
export function resolveFleetLimits(
  strategy: FleetRolloutStrategy,
  targetCount: number,
  partitionCount: number,
): FleetLimits {
  return {
    // N includes unassigned targets, as in Fleet.
    maxUnavailable: fleetLimit(targetCount, strategy.maxUnavailable),
    // Integer 0 stays 0 under fleetLimit: with the default, the first NotReady partition stops the pass.
    maxUnavailablePartitions: fleetLimit(
      partitionCount,
      strategy.maxUnavailablePartitions,
    ),
    maxNew: strategy.maxNew,
  };
}

/**
 * Fleet's automatic partitioning of name-sorted `names`. Size is computed once from the total, the
 * last slice holds the remainder (230 at 25% → 57, 57, 57, 57, 2); below the threshold, with threshold
 * 0, or with integer size 0 there is one partition called `single`.
 */
function autoPartitions(
  strategy: FleetRolloutStrategy,
  names: readonly string[],
  single: string,
): Partition[] {
  const n = names.length;
  const limitOf = (clusters: readonly string[]): number =>
    fleetLimit(clusters.length, strategy.maxUnavailable);
  const sizeValue = strategy.autoPartitionSize;
  const threshold = strategy.autoPartitionThreshold;
  if (
    (sizeValue.kind === "int" && sizeValue.value <= 0) ||
    threshold <= 0 ||
    n < threshold
  ) {
    return [
      {
        name: single,
        clusters: [...names],
        maxUnavailable: limitOf(names),
        auto: true,
      },
    ];
  }
  const size = fleetLimit(n, sizeValue);
  const out: Partition[] = [];
  for (let offset = 0; offset < n; offset += size) {
    const clusters = names.slice(offset, offset + size);
    // Fleet's names: 0-based offset and exclusive end ("Partition 0 - 57").
    out.push({
      name: `Partition ${String(offset)} - ${String(offset + clusters.length)}`,
      clusters,
      maxUnavailable: limitOf(clusters),
      auto: true,
    });
  }
  return out;
}

function manualPartitions(
  strategy: FleetRolloutStrategy,
  sorted: readonly Cluster[],
  clusterGroups: readonly ClusterGroup[],
): { partitions: Partition[]; unassigned: string[] } {
  const members: string[][] = strategy.partitions.map(() => []);
  const unassigned: string[] = [];
  for (const cluster of sorted) {
    const groups = groupsOfCluster(cluster, clusterGroups);
    // A cluster matching several partitions belongs to the first: it is deployed once
    // (docs/semantics.md#partition-forming).
    const index = strategy.partitions.findIndex((spec) =>
      matchesPartition(spec, cluster, groups),
    );
    if (index === -1) unassigned.push(cluster.name);
    else members[index]?.push(cluster.name);
  }
  const partitions = strategy.partitions.map((spec, i): Partition => {
    const clusters = members[i] ?? [];
    const value = spec.maxUnavailable ?? strategy.maxUnavailable;
    return {
      name: spec.name,
      clusters,
      maxUnavailable: fleetLimit(clusters.length, value),
      auto: false,
    };
  });
  return { partitions, unassigned };
}

/** True when `cluster` matches every criterion `spec` sets; a spec with no criteria matches none. */
export function matchesPartition(
  spec: Pick<
    FleetPartitionSpec,
    "clusterName" | "clusterSelector" | "clusterGroup" | "clusterGroupSelector"
  >,
  cluster: Cluster,
  groups: readonly ClusterGroup[],
): boolean {
  let criteria = 0;
  if (spec.clusterName !== undefined) {
    criteria++;
    const display = cluster.labels[DISPLAY_NAME_LABEL];
    if (spec.clusterName !== cluster.name && spec.clusterName !== display)
      return false;
  }
  if (spec.clusterSelector !== undefined) {
    criteria++;
    if (!matchesSelector(spec.clusterSelector, cluster.labels)) return false;
  }
  // Group criteria hold when ANY group of the cluster satisfies all of them (Fleet tests each group
  // with the whole matcher); a cluster in no group never matches them
  // (docs/semantics.md#partition-forming; Fleet would test an empty group name and label set
  // instead).
  const { clusterGroup, clusterGroupSelector } = spec;
  if (clusterGroup !== undefined || clusterGroupSelector !== undefined) {
    criteria++;
    const hit = groups.some(
      (g) =>
        (clusterGroup === undefined || g.name === clusterGroup) &&
        (clusterGroupSelector === undefined ||
          matchesSelector(clusterGroupSelector, g.labels)),
    );
    if (!hit) return false;
  }
  return criteria > 0;
}
