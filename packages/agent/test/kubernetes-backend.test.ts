// The Kubernetes backend's `none` upgrade driver and facts, against the local API server in
// @flotilla/testkit (no real cluster exists on the development machines).
import { startKubeApiServer } from "@flotilla/testkit";
import { KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { expect, test } from "vitest";
import { createKubernetesBackend } from "../src/runtime/kubernetes-backend.js";
import { systemClock } from "@flotilla/node";
import { setNode } from "./support/kube-upgrade-fixtures.js";

test("with driver none, upgrades end Failed: Unsupported and nothing is sent to the cluster", async () => {
  await using server = await startKubeApiServer();
  server.put({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "flotilla" },
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(server.kubeconfig());
  await using backend = createKubernetesBackend(
    { kubeConfig, logger: pino({ level: "silent" }), clock: systemClock },
    {
      clusterName: "edge-1",
      namespace: "flotilla",
      windowsConfigMap: "flotilla-agent-windows",
      upgradeDriver: { type: "none" },
    },
  );
  await backend.start();
  const before = server.requests().length;
  for (const type of ["Full", "ControlPlaneOnly", "NodeImageOnly"] as const)
    expect(backend.upgrades.supports(type)).toBe(false);
  const outcome = await backend.upgrades.start({
    run: "upgrade-1.32",
    type: "Full",
    target: { kubernetesVersion: "1.32.0" },
  });
  expect(outcome).toMatchObject({ type: "Failed", reason: "Unsupported" });
  expect(outcome.type === "Failed" && outcome.message).toContain(
    'cluster "edge-1"',
  );
  expect(server.requests().slice(before)).toEqual([]);
});

test("facts: /version's control plane, pools by label or role, no windows when the ConfigMap is absent", async () => {
  await using server = await startKubeApiServer({
    gitVersion: "v1.30.4-eks-1",
  });
  setNode(server, "ip-10-0-0-1", "v1.30.4-eks-1", {
    "eks.amazonaws.com/nodegroup": "general",
  });
  setNode(server, "ip-10-0-0-2", "v1.29.9-eks-1", {
    "eks.amazonaws.com/nodegroup": "general",
  });
  setNode(server, "worker-x", "v1.30.4-eks-1");
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(server.kubeconfig());
  await using backend = createKubernetesBackend(
    { kubeConfig, logger: pino({ level: "silent" }), clock: systemClock },
    {
      clusterName: "edge-1",
      namespace: "flotilla",
      windowsConfigMap: "flotilla-agent-windows",
      labels: { env: "prod" },
      upgradeDriver: { type: "none" },
    },
  );
  await backend.start();
  expect(await backend.facts()).toEqual({
    labels: { env: "prod" },
    kubernetesVersion: "1.30.4",
    nodePools: [
      {
        name: "general",
        imageFamily: "Ubuntu 24.04 LTS",
        imageVersion: "6.8.0-45-generic",
        // The lowest kubelet in the pool, as it differs from the control plane.
        kubernetesVersion: "1.29.9",
      },
      {
        name: "worker",
        imageFamily: "Ubuntu 24.04 LTS",
        imageVersion: "6.8.0-45-generic",
      },
    ],
  });
});
