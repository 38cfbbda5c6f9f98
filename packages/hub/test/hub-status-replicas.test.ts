/**
 * What an operator sees of two replicas on one NATS. GetHubStatus (`flotilla hub status`): each
 * replica answers with both, the agent sessions and leases each holds, and the hub's JetStream
 * streams with their replica counts. Metrics: the leases a replica holds, the units it took over
 * from a replica that stopped renewing (a new unit is no takeover), and the commands and reports
 * it forwarded to the owner. Audit: a run taken from another replica is recorded. GetUpdateRun
 * names the replica driving the run.
 */
import { parseUpdateStrategy } from "@flotilla/core";
import { createManualClock } from "@flotilla/node/testing";
import { callUnary } from "@flotilla/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import { TAKEOVER_METHOD } from "../src/audit/takeover-audit.js";
import { startHubGauges } from "../src/metrics/metrics-observer.js";
import { rendezvousScore } from "../src/leases/rendezvous.js";
import {
  startJetStreamHub,
  type JetStreamHub,
} from "./jetstream-hub-harness.js";

const TTL = 1_500;

let server: NatsServer;

// A server per test: every replica of a test shares its buckets, and nothing leaks between tests.
beforeEach(async () => {
  server = await startNatsServer();
});

afterEach(async () => {
  await server.stop();
});

