/**
 * The clusters one agent process hosts, from its configuration: one real cluster through the
 * Kubernetes API (`--kubernetes`: in-cluster or a kubeconfig), one simulated cluster
 * (`--simulated`) or a simulated fleet (`--simulated-fleet`). Each is created when its agent is,
 * started before it and stopped after it (agent-process.ts).
 */
import type { Logger } from "pino";
import { parse as parseYaml } from "yaml";
import type { AgentConfig, KubernetesBackendConfig } from "./config.js";
import { loadKubeConfig } from "./kube/kube-config.js";
import type { IdentityStore } from "./identity/identity-store.js";
import { createSecretIdentityStore } from "./identity/secret-identity-store.js";
import type { AgentBackend } from "./runtime/agent-backend.js";
import { createKubernetesBackend } from "./runtime/kubernetes-backend.js";
import { systemClock } from "./simulated/clock.js";
import { loadSimulatedCluster } from "./simulated/cluster-file.js";
import { loadSimulatedFleet } from "./simulated/fleet-file.js";
import { mulberry32 } from "./simulated/random.js";
import { createSimulatedCluster } from "./simulated/simulated-cluster.js";

/** One cluster's backend with its lifecycle. */
export interface HostedCluster {
  readonly backend: AgentBackend;
  start(options: { readonly signal: AbortSignal }): Promise<void>;
  stop(): Promise<void>;
}

/** A cluster to host: its name in the fleet, and how to build it. */
export interface ClusterToHost {
  readonly name: string;
  create(): HostedCluster;
  /** A store of the cluster's identity in Secret `secretName` of its namespace (real clusters only). */
  readonly secretIdentityStore?: (secretName: string) => IdentityStore;
}

const parseText = (text: string): unknown => parseYaml(text) as unknown;

function kubernetesCluster(
  backend: KubernetesBackendConfig,
  logger: Logger,
): ClusterToHost {
  // Read now so a bad kubeconfig or a missing service account fails before anything connects.
  const kubeConfig = loadKubeConfig(
    backend.kubeconfig === undefined ? {} : { kubeconfig: backend.kubeconfig },
  );
  const namespace =
    backend.namespace ??
    kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ??
    "default";
  logger.info(
    {
      clusterName: backend.clusterName,
      kubernetes: backend.kubeconfig ?? "in-cluster",
      server: kubeConfig.getCurrentCluster()?.server,
      namespace,
      upgradeDriver: backend.upgradeDriver.type,
    },
    "Using the Kubernetes API",
  );
  return {
    name: backend.clusterName,
    secretIdentityStore: (name) =>
      createSecretIdentityStore({ kubeConfig }, { namespace, name }),
    create: () => {
      const cluster = createKubernetesBackend(
        { kubeConfig, logger, clock: systemClock },
        {
          clusterName: backend.clusterName,
          namespace,
          windowsConfigMap: backend.windowsConfigMap,
          forceConflicts: backend.forceConflicts,
          labels: backend.labels,
          ...(backend.region === undefined ? {} : { region: backend.region }),
          upgradeDriver: backend.upgradeDriver,
        },
      );
      return {
        backend: cluster,
        start: (options) => cluster.start(options),
        stop: () => cluster.stop(),
      };
    },
  };
}

/**
 * The clusters of `config`. Rejects with `invalid_argument` for bad simulated files and with
 * `failed_precondition` when the Kubernetes client configuration cannot be loaded.
 */
export async function loadHostedClusters(
  config: AgentConfig,
  logger: Logger,
): Promise<readonly ClusterToHost[]> {
  const { backend } = config;
  switch (backend.type) {
    case "kubernetes":
      return [kubernetesCluster(backend, logger)];
    case "simulated":
    case "simulatedFleet": {
      const configs =
        backend.type === "simulated"
          ? [
              await loadSimulatedCluster(backend.file, {
                parseText,
                ...(backend.clusterName === undefined
                  ? {}
                  : { name: backend.clusterName }),
              }),
            ]
          : (await loadSimulatedFleet(backend.file, { parseText })).clusters;
      return configs.map((c) => ({
        name: c.name,
        create: () => {
          const cluster = createSimulatedCluster(c, {
            clock: systemClock,
            random: mulberry32(c.seed),
            parseText,
          });
          return {
            backend: cluster,
            start: (options) => cluster.start(options),
            stop: () => cluster.stop(),
          };
        },
      }));
    }
    default: {
      const unreachable: never = backend;
      return unreachable;
    }
  }
}
