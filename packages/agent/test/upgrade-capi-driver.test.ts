import { CAPI_CLUSTER_LABEL, createCapiDriver } from "@flotilla/agent";
import { systemClock } from "@flotilla/node";
import type { UpgradeType } from "@flotilla/core";
import {
  waitFor,
  type JsonObject,
  type KubeApiServer,
} from "@flotilla/testkit";
import { describe, expect, it } from "vitest";
import {
  crd,
  kubeServer,
  progressLog,
  testWindows,
} from "./support/kube-upgrade-fixtures.js";
import { compact } from "@flotilla/core";

const NS = "fleet";
const CAPI = "cluster.x-k8s.io/v1beta1";
const KCP_API = "controlplane.cluster.x-k8s.io/v1beta1";
const INFRA_API = "infrastructure.cluster.x-k8s.io/v1beta1";

function template(name: string): JsonObject {
  return {
    apiVersion: INFRA_API,
    kind: "DockerMachineTemplate",
    metadata: { name, namespace: NS },
    spec: { template: { spec: {} } },
  };
}

/** Plays a controller: sets status with observedGeneration of the current spec. */
function report(
  server: KubeApiServer,
  kind: string,
  name: string,
  status: Record<string, unknown>,
): void {
  const object = server.object(kind, NS, name);
  const generation = (object?.metadata as { generation?: number }).generation;
  server.setStatus(kind, NS, name, {
    observedGeneration: generation,
    ...status,
  });
}

const settled = (replicas: number, version?: string) => ({
  ...compact({ version }),
  replicas,
  updatedReplicas: replicas,
  readyReplicas: replicas,
});

async function cluster(topology = false) {
  const { server, kubeConfig } = await kubeServer(
    [NS],
    [
      crd("cluster.x-k8s.io", "Cluster", "clusters"),
      crd("cluster.x-k8s.io", "MachineDeployment", "machinedeployments"),
      crd(
        "controlplane.cluster.x-k8s.io",
        "KubeadmControlPlane",
        "kubeadmcontrolplanes",
      ),
      crd(
        "infrastructure.cluster.x-k8s.io",
        "DockerMachineTemplate",
        "dockermachinetemplates",
      ),
    ],
  );
  server.put({
    apiVersion: CAPI,
    kind: "Cluster",
    metadata: { name: "edge", namespace: NS },
    spec: {
      controlPlaneRef: {
        apiVersion: KCP_API,
        kind: "KubeadmControlPlane",
        name: "edge-cp",
      },
      ...(topology
        ? { topology: { class: "quick-start", version: "v1.30.5" } }
        : {}),
    },
  });
  server.put({
    apiVersion: KCP_API,
    kind: "KubeadmControlPlane",
    metadata: { name: "edge-cp", namespace: NS },
    spec: { replicas: 3, version: "v1.30.5" },
  });
  report(server, "KubeadmControlPlane", "edge-cp", settled(3, "v1.30.5"));
  server.put(template("workers-v1"));
  server.put(template("workers-v2"));
  server.put({
    apiVersion: CAPI,
    kind: "MachineDeployment",
    metadata: {
      name: "edge-md-0",
      namespace: NS,
      labels: { [CAPI_CLUSTER_LABEL]: "edge" },
    },
    spec: {
      clusterName: "edge",
      replicas: 2,
      template: {
        spec: {
          clusterName: "edge",
          version: "v1.30.5",
          infrastructureRef: {
            apiVersion: INFRA_API,
            kind: "DockerMachineTemplate",
            name: "workers-v1",
          },
        },
      },
    },
  });
  report(server, "MachineDeployment", "edge-md-0", settled(2));
  const windows = testWindows();
  const driver = createCapiDriver(
    { kubeConfig, clock: systemClock, windows },
    { namespace: NS, clusterName: "edge", pollIntervalMs: 10 },
  );
  return {
    server,
    driver,
    windows,
    [Symbol.asyncDispose]: () => server.close(),
  };
}

