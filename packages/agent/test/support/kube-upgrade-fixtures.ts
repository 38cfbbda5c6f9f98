/**
 * Fixtures for the upgrade-driver and windows tests on the local Kubernetes API server: a server
 * with the CRDs a driver needs, nodes with kubelet versions, a KubeConfig pointing at it, and a
 * maintenance source whose content a test sets.
 */
import { KubeConfig } from "@kubernetes/client-node";
import type {
  MaintenanceSource,
  MaintenanceState,
  UpgradeProgress,
} from "@flotilla/agent";
import { parseMaintenance } from "@flotilla/core";
import {
  startKubeApiServer,
  type JsonObject,
  type KubeApiServer,
} from "@flotilla/testkit";

/** A CRD serving `kind` (plural `plural`) in `group`/`version` with a status subresource. */
export function crd(
  group: string,
  kind: string,
  plural: string,
  versions: readonly string[] = ["v1beta1"],
  scope: "Namespaced" | "Cluster" = "Namespaced",
): JsonObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope,
      names: { kind, plural, singular: kind.toLowerCase() },
      versions: versions.map((name, i) => ({
        name,
        served: true,
        storage: i === 0,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            "x-kubernetes-preserve-unknown-fields": true,
          },
        },
      })),
    },
  };
}

/** A server with the namespaces and CRDs given; close it with `await using`. */
export async function kubeServer(
  namespaces: readonly string[],
  crds: readonly JsonObject[],
): Promise<
  { server: KubeApiServer; kubeConfig: KubeConfig } & AsyncDisposable
> {
  const server = await startKubeApiServer();
  for (const name of namespaces)
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  for (const c of crds) server.put(c);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(server.kubeconfig());
  return { server, kubeConfig, [Symbol.asyncDispose]: () => server.close() };
}

/** Creates or updates a node and sets its kubelet version, as the kubelet would. */
export function setNode(
  server: KubeApiServer,
  name: string,
  kubeletVersion: string,
  labels: Record<string, string> = {},
): void {
  if (server.object("Node", "", name) === undefined)
    server.put({ apiVersion: "v1", kind: "Node", metadata: { name, labels } });
  server.setStatus("Node", "", name, {
    nodeInfo: {
      kubeletVersion,
      osImage: "Ubuntu 24.04 LTS",
      kernelVersion: "6.8.0-45-generic",
    },
  });
}

/** A maintenance source a test controls; `set` takes a `maintenance:` block. */
export function testWindows(): MaintenanceSource & { set(raw: unknown): void } {
  let state: MaintenanceState = {};
  return {
    current: () => state,
    reload: () => Promise.resolve(state),
    watch: () => () => undefined,
    set(raw) {
      const parsed = parseMaintenance(raw);
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      state = { maintenance: parsed.value };
    },
  };
}

/** Collects progress reports. */
export function progressLog(): {
  readonly reports: UpgradeProgress[];
  readonly onProgress: (p: UpgradeProgress) => void;
} {
  const reports: UpgradeProgress[] = [];
  return { reports, onProgress: (p) => reports.push(p) };
}
