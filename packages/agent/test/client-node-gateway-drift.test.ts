/**
 * Drift correction (docs/agent.md#drift-correction) and namespace labels and annotations
 * (docs/bundles.md#namespace-labels-and-annotations) of the client-node gateway, against the
 * local Kubernetes API server: hand edits restored with correctDrift and left without it, other
 * server-side appliers overridden only with force, immutable fields re-created with force, the
 * back-off of a correction that keeps failing (manual clock), and the namespace's metadata
 * created, changed and removed under the bundle's own field manager.
 */
import type { Manifest } from "@flotilla/agent";
import { createAgentMetrics } from "@flotilla/agent";
import { createManualClock } from "@flotilla/node/testing";
import {
  waitFor,
  type JsonObject,
  type KubeApiServer,
} from "@flotilla/testkit";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  meta,
  rollOutDeployments,
  setup,
} from "./support/client-node-setup.js";
import { deployments } from "./support/kube-gateway-contract.js";

const replicasOf = (server: KubeApiServer, name: string): unknown =>
  (server.object("Deployment", "default", name)?.spec as JsonObject | undefined)
    ?.replicas;

/** Applies by the agent's own field manager to one Deployment. */
const agentPatches = (server: KubeApiServer, name: string): number =>
  server
    .requests()
    .filter(
      (r) =>
        r.verb === "patch" &&
        r.path.endsWith(`/deployments/${name}`) &&
        r.query.includes("fieldManager=flotilla-agent&") &&
        !r.query.includes("dryRun"),
    ).length;

function corrections() {
  const seen: string[] = [];
  return {
    seen,
    record: (bundle: string, result: "ok" | "error") => {
      seen.push(`${bundle}:${result}`);
    },
  };
}

