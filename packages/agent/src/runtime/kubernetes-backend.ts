/**
 * The {@link AgentBackend} of a real cluster: the client-node {@link KubeGateway}, the
 * upgrade driver the configuration chose (none, system-upgrade-controller or Cluster API), and the
 * owner's maintenance windows from a ConfigMap of the agent's namespace, all on one client
 * configuration (in-cluster service account or a kubeconfig; kube/kube-config.ts), and Helm
 * bundles rendered with the real helm against the cluster's capabilities (kube/helm-render.ts).
 * Facts are the
 * configured labels, region and support plan, the driver's versions and node pools, the windows in force, and
 * the driver's version catalogue (driver-catalogue.ts).
 *
 * `start()` starts the gateway and reads and watches the windows ConfigMap; `stop()` ends both, in
 * reverse order. There is no Kubernetes API server on the development machines: this is tested
 * against the local API server in @flotilla/testkit.
 */
import type { ClusterFacts } from "@flotilla/protocol";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import {
  createClientNodeGateway,
  type ClientNodeGateway,
} from "../kube/client-node-gateway.js";
import type { Clock } from "@flotilla/node";
import { createCapiDriver } from "../upgrade/capi-driver.js";
import type { UpgradeDriver } from "../upgrade/driver.js";
import { createNoneDriver } from "../upgrade/none-driver.js";
import { createSucDriver } from "../upgrade/suc-driver.js";
import {
  createConfigMapMaintenanceSource,
  type ConfigMapMaintenanceSource,
} from "../windows/configmap-maintenance-source.js";
import type { AgentBackend } from "./agent-backend.js";
import type { AgentMetrics } from "../metrics/agent-metrics.js";
import { createDriverCatalogue } from "./driver-catalogue.js";
import { createCapabilitiesSource } from "../kube/helm-capabilities.js";
import { createHelmRenderer } from "../kube/helm-render.js";
import { createKubeClient } from "../kube/kube-client.js";
import { compact, type SupportPlan } from "@flotilla/core";

/** Which upgrade driver, with its settings. */
export type UpgradeDriverConfig =
  | { readonly type: "none" }
  | {
      readonly type: "system-upgrade-controller";
      readonly distribution: "k3s" | "rke2";
      /** Defaults are the driver's (suc-driver.ts). */
      readonly namespace?: string;
      readonly serverPlanName?: string;
      readonly agentPlanName?: string;
    }
  | {
      readonly type: "cluster-api";
      /** The `Cluster` object in the management cluster. */
      readonly clusterName: string;
      readonly namespace: string;
    };

/** Dependencies of {@link createKubernetesBackend}. */
export interface KubernetesBackendDeps {
  readonly kubeConfig: KubeConfig;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Counts drift corrections (docs/metrics.md); none when absent. */
  readonly metrics?: Pick<AgentMetrics, "driftCorrected">;
}

/** Options of {@link createKubernetesBackend}. */
export interface KubernetesBackendOptions {
  /** The cluster's name in the fleet, for messages. */
  readonly clusterName: string;
  /** The agent's namespace: bundle inventories and the windows ConfigMap. */
  readonly namespace: string;
  /** Name of the owner's windows ConfigMap in `namespace`. */
  readonly windowsConfigMap: string;
  /** Server-side apply takes over fields others own instead of failing; default false. */
  readonly forceConflicts?: boolean;
  /** Labels reported to the hub. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly region?: string;
  /** Configuration: a cluster cannot tell its vendor's support plan (docs/agent.md). */
  readonly supportPlan?: SupportPlan;
  readonly upgradeDriver: UpgradeDriverConfig;
  /** The helm binary that renders Helm bundles (docs/agent.md, `--helm`); default `helm` on PATH. */
  readonly helm?: string;
}

/** A real cluster's backend; start it before the agent, stop it after. */
export interface KubernetesBackend extends AgentBackend, AsyncDisposable {
  readonly kube: ClientNodeGateway;
  readonly windows: ConfigMapMaintenanceSource;
  start(options?: { readonly signal?: AbortSignal }): Promise<void>;
  stop(): Promise<void>;
}

function createDriver(
  deps: KubernetesBackendDeps,
  windows: ConfigMapMaintenanceSource,
  options: KubernetesBackendOptions,
): UpgradeDriver {
  const { kubeConfig, clock } = deps;
  const driver = options.upgradeDriver;
  switch (driver.type) {
    case "none":
      return createNoneDriver(
        { kubeConfig },
        { clusterName: `cluster "${options.clusterName}"` },
      );
    case "system-upgrade-controller":
      return createSucDriver(
        { kubeConfig, clock, windows },
        {
          distribution: driver.distribution,
          clusterName: `cluster "${options.clusterName}"`,
          ...compact({
            namespace: driver.namespace,
            serverPlanName: driver.serverPlanName,
            agentPlanName: driver.agentPlanName,
          }),
        },
      );
    case "cluster-api":
      return createCapiDriver(
        { kubeConfig, clock, windows },
        { namespace: driver.namespace, clusterName: driver.clusterName },
      );
    default: {
      const unreachable: never = driver;
      return unreachable;
    }
  }
}

/** Creates the backend; nothing talks to the API server until `start()`. */
export function createKubernetesBackend(
  deps: KubernetesBackendDeps,
  options: KubernetesBackendOptions,
): KubernetesBackend {
  const logger = deps.logger.child({ cluster: options.clusterName });
  const kube = createClientNodeGateway(
    {
      kubeConfig: deps.kubeConfig,
      logger,
      clock: deps.clock,
      onDriftCorrection: (bundle, result) => {
        deps.metrics?.driftCorrected(bundle, result);
      },
    },
    { namespace: options.namespace, force: options.forceConflicts ?? false },
  );
  const windows = createConfigMapMaintenanceSource(
    { kubeConfig: deps.kubeConfig, logger, clock: deps.clock },
    { namespace: options.namespace, name: options.windowsConfigMap },
  );
  const upgrades = createDriver(deps, windows, options);
  const client = createKubeClient(deps.kubeConfig, "flotilla-agent");
  const capabilities = createCapabilitiesSource({ client, clock: deps.clock });
  const helm = createHelmRenderer(
    { client, capabilities },
    { helm: options.helm ?? "helm" },
  );
  const driverCatalogue = createDriverCatalogue(upgrades);
  let started = false;

  const stop = async (): Promise<void> => {
    // Reverse order of start.
    await windows.stop();
    await kube.stop();
  };

  return {
    kube,
    upgrades,
    windows,
    renderHelm: (content, callOptions) => helm.render(content, callOptions),
    ...(upgrades.catalogue === undefined ? {} : { catalogue: driverCatalogue }),
    async facts(callOptions = {}): Promise<ClusterFacts> {
      const platform = await upgrades.current(callOptions);
      const { maintenance } = windows.current();
      const catalogue = await driverCatalogue.read(platform, callOptions);
      return {
        labels: { ...options.labels },
        ...platform,
        nodePools: [...platform.nodePools],
        ...compact({
          region: options.region,
          supportPlan: options.supportPlan,
          maintenance,
          catalogue,
        }),
      };
    },
    async start(startOptions = {}) {
      if (started) return;
      started = true;
      // A new connection may be to an upgraded cluster: read its capabilities again.
      capabilities.invalidate();
      await kube.start();
      try {
        await windows.start(startOptions);
      } catch (error) {
        await kube.stop();
        throw error;
      }
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
