/**
 * The `none` {@link UpgradeDriver}: for clusters whose platform flotilla does not upgrade (a managed
 * service upgraded by its provider, or an owner who upgrades by hand). It supports no upgrade type:
 * `start` answers `Failed: Unsupported` without touching the cluster. It still reports what the
 * cluster runs, so the hub can select by version and skip members already at a target: the control
 * plane's version from the API server's `GET /version`, and node pools from the nodes.
 *
 * Nodes form pools by the first well-known pool label they carry (Cluster API, GKE, EKS, AKS,
 * Karpenter), else by role (`control-plane` or `worker`). A pool's image is its first node's
 * `osImage` and `kernelVersion`; its kubelet version is reported only when it differs from the
 * control plane's (core's NodePool contract). Tested against the local API server in
 * @flotilla/testkit: no real cluster exists on the development machines.
 */
import {
  compareKubernetesVersions,
  parseKubernetesVersion,
  type NodePool,
  compact,
} from "@flotilla/core";
import { VersionApi, type KubeConfig } from "@kubernetes/client-node";
import { createKubeClient } from "../kube/kube-client.js";
import type { PlatformFacts, UpgradeDriver } from "./driver.js";
import {
  kubeletVersionOf,
  normalizeVersion,
  record,
  stringAt,
  type JsonRecord,
} from "./kube-upgrade.js";

/** Node labels naming a node's pool, most specific first. */
export const POOL_LABELS: readonly string[] = [
  "cluster.x-k8s.io/deployment-name",
  "cloud.google.com/gke-nodepool",
  "eks.amazonaws.com/nodegroup",
  "kubernetes.azure.com/agentpool",
  "karpenter.sh/nodepool",
];

const CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane";

/** Options of {@link createNoneDriver}. */
export interface NoneDriverOptions {
  /** For messages. */
  readonly clusterName?: string;
}

/** The pool a node belongs to. */
function poolOf(node: JsonRecord): string {
  const labels = record(record(node.metadata).labels);
  for (const key of POOL_LABELS) {
    const value = labels[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return CONTROL_PLANE_LABEL in labels ? "control-plane" : "worker";
}

/** The lowest of full versions ("1.31.2"). */
function lowest(versions: readonly string[]): string | undefined {
  let low: string | undefined;
  for (const v of versions) {
    const a = parseKubernetesVersion(v);
    const b = low === undefined ? undefined : parseKubernetesVersion(low);
    if (
      b === undefined ||
      (a.ok && b.ok && compareKubernetesVersions(a.value, b.value) < 0)
    )
      low = v;
  }
  return low;
}

/** Node pools from nodes, sorted by name; kubelet versions kept only where they differ from `control`. */
export function nodePoolsOf(
  nodes: readonly JsonRecord[],
  control: string | undefined,
): NodePool[] {
  const pools = new Map<string, JsonRecord[]>();
  for (const node of nodes) {
    const name = poolOf(node);
    pools.set(name, [...(pools.get(name) ?? []), node]);
  }
  return [...pools.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, members]): NodePool => {
      const first = members[0] ?? {};
      const kubelet = lowest(
        members
          .map(kubeletVersionOf)
          .filter((v): v is string => v !== undefined),
      );
      return {
        name,
        imageFamily:
          stringAt(first, "status", "nodeInfo", "osImage") || "unknown",
        imageVersion:
          stringAt(first, "status", "nodeInfo", "kernelVersion") || "unknown",
        ...(kubelet === undefined || kubelet === control
          ? {}
          : { kubernetesVersion: kubelet }),
      };
    });
}

/** Creates the driver that upgrades nothing and reports what the cluster runs. */
export function createNoneDriver(
  deps: { readonly kubeConfig: KubeConfig },
  options: NoneDriverOptions = {},
): UpgradeDriver {
  const client = createKubeClient(deps.kubeConfig, "flotilla-agent");
  const versionApi = deps.kubeConfig.makeApiClient(VersionApi);
  const cluster = options.clusterName ?? "this cluster";
  return {
    // Every type: this driver performs no upgrades.
    supports: (): boolean => false,
    start(request, callOptions = {}) {
      callOptions.signal?.throwIfAborted();
      return Promise.resolve({
        type: "Failed",
        reason: "Unsupported",
        message: `Cannot upgrade ${cluster} for run "${request.run}": the agent runs with upgrade driver "none", which performs no upgrades (choose system-upgrade-controller or cluster-api)`,
      });
    },
    async current(callOptions = {}): Promise<PlatformFacts> {
      callOptions.signal?.throwIfAborted();
      const info = await versionApi.getCode();
      const control = normalizeVersion(info.gitVersion);
      const nodes = await client.list(
        { apiVersion: "v1", kind: "Node", namespace: "", labelSelector: "" },
        callOptions.signal ? { signal: callOptions.signal } : {},
      );
      return {
        ...compact({ kubernetesVersion: control }),
        nodePools: nodePoolsOf(nodes, control),
      };
    },
  };
}