describe("drift correction", () => {
  it("restores a hand edit with correctDrift, leaves it Modified without, and can be switched on without an apply", async () => {
    const counted = corrections();
    await using s = await setup({ onDriftCorrection: counted.record });
    await s.gateway.applyBundle({
      bundle: "web",
      revision: "1",
      manifests: deployments("a"),
      correctDrift: { force: false },
    });
    await s.gateway.applyBundle({
      bundle: "api",
      revision: "1",
      manifests: deployments("b"),
    });
    rollOutDeployments(s.server);
    await waitFor(
      () =>
        s.gateway.status("web")?.phase === "Ready" &&
        s.gateway.status("api")?.phase === "Ready",
    );
    const edit = (name: string, replicas: number) => {
      s.server.edit("Deployment", "default", name, (d) => {
        (d.spec as JsonObject).replicas = replicas;
      });
    };
    edit("a", 3);
    edit("b", 3);
    await waitFor(
      () => replicasOf(s.server, "a") === 1 && counted.seen.length === 1,
      { message: "the hand edit of a to be restored" },
    );
    expect(counted.seen).toEqual(["web:ok"]);
    // Without correctDrift the drift is reported and stays, however often it changes.
    await waitFor(() => s.gateway.status("api")?.phase === "Modified");
    edit("b", 4);
    await waitFor(() =>
      s.gateway
        .status("api")
        ?.resources[0]?.message?.includes("spec.replicas changed from 1 to 4"),
    );
    expect(replicasOf(s.server, "b")).toBe(4);
    const applies = agentPatches(s.server, "b");
    expect(applies).toBe(1); // the apply of revision 1, nothing since
    // Switched on without a new revision: restored, no Applying.
    const before = s.phases("api").length;
    s.gateway.setCorrectDrift("api", { force: false });
    await waitFor(() => replicasOf(s.server, "b") === 1);
    rollOutDeployments(s.server);
    await waitFor(() => s.gateway.status("api")?.phase === "Ready");
    expect(s.phases("api").slice(before)).not.toContain("Applying@1");
    expect(counted.seen).toEqual(["web:ok", "api:ok"]);
  });

  it("overrides another server-side applier only with force, saying so until then", async () => {
    const counted = corrections();
    await using s = await setup({
      onDriftCorrection: counted.record,
      driftBackoff: { initialMs: 20, maxMs: 40 },
    });
    await s.gateway.applyBundle({
      bundle: "web",
      revision: "1",
      manifests: deployments("a"),
      correctDrift: { force: false },
    });
    rollOutDeployments(s.server);
    await waitFor(() => s.gateway.status("web")?.phase === "Ready");
    s.server.put(
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "a", namespace: "default" },
        spec: { replicas: 5 },
      },
      "other-tool",
    );
    await waitFor(() =>
      s.gateway.status("web")?.message?.includes('conflict with "other-tool"'),
    );
    expect(s.gateway.status("web")).toMatchObject({ phase: "Modified" });
    expect(s.gateway.status("web")?.message).toMatch(
      // Retries come every 20–40 ms here, so a loaded machine may see a later attempt first.
      /^Cannot correct drift of Deployment default\/a \(\d+ attempts?, next in 1s\): .*correctDrift\.force takes them/,
    );
    expect(replicasOf(s.server, "a")).toBe(5);
    expect(counted.seen[0]).toBe("web:error");

    s.gateway.setCorrectDrift("web", { force: true });
    await waitFor(() => replicasOf(s.server, "a") === 1, {
      message: "the other applier's field to be taken with force",
    });
    rollOutDeployments(s.server);
    await waitFor(() => s.gateway.status("web")?.phase === "Ready");
    expect(s.gateway.status("web")?.message).toBeUndefined();
    expect(counted.seen.at(-1)).toBe("web:ok");
    const managers = (
      meta(s.server.object("Deployment", "default", "a"))
        .managedFields as JsonObject[]
    ).map((m) => m.manager);
    expect(managers).toContain("flotilla-agent");
  });

  it("with force, deletes and re-creates an object whose restore changes an immutable field", async () => {
    await using s = await setup();
    s.server.immutable("Deployment", "spec.selector");
    const manifest: Manifest = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "a" },
      spec: { replicas: 1, selector: { matchLabels: { app: "a" } } },
    };
    await s.gateway.applyBundle({
      bundle: "web",
      revision: "1",
      manifests: [manifest],
      correctDrift: { force: true },
    });
    rollOutDeployments(s.server);
    await waitFor(() => s.gateway.status("web")?.phase === "Ready");
    const uid = meta(s.server.object("Deployment", "default", "a")).uid;
    // Someone re-created it with another selector (the only way to change one).
    s.server.remove("Deployment", "default", "a");
    s.server.put(
      {
        ...manifest,
        metadata: { name: "a", namespace: "default" },
        spec: { replicas: 1, selector: { matchLabels: { app: "other" } } },
      },
      "other-tool",
    );
    await waitFor(
      () => {
        const live = s.server.object("Deployment", "default", "a");
        return (
          JSON.stringify((live?.spec as JsonObject | undefined)?.selector) ===
          JSON.stringify({ matchLabels: { app: "a" } })
        );
      },
      { message: "the object to be re-created with the applied selector" },
    );
    expect(meta(s.server.object("Deployment", "default", "a")).uid).not.toBe(
      uid,
    );
    expect(
      s.server
        .requests()
        .some((r) => r.verb === "delete" && r.path.endsWith("/deployments/a")),
    ).toBe(true);
  });

  it("backs off a correction that keeps failing, saying how often it tried and when it tries next", async () => {
    const clock = createManualClock();
    const counted = corrections();
    await using s = await setup({
      clock,
      onDriftCorrection: counted.record,
      driftBackoff: { initialMs: 1_000, maxMs: 4_000 },
    });
    await s.gateway.applyBundle({
      bundle: "web",
      revision: "1",
      manifests: deployments("a"),
      correctDrift: { force: true },
    });
    rollOutDeployments(s.server);
    await waitFor(() => s.gateway.status("web")?.phase === "Ready");
    // An admission policy refuses the agent's writes from now on.
    s.server.forbid("patch", "deployments");
    s.server.edit("Deployment", "default", "a", (d) => {
      (d.spec as JsonObject).replicas = 2;
    });
    const expectAttempt = async (n: number, next: string) => {
      await waitFor(
        () =>
          s.gateway
            .status("web")
            ?.message?.startsWith(
              `Cannot correct drift of Deployment default/a (${String(n)} attempt${n === 1 ? "" : "s"}, next in ${next}): `,
            ),
        { message: `attempt ${String(n)}` },
      );
      // One write per attempt: no retries in between.
      expect(agentPatches(s.server, "a")).toBe(1 + n);
      expect(counted.seen).toEqual(Array<string>(n).fill("web:error"));
    };
    await expectAttempt(1, "1s");
    expect(s.gateway.status("web")).toMatchObject({ phase: "Modified" });
    expect(s.gateway.status("web")?.message).toContain("is forbidden");
    await clock.advance(1_000);
    await expectAttempt(2, "2s");
    await clock.advance(2_000);
    await expectAttempt(3, "4s");
    await clock.advance(4_000);
    await expectAttempt(4, "4s"); // the cap
    // Allowed again: the next attempt restores it and the message goes.
    s.server.allow("patch", "deployments");
    await clock.advance(4_000);
    await waitFor(() => replicasOf(s.server, "a") === 1);
    rollOutDeployments(s.server);
    await waitFor(() => s.gateway.status("web")?.phase === "Ready");
    expect(s.gateway.status("web")?.message).toBeUndefined();
    expect(counted.seen.at(-1)).toBe("web:ok");
  });

  it("counts corrections in flotilla_agent_drift_corrections_total by bundle and result", async () => {
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    metrics.driftCorrected("web", "ok");
    metrics.driftCorrected("web", "ok");
    metrics.driftCorrected("web", "error");
    const text = await registry.metrics();
    expect(text).toContain(
      'flotilla_agent_drift_corrections_total{bundle="web",result="ok"} 2',
    );
    expect(text).toContain(
      'flotilla_agent_drift_corrections_total{bundle="web",result="error"} 1',
    );
  });
});

