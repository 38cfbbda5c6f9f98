/**
 * What an agent runs against: its cluster's ports (docs/architecture.md). The simulated cluster is
 * one; the Kubernetes backend (kubernetes-backend.ts) is the other. The agent does not own the
 * backend's lifecycle: whoever built it starts it before the agent and stops it after.
 */
import type { ClusterFacts } from "@flotilla/protocol";
import type { KubeGateway } from "../kube/gateway.js";
import type { UpgradeDriver } from "../upgrade/driver.js";
import type { MaintenanceSource } from "../upgrade/maintenance-source.js";

/** One cluster's ports and facts. */
export interface AgentBackend {
  readonly kube: KubeGateway;
  readonly upgrades: UpgradeDriver;
  /** The owner's maintenance windows and freezes; `reload()` is called periodically. */
  readonly windows: MaintenanceSource;
  /** Labels, versions, node pools, region, windows in force: what hello's facts carry. */
  facts(options?: { readonly signal?: AbortSignal }): Promise<ClusterFacts>;
}
