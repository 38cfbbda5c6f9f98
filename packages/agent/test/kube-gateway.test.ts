import {
  createSimulatedCluster,
  type BundleStatus,
  type SimulatedClusterConfig,
} from "@flotilla/agent";
import { mulberry32, parseSimulatedCluster } from "@flotilla/agent/testing";
import { createManualClock } from "@flotilla/node/testing";
import { MAX_REASONS } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import {
  apply,
  deployments,
  describeKubeGatewayContract,
} from "./support/kube-gateway-contract.js";

function config(raw: Record<string, unknown> = {}): SimulatedClusterConfig {
  const parsed = parseSimulatedCluster({
    name: "sim-1",
    kubernetesVersion: "1.30.5",
    timeToReady: { fixedSeconds: 10 },
    ...raw,
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

async function simulated(raw: Record<string, unknown> = {}, seed = 1) {
  const clock = createManualClock();
  const cluster = createSimulatedCluster(config(raw), {
    clock,
    random: mulberry32(seed),
  });
  await cluster.start();
  const seen: BundleStatus[] = [];
  cluster.kube.watch((s) => seen.push(s));
  return {
    clock,
    cluster,
    kube: cluster.kube,
    phases: (bundle = "web") =>
      seen
        .filter((s) => s.bundle === bundle)
        .map((s) => `${s.phase}@${s.revision}`),
  };
}

describeKubeGatewayContract("simulated cluster", async () => {
  const { clock, cluster } = await simulated();
  return {
    gateway: cluster.kube,
    settle: () => clock.advance(60_000),
    stop: () => cluster.stop(),
  };
});

describe("the simulated gateway", () => {
  it("stays NotReady, listing each object, until exactly the time to ready has passed", async () => {
    const { clock, kube, phases } = await simulated({
      timeToReady: { fixedSeconds: 10 },
    });
    await apply(kube, "1");
    expect(kube.status("web")).toMatchObject({
      phase: "NotReady",
      resources: [
        {
          kind: "Deployment",
          namespace: "default",
          name: "a",
          state: "NotReady",
        },
        {
          kind: "Deployment",
          namespace: "default",
          name: "b",
          state: "NotReady",
        },
      ],
    });
    await clock.advance(9_999);
    expect(kube.status("web")?.phase).toBe("NotReady");
    await clock.advance(1);
    expect(kube.status("web")).toMatchObject({
      phase: "Ready",
      resources: [],
      resourcesTruncated: 0,
    });
    expect(phases()).toEqual([
      "Applying@1",
      "Applied@1",
      "NotReady@1",
      "Ready@1",
    ]);
    expect(clock.pending()).toBe(0);
  });

  it("puts namespaced objects in the request's namespace and cluster-scoped ones in none", async () => {
    const { kube } = await simulated();
    await kube.applyBundle({
      bundle: "web",
      revision: "1",
      namespace: "shop",
      manifests: [
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } },
        { apiVersion: "v1", kind: "Service", metadata: { name: "api" } },
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "api", namespace: "other" },
        },
      ],
    });
    expect(
      kube.status("web")?.resources.map((r) => `${r.namespace}/${r.name}`),
    ).toEqual(["/shop", "shop/api", "other/api"]);
  });

  it("caps per-resource reasons at the protocol's limit and counts the rest", async () => {
    const { kube } = await simulated();
    const names = Array.from(
      { length: MAX_REASONS + 5 },
      (_, i) => `d-${String(i)}`,
    );
    await apply(kube, "1", deployments(...names));
    expect(kube.status("web")).toMatchObject({
      resourceCount: MAX_REASONS + 5,
      resourcesTruncated: 5,
    });
    expect(kube.status("web")?.resources).toHaveLength(MAX_REASONS);
  });

  it("fails every revision of a bundle listed in failures.bundles, leaving nothing applied", async () => {
    const { kube } = await simulated({ failures: { bundles: ["web"] } });
    const status = await apply(kube, "1");
    expect(status).toMatchObject({ phase: "Failed" });
    expect(status.error).toMatch(
      /Cannot apply bundle "web" revision "1" to cluster "sim-1": simulated failure \(failures\.bundles\)/,
    );
    expect(await kube.listBundles()).toEqual([]);
    expect((await apply(kube, "1", deployments("x"), "other")).phase).toBe(
      "Applied",
    );
  });

  it("fails only the listed revision and keeps the previous revision's objects", async () => {
    const { clock, kube } = await simulated({
      failures: { revisions: [{ bundle: "web", revision: "2" }] },
    });
    await apply(kube, "1");
    await clock.advance(10_000);
    const failed = await apply(kube, "2");
    expect(failed.phase).toBe("Failed");
    expect(failed.error).toContain("failures.revisions");
    expect(await kube.listBundles()).toEqual([
      { bundle: "web", revision: "1" },
    ]);
    expect((await apply(kube, "3")).phase).toBe("Applied");
  });

  it("keeps a failed revision's status even when the previous revision becomes Ready afterwards", async () => {
    const { clock, kube } = await simulated({
      failures: { revisions: [{ bundle: "web", revision: "2" }] },
    });
    await apply(kube, "1");
    const failed = await apply(kube, "2");
    await clock.advance(10_000);
    expect(kube.status("web")).toEqual(failed);
    expect(await kube.listBundles()).toEqual([
      { bundle: "web", revision: "1" },
    ]);
  });

  it("fails about the configured share of applies, the same ones for the same seed", async () => {
    const failing = async (
      seed: number,
      applyRate: number,
    ): Promise<string[]> => {
      const { kube } = await simulated({ failures: { applyRate } }, seed);
      const out: string[] = [];
      for (let i = 0; i < 200; i++) {
        const s = await apply(kube, "1", deployments("a"), `b-${String(i)}`);
        if (s.phase === "Failed") out.push(s.bundle);
      }
      return out;
    };
    const a = await failing(5, 0.25);
    expect(a.length).toBeGreaterThan(30);
    expect(a.length).toBeLessThan(70);
    expect(await failing(5, 0.25)).toEqual(a);
    expect(await failing(6, 0.25)).not.toEqual(a);
    expect(await failing(5, 0)).toEqual([]);
    expect(await failing(5, 1)).toHaveLength(200);
  });

  it("never makes a neverReady bundle Ready, while others become Ready", async () => {
    const { clock, kube } = await simulated({
      failures: { neverReady: ["web"] },
    });
    await apply(kube, "1");
    await apply(kube, "1", deployments("x"), "other");
    await clock.advance(24 * 3_600_000);
    expect(kube.status("web")).toMatchObject({ phase: "NotReady" });
    expect(kube.status("web")?.resources[0]?.message).toContain(
      "never to become ready",
    );
    expect(kube.status("other")?.phase).toBe("Ready");
  });

  it("with neverReady: true, no bundle becomes Ready", async () => {
    const { clock, kube } = await simulated({ failures: { neverReady: true } });
    await apply(kube, "1");
    await clock.advance(3_600_000);
    expect(kube.status("web")?.phase).toBe("NotReady");
  });

  it("prunes objects a new revision drops: drift on them is no longer possible", async () => {
    const { clock, kube } = await simulated();
    await apply(kube, "1", deployments("a", "b"));
    await apply(kube, "2", deployments("b", "c"));
    await clock.advance(10_000);
    expect(kube.status("web")).toMatchObject({
      revision: "2",
      phase: "Ready",
      resourceCount: 2,
    });
    expect(kube.drift("web", { kind: "Deployment", name: "a" })).toBe(false);
    expect(kube.drift("web", { kind: "Deployment", name: "c" })).toBe(true);
  });

  it("reports drift on a Ready bundle as Modified with the changed object", async () => {
    const { clock, kube, phases } = await simulated();
    await apply(kube, "1");
    await clock.advance(10_000);
    kube.drift("web", {
      kind: "Deployment",
      name: "b",
      message: "replicas changed from 1 to 3",
    });
    expect(kube.status("web")).toMatchObject({
      phase: "Modified",
      resources: [
        {
          kind: "Deployment",
          name: "b",
          state: "Modified",
          message: "replicas changed from 1 to 3",
        },
      ],
    });
    await apply(kube, "1");
    await clock.advance(10_000);
    expect(phases().slice(-1)).toEqual(["Ready@1"]);
  });

  it("re-applies at once when the bundle asked for correctDrift", async () => {
    const { clock, kube, phases } = await simulated();
    await kube.applyBundle({
      bundle: "web",
      revision: "1",
      manifests: deployments("a"),
      correctDrift: { force: false },
    });
    await clock.advance(10_000);
    kube.drift("web", { kind: "Deployment", name: "a" });
    expect(phases().slice(-2)).toEqual(["Modified@1", "Ready@1"]);
    expect(kube.status("web")?.phase).toBe("Ready");
    // Turned off without a new apply: drift is reported and stays.
    kube.setCorrectDrift("web", undefined);
    kube.drift("web", { kind: "Deployment", name: "a" });
    expect(kube.status("web")?.phase).toBe("Modified");
  });

  it("abandons an apply whose signal aborts: rejects with the reason, previous revision stands, no timers left", async () => {
    const { clock, kube, phases } = await simulated({
      applyDuration: { fixedSeconds: 5 },
    });
    const first = apply(kube, "1");
    await clock.advance(5_000);
    await first;
    await clock.advance(10_000);
    const controller = new AbortController();
    const second = kube.applyBundle(
      { bundle: "web", revision: "2", manifests: deployments("z") },
      { signal: controller.signal },
    );
    await clock.advance(2_000);
    controller.abort(new Error("newer intent"));
    await expect(second).rejects.toThrow("newer intent");
    expect(kube.status("web")).toMatchObject({ revision: "1", phase: "Ready" });
    expect(await kube.listBundles()).toEqual([
      { bundle: "web", revision: "1" },
    ]);
    expect(phases().slice(-2)).toEqual(["Applying@2", "Ready@1"]);
    expect(clock.pending()).toBe(0);
  });

  it("forgets a first apply that was aborted", async () => {
    const { clock, kube } = await simulated({
      applyDuration: { fixedSeconds: 5 },
    });
    const controller = new AbortController();
    const applying = kube.applyBundle(
      { bundle: "web", revision: "1", manifests: deployments("a") },
      { signal: controller.signal },
    );
    await clock.advance(1_000);
    controller.abort(new Error("shutting down"));
    await expect(applying).rejects.toThrow("shutting down");
    expect(kube.status("web")).toBeUndefined();
  });

  it("stops readiness timers on removal", async () => {
    const { clock, kube } = await simulated();
    await apply(kube, "1");
    expect(clock.pending()).toBe(1);
    await kube.removeBundle("web");
    expect(clock.pending()).toBe(0);
  });

  it("rejects in-flight applies when the cluster stops and refuses calls afterwards", async () => {
    const { clock, cluster, kube } = await simulated({
      applyDuration: { fixedSeconds: 5 },
    });
    const applying = apply(kube, "1");
    await clock.advance(1_000);
    await cluster.stop();
    await expect(applying).rejects.toMatchObject({ code: "unavailable" });
    await expect(apply(kube, "2")).rejects.toMatchObject({
      code: "unavailable",
      message: 'Cannot use simulated cluster "sim-1": it is stopped',
    });
    expect(clock.pending()).toBe(0);
  });

  it("refuses work before start", async () => {
    const cluster = createSimulatedCluster(config(), {
      clock: createManualClock(),
      random: mulberry32(1),
    });
    await expect(apply(cluster.kube, "1")).rejects.toMatchObject({
      code: "failed_precondition",
    });
  });
});