describe("namespace labels and annotations", () => {
  const nsOf = (server: KubeApiServer) =>
    meta(server.object("Namespace", "", "shop"));

  it("creates the namespace with them, and removes an entry fleet.yaml drops, keeping others' labels", async () => {
    await using s = await setup();
    const apply = (
      revision: string,
      labels?: Record<string, string>,
      annotations?: Record<string, string>,
    ) =>
      s.gateway.applyBundle({
        bundle: "web",
        revision,
        manifests: deployments("a"),
        namespace: "shop",
        ...(labels === undefined ? {} : { namespaceLabels: labels }),
        ...(annotations === undefined
          ? {}
          : { namespaceAnnotations: annotations }),
      });
    const first = await apply(
      "1",
      { team: "web", tier: "front" },
      { "example.com/owner": "web team" },
    );
    expect(first.phase).toBe("Applied");
    expect(nsOf(s.server)).toMatchObject({
      labels: { team: "web", tier: "front" },
      annotations: { "example.com/owner": "web team" },
    });
    expect(s.server.object("Deployment", "shop", "a")).toBeDefined();
    // Someone else labels the namespace by hand: not the bundle's to remove.
    s.server.edit("Namespace", "", "shop", (n) => {
      ((n.metadata as JsonObject).labels as JsonObject).audit = "yes";
    });

    expect((await apply("2", { team: "web" })).phase).toBe("Applied");
    expect(nsOf(s.server).labels).toEqual({ team: "web", audit: "yes" });
    expect(nsOf(s.server).annotations ?? {}).toEqual({});

    expect((await apply("3")).phase).toBe("Applied");
    expect(nsOf(s.server).labels).toEqual({ audit: "yes" });
    const managers = (nsOf(s.server).managedFields as JsonObject[]).map(
      (m) => m.manager,
    );
    expect(managers).not.toContain("flotilla-agent.web");

    // Removing the bundle leaves the namespace.
    await s.gateway.removeBundle("web");
    expect(s.server.object("Namespace", "", "shop")).toBeDefined();
  });

  it("merges them into the bundle's own Namespace object", async () => {
    await using s = await setup();
    const applied = await s.gateway.applyBundle({
      bundle: "web",
      revision: "1",
      manifests: [
        {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "shop", labels: { tier: "own" } },
        },
        ...deployments("a"),
      ],
      namespace: "shop",
      namespaceLabels: { team: "web", tier: "fleet" },
    });
    expect(applied.error).toBeUndefined();
    expect(nsOf(s.server).labels).toEqual({
      team: "web",
      tier: "own",
      "flotilla.dev/bundle": "web",
    });
    const managers = (nsOf(s.server).managedFields as JsonObject[]).map(
      (m) => m.manager,
    );
    expect(managers).toEqual(["flotilla-agent"]);
  });
});
