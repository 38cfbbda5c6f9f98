/**
 * Which clusters a bundle targets and with which customization (Fleet's target builder).
 * Fleet's rules, first match wins throughout:
 * * a cluster is a target when it matches a `targets` entry; if the first entry it matches sets
 *   `doNotDeploy`, it is not deployed;
 * * the first `targetCustomizations` entry it matches applies to it; if that entry sets
 *   `doNotDeploy`, it is not deployed either.
 * No targets means no clusters (bundleSpecWarnings says so).
 */
import {
  compareNames,
  groupsOfCluster,
  type Cluster,
  type ClusterGroup,
} from "../cluster.js";
import type { BundleTargetMatcher, FleetBundleSpec } from "./bundle-spec.js";
import { matchesPartition } from "./partitions.js";

/** A targeted cluster and what applies to it. */
export interface BundleTarget {
  readonly cluster: Cluster;
  /** Index in `targetCustomizations` of the customization it got; undefined for none. */
  readonly customization?: number;
  /** Its default namespace: the customization's, else the bundle's ("" for none). */
  readonly namespace: string;
  /** Its fleet.yaml `namespace` (namespace-rules.ts): the customization's, else the bundle's. */
  readonly targetNamespace: string;
}

/** True when `cluster` (in `groups`) matches every criterion `matcher` sets; none set matches nothing. */
export function matchesTarget(
  matcher: BundleTargetMatcher,
  cluster: Cluster,
  groups: readonly ClusterGroup[],
): boolean {
  // Partitions and targets use one matcher in Fleet (clustermatcher.go): the same AND rules.
  return matchesPartition(matcher, cluster, groups);
}

/** Whether a cluster is a target of a bundle: its target, or why it is not. */
export type TargetDecision =
  | { readonly target: BundleTarget }
  | { readonly target?: undefined; readonly notTargeted: string };

/** Whether `spec` deploys to `cluster` (groups from `clusterGroups`), with what, or why not. */
export function targetDecision(
  spec: FleetBundleSpec,
  cluster: Cluster,
  clusterGroups: readonly ClusterGroup[],
): TargetDecision {
  const groups = groupsOfCluster(cluster, clusterGroups);
  const entry = spec.targets.findIndex((t) =>
    matchesTarget(t, cluster, groups),
  );
  if (entry === -1) return { notTargeted: "no entry of targets matches it" };
  if (spec.targets[entry]?.doNotDeploy === true)
    return {
      notTargeted: `the first entry of targets it matches (targets[${String(entry)}]) sets doNotDeploy`,
    };
  const index = spec.targetCustomizations.findIndex((c) =>
    matchesTarget(c, cluster, groups),
  );
  const customization =
    index === -1 ? undefined : spec.targetCustomizations[index];
  if (customization?.doNotDeploy === true)
    return {
      notTargeted: `the target customization it matches (targetCustomizations[${String(index)}]) sets doNotDeploy`,
    };
  return {
    target: {
      cluster,
      ...(customization === undefined ? {} : { customization: index }),
      namespace: customization?.defaultNamespace ?? spec.defaultNamespace,
      targetNamespace: customization?.targetNamespace ?? spec.targetNamespace,
    },
  };
}

/** The clusters `spec` deploys to, in byte order of their names, each with its customization. */
export function bundleTargets(
  spec: FleetBundleSpec,
  clusters: readonly Cluster[],
  clusterGroups: readonly ClusterGroup[],
): BundleTarget[] {
  const out: BundleTarget[] = [];
  for (const cluster of [...clusters].sort((a, b) =>
    compareNames(a.name, b.name),
  )) {
    const { target } = targetDecision(spec, cluster, clusterGroups);
    if (target !== undefined) out.push(target);
  }
  return out;
}
