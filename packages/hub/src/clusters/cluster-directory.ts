/**
 * What the rollout schedulers (bundles, staged runs) read about the fleet: the registered clusters
 * as core sees them, the cluster groups, and which agents are unreachable
 * (docs/semantics.md#offline-clusters). The cluster registry implements it; tests can pass a plain
 * object.
 */
import type { Cluster, ClusterGroup } from "@flotilla/core";

export interface ClusterDirectory {
  /** Registered clusters (labels set by the hub applied over the agent's), sorted by name. */
  clusters(): readonly Cluster[];
  cluster(name: string): Cluster | undefined;
  groups(): readonly ClusterGroup[];
  /**
   * True once the cluster's agent has missed its heartbeats (docs/semantics.md#offline-clusters),
   * until it reports again.
   */
  isUnreachable(name: string): boolean;
}