describe("hub status of replicas", () => {
  it("names both replicas through either, with the leases each holds and the streams", async () => {
    await using a = await startJetStreamHub(server, {
      replica: { id: "hub-a", leaseTtlMs: 1_500 },
    });
    await using b = await startJetStreamHub(server, {
      replica: { id: "hub-b", leaseTtlMs: 1_500 },
    });
    await a.hub.registry.connect("prod-01", "1.0.0", {
      labels: {},
      kubernetesVersion: "1.29.9",
      nodePools: [],
    });
    // Both replicas see each other once a lease round has run on each since the other started.
    await waitFor(
      () =>
        [a, b].every((h) => h.hub.leases?.replicas().length === 2) &&
        [a, b].some((h) => h.hub.leases?.held("bundles") !== undefined),
      { timeoutMs: 10_000 },
    );
    const bundlesOwner =
      a.hub.leases?.held("bundles") === undefined ? "hub-b" : "hub-a";

    // A replica's record says what it held at its last lease round: hub-b reports hub-a's
    // leases and sessions once hub-a wrote them and hub-b read them.
    const status = await waitFor(
      async () => {
        const answer = await callUnary(b.admin, "getHubStatus", {});
        const owner = answer.replicas.find((r) => r.id === bundlesOwner);
        const first = answer.replicas.find((r) => r.id === "hub-a");
        return owner?.leases.includes("bundles") === true &&
          first?.sessions === 1
          ? answer
          : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(status.replica).toBe("hub-b");
    expect(status.replicas.map((r) => r.id)).toEqual(["hub-a", "hub-b"]);
    const byId = new Map(status.replicas.map((r) => [r.id, r]));
    expect(byId.get("hub-b")).toMatchObject({
      address: "hub-b",
      version: "test",
      eligible: true,
      sessions: 0,
    });
    const other = bundlesOwner === "hub-a" ? "hub-b" : "hub-a";
    expect(byId.get(other)?.leases).not.toContain("bundles");
    expect(Number(byId.get("hub-a")?.seenAtMs)).toBeGreaterThan(0);
    expect(Number(byId.get("hub-a")?.startedAtMs)).toBeGreaterThan(0);

    const names = status.streams.map((s) => s.name);
    expect(names).toContain("KV_flotilla-runs");
    expect(names).toContain("KV_flotilla-leases");
    for (const stream of status.streams) {
      expect(stream.error, stream.name).toBe("");
      expect(stream.replicas, stream.name).toBe(1);
    }
  });
});

const strategy = (() => {
  const parsed = parseUpdateStrategy({
    stages: [
      {
        name: "prod",
        memberSelector: { byLabel: "env=prod" },
        maxConcurrency: 1,
      },
    ],
  });
  if (!parsed.ok) throw new Error("strategy");
  return parsed.value;
})();

async function createRun(hub: JetStreamHub, name: string): Promise<void> {
  await hub.hub.runs.create({
    name,
    strategy,
    payload: {
      kind: "upgrade",
      upgrade: {
        type: "Full",
        kubernetesVersion: "1.30.3",
        nodeImageSelection: "Latest",
      },
    },
  });
}

async function connectCluster(hub: JetStreamHub, name: string): Promise<void> {
  await hub.hub.registry.connect(name, "1.0.0", {
    labels: { env: "prod" },
    kubernetesVersion: "1.29.9",
    nodePools: [],
  });
}

/** A run name whose lease `id` is preferred for among `ids`. */
function nameOwnedBy(id: string, ids: readonly string[], base: string): string {
  for (let i = 0; ; i++) {
    const name = `${base}-${String(i)}`;
    const scores = ids.map((r) => rendezvousScore(`run/${name}`, r));
    if (Math.max(...scores) === rendezvousScore(`run/${name}`, id)) return name;
  }
}

/** Refreshes `hub`'s state gauges once, as the interval does. */
function refreshGauges(hub: JetStreamHub): void {
  const gauges = startHubGauges(hub.hub, hub.metrics, { intervalMs: 60_000 });
  gauges.stop();
}

describe("replica metrics", () => {
  it("counts the leases held and the commands and reports forwarded to the owner; a new run is no takeover", async () => {
    await using a = await startJetStreamHub(server, {
      replica: { id: "hub-p", leaseTtlMs: TTL },
    });
    await connectCluster(a, "prod-01");
    await a.hub.registry.flush();
    await using b = await startJetStreamHub(server, {
      replica: { id: "hub-q", leaseTtlMs: TTL },
    });
    await waitFor(() =>
      [a, b].every((h) => h.hub.leases?.replicas().length === 2),
    );
    const name = nameOwnedBy("hub-q", ["hub-p", "hub-q"], "metrics");
    await createRun(a, name);
    await waitFor(() => b.hub.runs.owns(name), { timeoutMs: 10_000 });
    // Either replica names the run's owner (hub-p once a lease round showed it the holder).
    expect(
      (await callUnary(b.admin, "getUpdateRun", { name })).ownerReplica,
    ).toBe("hub-q");
    await waitFor(
      async () =>
        (await callUnary(a.admin, "getUpdateRun", { name })).ownerReplica ===
        "hub-q",
      { timeoutMs: 10_000 },
    );

    refreshGauges(b);
    expect(await b.sample('flotilla_hub_leases_held{kind="run"}')).toBe(1);
    expect(
      await b.sample('flotilla_hub_lease_takeovers_total{kind="run"}'),
    ).toBe(0);
    refreshGauges(a);
    expect(await a.sample('flotilla_hub_leases_held{kind="run"}')).toBe(0);

    expect(await a.sample('flotilla_hub_forwarded_total{kind="command"}')).toBe(
      0,
    );
    await a.hub.runs.command(name, {
      type: "StartRun",
      actor: "test",
      reason: "",
    });
    expect(await a.sample('flotilla_hub_forwarded_total{kind="command"}')).toBe(
      1,
    );
    expect(await b.sample('flotilla_hub_forwarded_total{kind="command"}')).toBe(
      0,
    );

    // The agent of prod-01 is connected to hub-p: its report goes on to hub-q.
    await waitFor(
      () =>
        a.hub.runs.get(name).run.stages[0]?.groups[0]?.members[0]?.state ===
        "Running",
    );
    const { intent } = await a.hub.intents.current("prod-01");
    a.hub.runs.memberReport("prod-01", name, {
      sequence: 1,
      generation: intent.generation,
      subject: { kind: "upgrade", upgradeId: name },
      phase: "Ready",
      reasons: [],
      reasonsTruncated: 0,
      observedAtMs: Date.now(),
    });
    expect(await a.sample('flotilla_hub_forwarded_total{kind="report"}')).toBe(
      1,
    );
  });

  it("counts the units taken from a replica that stopped renewing, by kind", async () => {
    // hub-r's lease clock never moves: it renews nothing after its first round, as if paused.
    const paused = createManualClock(Date.now());
    await using a = await startJetStreamHub(server, {
      replica: { id: "hub-r", leaseTtlMs: TTL },
      clock: paused,
    });
    await connectCluster(a, "prod-01");
    await createRun(a, "taken");
    expect(a.hub.runs.owns("taken")).toBe(true);
    await a.hub.registry.flush();
    await using b = await startJetStreamHub(server, {
      replica: { id: "hub-s", leaseTtlMs: TTL },
    });
    await waitFor(
      () =>
        b.hub.runs.owns("taken") && b.hub.leases?.held("bundles") !== undefined,
      { timeoutMs: 15_000 },
    );
    expect(
      await b.sample('flotilla_hub_lease_takeovers_total{kind="run"}'),
    ).toBe(1);
    expect(
      await b.sample('flotilla_hub_lease_takeovers_total{kind="bundles"}'),
    ).toBe(1);
    refreshGauges(b);
    expect(await b.sample('flotilla_hub_leases_held{kind="run"}')).toBe(1);
    expect(await b.sample('flotilla_hub_leases_held{kind="bundles"}')).toBe(1);
  });

  it("records a run taken from another replica in the audit log", async () => {
    const paused = createManualClock(Date.now());
    await using a = await startJetStreamHub(server, {
      replica: { id: "hub-t", leaseTtlMs: TTL },
      clock: paused,
    });
    await connectCluster(a, "prod-01");
    await createRun(a, "audited");
    expect(a.hub.runs.owns("audited")).toBe(true);
    await a.hub.registry.flush();
    await using b = await startJetStreamHub(server, {
      replica: { id: "hub-u", leaseTtlMs: TTL },
    });
    await waitFor(() => b.hub.runs.owns("audited"), { timeoutMs: 15_000 });
    const epoch = b.hub.leases?.held("run/audited")?.epoch;
    const events = await waitFor(async () => {
      const page = await b.audit.list({ method: TAKEOVER_METHOD });
      return page.events.length > 0 ? page.events : undefined;
    });
    // hub-t took the run first, when it was new: that is no takeover.
    expect(events).toEqual([
      expect.objectContaining({
        actor: "hub/hub-u",
        method: TAKEOVER_METHOD,
        targetKind: "UpdateRun",
        targetName: "audited",
        outcome: "Succeeded",
        message: `replica hub-u took the run over from replica hub-t with lease epoch ${String(epoch)}`,
      }),
    ]);
  });
});
