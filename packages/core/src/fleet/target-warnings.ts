/**
 * Warnings about a Fleet rollout's targets rather than its numbers: cluster groups named but never
 * declared (docs/semantics.md#undeclared-groups: they match nothing, as in Fleet, but
 * flotilla says so instead of leaving the rollout to skip clusters silently), and paused clusters
 * (docs/semantics.md#paused-clusters: the rollout goes on without them).
 */
import { compareNames, type Cluster, type ClusterGroup } from "../cluster.js";
import type { PlanWarning } from "../preview-types.js";
import { closestName } from "../schema.js";
import type { FleetRolloutStrategy } from "./strategy.js";
import { listNames } from "./warnings.js";

const CODE = "UndeclaredClusterGroup";

/** One warning per partition naming an undeclared group, then one per undeclared group clusters list. */
export function undeclaredGroupWarnings(
  strategy: FleetRolloutStrategy,
  clusters: readonly Cluster[],
  clusterGroups: readonly ClusterGroup[],
): PlanWarning[] {
  const declared = clusterGroups.map((g) => g.name);
  const isDeclared = (name: string): boolean => declared.includes(name);
  const warnings: PlanWarning[] = [];
  strategy.partitions.forEach((p, i) => {
    const group = p.clusterGroup;
    if (group === undefined || isDeclared(group)) return;
    const guess = closestName(group, declared);
    warnings.push({
      code: CODE,
      message: `partitions[${String(i)}] ("${p.name}"): clusterGroup "${group}" is not a declared cluster group, so the partition matches no cluster${guess === undefined ? "" : `; did you mean "${guess}"?`}`,
    });
  });
  const listedBy = new Map<string, string[]>();
  for (const c of [...clusters].sort((a, b) => compareNames(a.name, b.name))) {
    for (const group of new Set(c.groups)) {
      if (isDeclared(group)) continue;
      const names = listedBy.get(group) ?? [];
      names.push(c.name);
      listedBy.set(group, names);
    }
  }
  for (const group of [...listedBy.keys()].sort(compareNames)) {
    const names = listedBy.get(group) ?? [];
    warnings.push({
      code: CODE,
      message: `cluster group "${group}" is listed in the groups of ${String(names.length)} cluster(s) (${listNames(names)}) but is not declared, so it holds none of them`,
    });
  }
  return warnings;
}

/** One warning listing the paused targets, when there are any. */
export function pausedClusterWarnings(
  clusters: readonly Cluster[],
): PlanWarning[] {
  const paused = clusters
    .filter((c) => c.paused === true)
    .map((c) => c.name)
    .sort(compareNames);
  if (paused.length === 0) return [];
  return [
    {
      code: "PausedClusters",
      message: `${String(paused.length)} cluster(s) are paused: they receive nothing new and do not count as unavailable: ${listNames(paused)}`,
    },
  ];
}
