/**
 * Reading nodes for the system-upgrade-controller driver: which Plan selects each node (k3s and
 * RKE2 label server nodes `node-role.kubernetes.io/control-plane: "true"`), the kubelet versions,
 * the platform facts they give, and progress as upgraded nodes over selected nodes.
 */
import {
  compareKubernetesVersions,
  parseKubernetesVersion,
  type NodePool,
  compact,
} from "@flotilla/core";
import type { PlatformFacts } from "./driver.js";
import {
  kubeletVersionOf,
  record,
  stringAt,
  type JsonRecord,
  type Observation,
} from "./kube-upgrade.js";

/** The label k3s and RKE2 put on server (control-plane) nodes, with the value "true". */
export const CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane";

/** A node as the Plans see it. */
export interface NodeView {
  readonly name: string;
  readonly role: "server" | "agent";
  readonly version: string | undefined;
  readonly node: JsonRecord;
}

/** The nodes the Plans select, by name; nodes neither Plan selects are left out. */
export function nodeViews(nodes: readonly JsonRecord[]): NodeView[] {
  return nodes
    .map((node): NodeView | undefined => {
      const labels = record(record(node.metadata).labels);
      // The Plans' selectors: "true" for servers, no label for agents; other values match neither.
      const role =
        labels[CONTROL_PLANE_LABEL] === "true"
          ? "server"
          : CONTROL_PLANE_LABEL in labels
            ? undefined
            : "agent";
      if (role === undefined) return undefined;
      return {
        name: stringAt(node, "metadata", "name") ?? "",
        role,
        version: kubeletVersionOf(node),
        node,
      };
    })
    .filter((v): v is NodeView => v !== undefined)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The lowest of the versions (all normalized full versions), or undefined. */
function lowest(versions: readonly (string | undefined)[]): string | undefined {
  let low: string | undefined;
  for (const v of versions) {
    if (v === undefined) continue;
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

/** The facts nodes give: the control plane from server nodes, one pool per role. */
export function sucFacts(nodes: readonly NodeView[]): PlatformFacts {
  const pools = (["server", "agent"] as const).flatMap((role): NodePool[] => {
    const members = nodes.filter((n) => n.role === role);
    const first = members[0];
    if (first === undefined) return [];
    return [
      {
        name: role,
        imageFamily:
          stringAt(first.node, "status", "nodeInfo", "osImage") ?? "unknown",
        imageVersion:
          stringAt(first.node, "status", "nodeInfo", "kernelVersion") ??
          "unknown",
        ...kubeletOf(members),
      },
    ];
  });
  const control = lowest(
    nodes.filter((n) => n.role === "server").map((n) => n.version),
  );
  return control === undefined
    ? { nodePools: pools }
    : {
        kubernetesVersion: control,
        nodePools: pools.map((p) =>
          p.kubernetesVersion === control
            ? {
                name: p.name,
                imageFamily: p.imageFamily,
                imageVersion: p.imageVersion,
              }
            : p,
        ),
      };
}

function kubeletOf(members: readonly NodeView[]): {
  kubernetesVersion?: string;
} {
  const version = lowest(members.map((m) => m.version));
  return compact({ kubernetesVersion: version });
}

/** Progress as upgraded nodes over selected nodes. */
export function progressOf(
  nodes: readonly NodeView[],
  version: string,
  waiting: string | undefined,
): Observation {
  const done = nodes.filter((n) => n.version === version).length;
  const next = nodes.find((n) => n.version !== version);
  const message =
    waiting ??
    `${String(done)} of ${String(nodes.length)} node(s) at ${version}${next === undefined ? "" : `; next: ${next.role} node "${next.name}"`}`;
  return { type: "Progress", done, total: nodes.length, message };
}
