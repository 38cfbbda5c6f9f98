/**
 * What an agent runs against: its cluster's ports (docs/architecture.md). The simulated cluster is
 * one; the Kubernetes backend (kubernetes-backend.ts) is the other. The agent does not own the
 * backend's lifecycle: whoever built it starts it before the agent and stops it after.
 */
import type {
  BundleContent,
  BundleHelm,
  ClusterFacts,
  KubernetesObject,
} from "@flotilla/protocol";
import type { KubeGateway } from "../kube/gateway.js";
import type { UpgradeDriver } from "../upgrade/driver.js";
import type { MaintenanceSource } from "../upgrade/maintenance-source.js";

/** One cluster's ports and facts. */
export interface AgentBackend {
  readonly kube: KubeGateway;
  /**
   * Turns a Helm bundle's chart into the objects to apply (docs/bundles.md#helm-bundles); throws
   * naming why it cannot. Absent: this backend cannot render charts, and a Helm bundle fails on
   * its cluster with that reason.
   */
  readonly renderHelm?: (
    content: BundleContent & { readonly helm: BundleHelm },
    options: { readonly signal?: AbortSignal },
  ) => Promise<readonly KubernetesObject[]>;
  readonly upgrades: UpgradeDriver;
  /** The owner's maintenance windows and freezes; `reload()` is called periodically. */
  readonly windows: MaintenanceSource;
  /**
   * Where the cluster's version catalogue comes from when it can change while the agent runs
   * (docs/agent.md#the-version-catalogue): `reload()` is called with the windows', and a change
   * makes the agent send its facts again. Absent: the catalogue is read with the facts only.
   */
  readonly catalogue?: {
    reload(options?: { readonly signal?: AbortSignal }): Promise<void>;
    /** Why the last reload could not be used (the previous catalogue stays), if it could not. */
    error(): string | undefined;
    watch(
      listener: () => void,
      options?: { readonly signal?: AbortSignal },
    ): () => void;
  };
  /** Labels, versions, node pools, region, windows in force: what hello's facts carry. */
  facts(options?: { readonly signal?: AbortSignal }): Promise<ClusterFacts>;
}
