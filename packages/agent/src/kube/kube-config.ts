/**
 * Loading the agent's Kubernetes client configuration: from a kubeconfig file when a path is given
 * (development, or an agent managing a cluster from outside), otherwise in-cluster from the pod's
 * service account (token and CA under /var/run/secrets/kubernetes.io/serviceaccount, API address
 * from the KUBERNETES_SERVICE_HOST/PORT variables Kubernetes sets; client-node reads those).
 */
import { existsSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";
import { FlotillaError } from "@flotilla/core";

/** Where the in-cluster service account token lives. */
export const SERVICE_ACCOUNT_TOKEN =
  "/var/run/secrets/kubernetes.io/serviceaccount/token";

/** Options of {@link loadKubeConfig}. */
export interface LoadKubeConfigOptions {
  /** Path of a kubeconfig file; absent: in-cluster configuration. */
  readonly kubeconfig?: string;
  /** Overrides the token file checked for in-cluster configuration (tests). */
  readonly tokenPath?: string;
}

/**
 * The client configuration; throws `failed_precondition` naming the file when the kubeconfig
 * cannot be read or has no current cluster, or when there is neither a kubeconfig nor a service
 * account token.
 */
export function loadKubeConfig(
  options: LoadKubeConfigOptions = {},
): KubeConfig {
  const kc = new KubeConfig();
  const { kubeconfig } = options;
  if (kubeconfig !== undefined && kubeconfig !== "") {
    try {
      kc.loadFromFile(kubeconfig);
    } catch (error) {
      throw new FlotillaError(
        "failed_precondition",
        `Cannot load kubeconfig "${kubeconfig}": ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    if (kc.getCurrentCluster() === null)
      throw new FlotillaError(
        "failed_precondition",
        `Cannot load kubeconfig "${kubeconfig}": it has no current context with a cluster`,
      );
    return kc;
  }
  const tokenPath = options.tokenPath ?? SERVICE_ACCOUNT_TOKEN;
  if (!existsSync(tokenPath))
    throw new FlotillaError(
      "failed_precondition",
      `Cannot load the in-cluster Kubernetes configuration: no service account token at "${tokenPath}"; set a kubeconfig path when running outside a cluster`,
    );
  kc.loadFromCluster();
  return kc;
}
