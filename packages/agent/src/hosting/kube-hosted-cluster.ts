/**
 * The one real cluster an agent hosts with `--kubernetes`: its client configuration, its
 * Kubernetes backend and the Secret store of its identity. Kept apart from hosted-clusters.ts and
 * imported only when `--kubernetes` is given: @kubernetes/client-node adds about 70 MB to a
 * process, which simulated agents have no use for.
 */
import type { Logger } from "pino";
import type { KubernetesBackendConfig } from "../config/config.js";
import type { ClusterToHost } from "./hosted-cluster.js";
import { createSecretIdentityStore } from "../identity/secret-identity-store.js";
import { loadKubeConfig } from "../kube/kube-config.js";
import { createKubernetesBackend } from "../runtime/kubernetes-backend.js";
import { systemClock } from "@flotilla/node";
import { compact } from "@flotilla/core";

/** The cluster behind `backend`'s client configuration; fails if it cannot be loaded. */
export function kubernetesCluster(
  backend: KubernetesBackendConfig,
  logger: Logger,
): ClusterToHost {
  // Read now so a bad kubeconfig or a missing service account fails before anything connects.
  const kubeConfig = loadKubeConfig(
    compact({ kubeconfig: backend.kubeconfig }),
  );
  const namespace =
    backend.namespace ??
    kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ??
    "default";
  logger.info(
    {
      cluster: backend.clusterName,
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
    create: (context = {}) => {
      const cluster = createKubernetesBackend(
        {
          kubeConfig,
          logger,
          clock: systemClock,
          ...compact({ metrics: context.metrics }),
        },
        {
          clusterName: backend.clusterName,
          namespace,
          windowsConfigMap: backend.windowsConfigMap,
          forceConflicts: backend.forceConflicts,
          labels: backend.labels,
          ...compact({
            region: backend.region,
            supportPlan: backend.supportPlan,
          }),
          upgradeDriver: backend.upgradeDriver,
          helm: backend.helm,
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
