/**
 * The client-node gateway against the testkit's local Kubernetes API server (no real cluster or
 * Docker here): the shared KubeGateway contract, then apply order with the CRD wait, prune,
 * foreign objects, readiness per kind, drift, RBAC and conflict failures, refusals before
 * anything is sent, removal, and listBundles from a fresh gateway.
 */
import {
  createClientNodeGateway,
  loadKubeConfig,
  type Manifest,
} from "@flotilla/agent";
import { systemClock } from "@flotilla/node";
import { waitFor, type JsonObject } from "@flotilla/testkit";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import {
  apply,
  deployments,
  describeKubeGatewayContract,
} from "./support/kube-gateway-contract.js";
import { AGENT_NS, meta, settled, setup } from "./support/client-node-setup.js";

describeKubeGatewayContract("client-node gateway", async () => {
  const s = await setup();
  const bundles = new Set<string>();
  s.gateway.watch((status) => bundles.add(status.bundle));
  return {
    gateway: s.gateway,
    settle: () => settled(s.server, s.gateway, () => [...bundles]),
    stop: async () => {
      await s[Symbol.asyncDispose]();
    },
  };
});

const crd: Manifest = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { kind: "Widget", plural: "widgets" },
    versions: [{ name: "v1", served: true, storage: true }],
  },
};