const request = (
  type: UpgradeType = "Full",
  extra: Record<string, unknown> = {},
) => ({
  run: "upgrade-1.31",
  type,
  target: { kubernetesVersion: "1.31.2", ...extra },
});

const spec = (server: KubeApiServer, kind: string, name: string) =>
  server.object(kind, NS, name)?.spec as Record<string, unknown> | undefined;

const mdSpec = (server: KubeApiServer) =>
  (
    spec(server, "MachineDeployment", "edge-md-0")?.template as {
      spec: Record<string, unknown>;
    }
  ).spec;

const writes = (server: KubeApiServer) =>
  server.requests().filter((r) => r.verb === "patch");

describe("Cluster API driver", () => {
  it("upgrades the KubeadmControlPlane first, then the MachineDeployments, reporting machines updated", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    const log = progressLog();
    const outcome = driver.start(request(), { onProgress: log.onProgress });
    await waitFor(
      () =>
        spec(server, "KubeadmControlPlane", "edge-cp")?.version === "v1.31.2",
    );
    await waitFor(() =>
      log.reports.at(-1)?.message.includes('rolling out "edge-cp"'),
    );
    expect(mdSpec(server).version).toBe("v1.30.5");
    report(server, "KubeadmControlPlane", "edge-cp", {
      ...settled(3, "v1.30.5"),
      updatedReplicas: 1,
    });
    await waitFor(() => log.reports.at(-1)?.percent === 20);
    expect(mdSpec(server).version).toBe("v1.30.5");
    report(server, "KubeadmControlPlane", "edge-cp", settled(3, "v1.31.2"));
    await waitFor(() => mdSpec(server).version === "v1.31.2");
    expect(mdSpec(server).infrastructureRef).toMatchObject({
      name: "workers-v1",
    });
    report(server, "MachineDeployment", "edge-md-0", {
      ...settled(2),
      updatedReplicas: 1,
    });
    await waitFor(() => log.reports.at(-1)?.percent === 80);
    report(server, "MachineDeployment", "edge-md-0", settled(2));
    expect(await outcome).toMatchObject({
      type: "Succeeded",
      facts: {
        kubernetesVersion: "1.31.2",
        nodePools: [
          {
            name: "edge-md-0",
            imageFamily: "DockerMachineTemplate",
            imageVersion: "workers-v1",
          },
        ],
      },
    });
    const percents = log.reports.map((r) => r.percent);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
  });

  it("stops after the control plane for ControlPlaneOnly", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    const outcome = driver.start(request("ControlPlaneOnly"));
    await waitFor(
      () =>
        spec(server, "KubeadmControlPlane", "edge-cp")?.version === "v1.31.2",
    );
    report(server, "KubeadmControlPlane", "edge-cp", settled(3, "v1.31.2"));
    const done = await outcome;
    expect(done).toMatchObject({
      type: "Succeeded",
      facts: {
        nodePools: [{ name: "edge-md-0", kubernetesVersion: "1.30.5" }],
      },
    });
    expect(mdSpec(server).version).toBe("v1.30.5");
  });

  it("switches a MachineDeployment to another machine template for NodeImageOnly", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    const missing = await driver.start({
      run: "images",
      type: "NodeImageOnly",
      target: {
        nodeImages: [
          { pool: "edge-md-0", from: "workers-v1", to: "workers-v9" },
        ],
      },
    });
    expect(missing).toMatchObject({
      reason: "InvalidTarget",
      message: expect.stringContaining(
        'no DockerMachineTemplate of that name in "fleet"',
      ) as string,
    });
    expect(writes(server)).toEqual([]);
    const outcome = driver.start({
      run: "images",
      type: "NodeImageOnly",
      target: {
        nodeImages: [
          { pool: "edge-md-0", from: "workers-v1", to: "workers-v2" },
        ],
      },
    });
    await waitFor(
      () =>
        (mdSpec(server).infrastructureRef as { name: string }).name ===
        "workers-v2",
    );
    expect(mdSpec(server).version).toBe("v1.30.5");
    expect(spec(server, "KubeadmControlPlane", "edge-cp")?.version).toBe(
      "v1.30.5",
    );
    report(server, "MachineDeployment", "edge-md-0", settled(2));
    expect(await outcome).toMatchObject({
      type: "Succeeded",
      facts: { nodePools: [{ imageVersion: "workers-v2" }] },
    });
  });

  it("upgrades a ClusterClass cluster through spec.topology.version and refuses partial types there", async () => {
    await using c = await cluster(true);
    const { server, driver } = c;
    expect(await driver.start(request("ControlPlaneOnly"))).toMatchObject({
      type: "Failed",
      reason: "Unsupported",
    });
    const outcome = driver.start(request());
    await waitFor(
      () =>
        (spec(server, "Cluster", "edge")?.topology as { version: string })
          .version === "v1.31.2",
    );
    expect(spec(server, "Cluster", "edge")?.topology).toEqual({
      class: "quick-start",
      version: "v1.31.2",
    });
    expect(spec(server, "KubeadmControlPlane", "edge-cp")?.version).toBe(
      "v1.30.5",
    );
    // The topology controller rolls the control plane, then the workers.
    server.edit(
      "KubeadmControlPlane",
      NS,
      "edge-cp",
      (o) => {
        (o.spec as { version: string }).version = "v1.31.2";
      },
      "capi-topology",
    );
    report(server, "KubeadmControlPlane", "edge-cp", settled(3, "v1.31.2"));
    server.edit(
      "MachineDeployment",
      NS,
      "edge-md-0",
      (o) => {
        (
          o.spec as { template: { spec: { version: string } } }
        ).template.spec.version = "v1.31.2";
      },
      "capi-topology",
    );
    report(server, "MachineDeployment", "edge-md-0", settled(2));
    expect((await outcome).type).toBe("Succeeded");
    expect(writes(server).map((r) => r.path)).toEqual([
      `/apis/cluster.x-k8s.io/v1beta1/namespaces/${NS}/clusters/edge`,
    ]);
  });

  it("ends Failed with the control plane's failure and refuses skew and closed windows", async () => {
    await using c = await cluster();
    const { server, driver, windows } = c;
    expect(
      await driver.start({
        ...request(),
        target: { kubernetesVersion: "1.32.1" },
      }),
    ).toMatchObject({ reason: "VersionSkew" });
    windows.set({
      kubernetes: [
        { start: "2000-01-01T00:00:00Z", end: "2000-01-02T00:00:00Z" },
      ],
    });
    expect(await driver.start(request())).toMatchObject({
      type: "Pending",
      message: expect.stringContaining("no opening in sight") as string,
    });
    expect(writes(server)).toEqual([]);
    windows.set({});
    const outcome = driver.start(request());
    await waitFor(
      () =>
        spec(server, "KubeadmControlPlane", "edge-cp")?.version === "v1.31.2",
    );
    report(server, "KubeadmControlPlane", "edge-cp", {
      ...settled(3, "v1.30.5"),
      updatedReplicas: 0,
      failureReason: "UpgradeError",
      failureMessage: "etcd member edge-cp-abc did not become healthy",
    });
    expect(await outcome).toEqual({
      type: "Failed",
      reason: "UpgradeFailed",
      message: expect.stringContaining(
        '"edge-cp" failed: UpgradeError: etcd member edge-cp-abc did not become healthy',
      ) as string,
    });
    expect(mdSpec(server).version).toBe("v1.30.5");
  });
});

describe("Cluster API driver: the version catalogue", () => {
  it("offers each pool the machine templates of its template's kind, and no Kubernetes versions", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    server.put(template("workers-v3"));
    const facts = await driver.current();
    expect(await driver.catalogue?.(facts)).toEqual({
      kubernetes: [],
      nodePools: [
        {
          pool: "edge-md-0",
          imageVersions: ["workers-v1", "workers-v2", "workers-v3"],
        },
      ],
    });
  });

  it("cannot tell when the Cluster is gone", async () => {
    await using c = await cluster();
    const facts = await c.driver.current();
    c.server.remove("Cluster", NS, "edge");
    expect(await c.driver.catalogue?.(facts)).toBeUndefined();
  });
});
