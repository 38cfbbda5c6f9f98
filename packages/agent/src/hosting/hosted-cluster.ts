/** What an agent process hosts: a cluster's backend and its lifecycle (see hosted-clusters.ts). */
import type { IdentityStore } from "../identity/identity-store.js";
import type { AgentBackend } from "../runtime/agent-backend.js";
import type { AgentMetrics } from "../metrics/agent-metrics.js";

/** One cluster's backend with its lifecycle. */
export interface HostedCluster {
  readonly backend: AgentBackend;
  start(options: { readonly signal: AbortSignal }): Promise<void>;
  stop(): Promise<void>;
  /**
   * Simulated clusters only: the error ratio each applied bundle's objects set
   * (simulated/error-ratio.ts), by bundle name.
   */
  readonly errorRatios?: () => ReadonlyMap<string, number>;
}

/** A cluster to host: its name in the fleet, and how to build it. */
export interface ClusterToHost {
  readonly name: string;
  /** `metrics`: the process's, for what the backend counts itself (drift corrections). */
  create(context?: { readonly metrics?: AgentMetrics }): HostedCluster;
  /** A store of the cluster's identity in Secret `secretName` of its namespace (real clusters only). */
  readonly secretIdentityStore?: (secretName: string) => IdentityStore;
}