describe("the client-node gateway", () => {
  it("applies CRDs first and waits until they are Established, then namespaces, then the rest", async () => {
    await using s = await setup({ crdEstablishment: "manual" });
    const applying = s.gateway.applyBundle({
      bundle: "web",
      revision: "1",
      namespace: "shop",
      manifests: [
        {
          apiVersion: "example.com/v1",
          kind: "Widget",
          metadata: { name: "w" },
          spec: { size: 3 },
        },
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "settings" },
          data: { a: "1" },
        },
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } },
        crd,
      ],
    });
    await waitFor(() =>
      s.server.object("CustomResourceDefinition", "", "widgets.example.com"),
    );
    expect(s.server.object("Namespace", "", "shop")).toBeUndefined();
    s.server.establishCrd("widgets.example.com");
    expect(await applying).toMatchObject({
      phase: "Applied",
      resourceCount: 4,
    });
    const writes = s.server
      .requests()
      .filter(
        (r) =>
          r.method === "PATCH" &&
          !r.query.includes("dryRun") &&
          !r.path.includes(AGENT_NS),
      );
    expect(writes.map((r) => r.path)).toEqual([
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
      "/api/v1/namespaces/shop",
      "/apis/example.com/v1/namespaces/shop/widgets/w",
      "/api/v1/namespaces/shop/configmaps/settings",
    ]);
    expect(meta(s.server.object("Widget", "shop", "w")).labels).toEqual({
      "flotilla.dev/bundle": "web",
    });
    expect(
      meta(s.server.object("Widget", "shop", "w")).managedFields,
    ).toMatchObject([{ manager: "flotilla-agent", operation: "Apply" }]);
  });

  it("fails a revision whose CRD never becomes Established, naming it", async () => {
    await using s = await setup({ crdEstablishment: "manual" });
    const gateway = createClientNodeGateway(
      {
        kubeConfig: loadKubeConfig({ kubeconfig: s.kubeconfig }),
        logger: pino({ level: "silent" }),
        clock: systemClock,
      },
      { namespace: AGENT_NS, crdTimeoutMs: 100, pollIntervalMs: 10 },
    );
    await gateway.start();
    const status = await gateway.applyBundle({
      bundle: "crds",
      revision: "1",
      manifests: [crd],
    });
    await gateway.stop();
    expect(status.phase).toBe("Failed");
    expect(status.error).toContain(
      "CustomResourceDefinition widgets.example.com was not Established within 100 ms",
    );
  });

  it("prunes objects a new revision drops and never touches objects outside the inventory", async () => {
    await using s = await setup();
    s.server.put({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: "foreign",
        namespace: "default",
        labels: { "flotilla.dev/bundle": "web" },
      },
      spec: { replicas: 1 },
    });
    await apply(s.gateway, "1", deployments("a", "b"));
    expect((await apply(s.gateway, "2", deployments("b", "c"))).phase).toBe(
      "Applied",
    );
    const names = s.server
      .objects("Deployment")
      .map((d) => meta(d).name)
      .sort();
    expect(names).toEqual(["b", "c", "foreign"]);
    const inventory = s.server.object(
      "ConfigMap",
      AGENT_NS,
      "flotilla-inventory-web",
    );
    expect(inventory?.data).toMatchObject({ bundle: "web", revision: "2" });
    expect(JSON.parse(String((inventory?.data as JsonObject).objects))).toEqual(
      [
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          namespace: "default",
          name: "b",
        },
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          namespace: "default",
          name: "c",
        },
      ],
    );
    await s.gateway.removeBundle("web");
    expect(s.server.objects("Deployment").map((d) => meta(d).name)).toEqual([
      "foreign",
    ]);
    expect(
      s.server.object("ConfigMap", AGENT_NS, "flotilla-inventory-web"),
    ).toBeUndefined();
  });

  it("does not prune an object another bundle took over", async () => {
    await using s = await setup();
    await apply(s.gateway, "1", deployments("a", "shared"));
    await apply(s.gateway, "1", deployments("shared"), "other");
    await apply(s.gateway, "2", deployments("a"));
    expect(
      s.server
        .objects("Deployment")
        .map((d) => meta(d).name)
        .sort(),
    ).toEqual(["a", "shared"]);
  });

  it("lists bundles from the inventories after a restart", async () => {
    await using s = await setup();
    await apply(s.gateway, "3", deployments("a"));
    await apply(s.gateway, "7", deployments("x"), "api");
    const restarted = await s.restart();
    expect(await restarted.listBundles()).toEqual([
      { bundle: "api", revision: "7" },
      { bundle: "web", revision: "3" },
    ]);
    expect(restarted.status("web")).toBeUndefined();
    await restarted.removeBundle("api");
    expect(await s.gateway.listBundles()).toEqual([
      { bundle: "web", revision: "3" },
    ]);
  });

  it("refuses a malformed or oversized revision before sending anything, keeping the inventory", async () => {
    await using s = await setup();
    await apply(s.gateway, "1", deployments("a"));
    const before = s.server.requests().length;
    const bad = await apply(s.gateway, "2", [
      ...deployments("a"),
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "big" },
        data: { blob: "x".repeat(1_100_000) },
      },
      { apiVersion: "v1", kind: "ConfigMap", metadata: {} },
    ]);
    expect(bad.phase).toBe("Failed");
    expect(bad.error).toContain('Cannot apply bundle "web" revision "2"');
    expect(bad.error).toMatch(
      /manifests\[1\]: is \d+ bytes, over the limit of 1048576/,
    );
    expect(bad.error).toContain(
      "manifests[2].metadata.name: must be a non-empty string",
    );
    expect(s.server.requests().slice(before)).toEqual([]);
    expect(await s.gateway.listBundles()).toEqual([
      { bundle: "web", revision: "1" },
    ]);
  });

  it("refuses kinds the cluster does not serve, sending only discovery reads", async () => {
    await using s = await setup();
    const before = s.server.requests().length;
    const status = await apply(s.gateway, "1", [
      ...deployments("a"),
      { apiVersion: "example.com/v1", kind: "Gadget", metadata: { name: "g" } },
    ]);
    expect(status.error).toContain(
      'kind "Gadget" of "example.com/v1" is not served by the cluster',
    );
    expect(
      s.server
        .requests()
        .slice(before)
        .every((r) => r.method === "GET"),
    ).toBe(true);
    expect(s.server.objects("Deployment")).toEqual([]);
  });

  it("fails with the API server's reason when RBAC forbids an object, changing nothing", async () => {
    await using s = await setup();
    await apply(s.gateway, "1", deployments("a"));
    s.server.forbid("patch", "services");
    const status = await apply(s.gateway, "2", [
      ...deployments("a", "b"),
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "api" },
        spec: { ports: [{ port: 80 }] },
      },
    ]);
    expect(status.phase).toBe("Failed");
    expect(status.error).toContain(
      "Cannot apply Service default/api: Forbidden (403)",
    );
    expect(status.error).toContain('cannot patch resource "services"');
    expect(s.server.objects("Deployment").map((d) => meta(d).name)).toEqual([
      "a",
    ]);
    expect(await s.gateway.listBundles()).toEqual([
      { bundle: "web", revision: "1" },
    ]);
    s.server.allow("patch", "services");
    expect((await apply(s.gateway, "3", deployments("a"))).phase).toBe(
      "Applied",
    );
  });

  it("fails on a field another manager owns unless force is set", async () => {
    await using s = await setup();
    await apply(s.gateway, "1", deployments("a"));
    s.server.edit("Deployment", "default", "a", (d) => {
      (d.spec as JsonObject).replicas = 4;
    });
    const refused = await apply(s.gateway, "2", deployments("a"));
    expect(refused.phase).toBe("Failed");
    expect(refused.error).toContain(
      'Cannot apply Deployment default/a: Conflict (409): Apply failed with 1 conflict: conflict with "kubectl-edit": .spec.replicas',
    );
    await using forced = await setup({ force: true });
    await apply(forced.gateway, "1", deployments("a"));
    forced.server.edit("Deployment", "default", "a", (d) => {
      (d.spec as JsonObject).replicas = 4;
    });
    expect((await apply(forced.gateway, "2", deployments("a"))).phase).toBe(
      "Applied",
    );
    expect(
      (forced.server.object("Deployment", "default", "a")?.spec as JsonObject)
        .replicas,
    ).toBe(1);
  });
});

describe("loadKubeConfig", () => {
  it("refuses a kubeconfig path that cannot be read, naming it", () => {
    expect(() =>
      loadKubeConfig({ kubeconfig: "/nonexistent/kubeconfig" }),
    ).toThrow(/Cannot load kubeconfig "\/nonexistent\/kubeconfig"/);
  });

  it("refuses in-cluster configuration without a service account token", () => {
    expect(() => loadKubeConfig({ tokenPath: "/nonexistent/token" })).toThrow(
      'Cannot load the in-cluster Kubernetes configuration: no service account token at "/nonexistent/token"',
    );
  });
});
