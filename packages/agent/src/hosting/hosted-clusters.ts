/**
 * The clusters one agent process hosts, from its configuration: one real cluster through the
 * Kubernetes API (`--kubernetes`: in-cluster or a kubeconfig), one simulated cluster
 * (`--simulated`) or a simulated fleet (`--simulated-fleet`). Each is created when its agent is,
 * started before it and stopped after it (agent-process.ts).
 */
import type { Logger } from "pino";
import { parse as parseYaml } from "yaml";
import type { AgentConfig } from "../config/config.js";
import type { ClusterToHost } from "./hosted-cluster.js";
import { systemClock } from "@flotilla/node";
import { loadSimulatedCluster } from "../simulated/cluster-file.js";
import { loadSimulatedFleet } from "../simulated/fleet-file.js";
import { mulberry32 } from "../simulated/random.js";
import { createSimulatedCluster } from "../simulated/simulated-cluster.js";
import { compact } from "@flotilla/core";

export type { ClusterToHost, HostedCluster } from "./hosted-cluster.js";

const parseText = (text: string): unknown => parseYaml(text) as unknown;

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
    case "kubernetes": {
      // Loaded only here: see kube-hosted-cluster.ts.
      const { kubernetesCluster } = await import("./kube-hosted-cluster.js");
      return [kubernetesCluster(backend, logger)];
    }
    case "simulated":
    case "simulatedFleet": {
      const configs =
        backend.type === "simulated"
          ? [
              await loadSimulatedCluster(backend.file, {
                parseText,
                ...compact({ name: backend.clusterName }),
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
            errorRatios: () => cluster.kube.errorRatios(),
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
