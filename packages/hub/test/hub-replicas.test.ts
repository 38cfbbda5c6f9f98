/**
 * Two hub replicas on one NATS (docs/high-availability.md), in this process: each run has one
 * owner; commands and agent reports that reach the other replica take effect on the owner; the
 * other replica's copy follows the journal; a replica that stops hands its runs over at once; one
 * that stops renewing loses them to the other after the lease TTL, and what it writes after that
 * does not land.
 */
import { randomBytes } from "node:crypto";
import { parseUpdateStrategy, type Run } from "@flotilla/core";
import type { StatusReport } from "@flotilla/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import { createManualClock } from "@flotilla/node/testing";
import { rendezvousScore } from "../src/leases/rendezvous.js";
import { RUN_LOG } from "../src/runs/run-log.js";
import {
  startJetStreamHub,
  type JetStreamHub,
} from "./jetstream-hub-harness.js";

const CLUSTERS = ["prod-01", "prod-02", "prod-03"];
const TTL = 1_500;

let server: NatsServer;

// A server per test: every replica of a test shares its buckets, and nothing leaks between tests.
beforeEach(async () => {
  server = await startNatsServer();
});

afterEach(async () => {
  await server.stop();
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

/** A run name whose lease `id` is preferred for among `ids`. */
function nameOwnedBy(id: string, ids: readonly string[], base: string): string {
  for (let i = 0; ; i++) {
    const name = `${base}-${String(i)}`;
    const scores = ids.map((r) => rendezvousScore(`run/${name}`, r));
    if (Math.max(...scores) === rendezvousScore(`run/${name}`, id)) return name;
  }
}

async function connectClusters(hub: JetStreamHub): Promise<void> {
  for (const name of CLUSTERS) {
    await hub.hub.registry.connect(name, "1.0.0", {
      labels: { env: "prod" },
      kubernetesVersion: "1.29.9",
      nodePools: [],
    });
  }
}

function ready(run: Run, cluster: string, generation: number): StatusReport {
  return {
    sequence: 1,
    generation,
    subject: { kind: "upgrade", upgradeId: run.name },
    phase: "Ready",
    reasons: [],
    reasonsTruncated: 0,
    observedAtMs: Date.now(),
  };
}

function memberState(run: Run, cluster: string): string | undefined {
  for (const stage of run.stages)
    for (const group of stage.groups)
      for (const member of group.members)
        if (member.name === cluster) return member.state;
  return undefined;
}

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

/** Reports Ready through `via` for the member that is Running, as its agent would. */
async function succeedRunning(
  via: JetStreamHub,
  name: string,
): Promise<string> {
  const run = via.hub.runs.get(name).run;
  const running = CLUSTERS.find((c) => memberState(run, c) === "Running");
  if (running === undefined) throw new Error("no member is running");
  const { intent } = await via.hub.intents.current(running);
  via.hub.runs.memberReport(
    running,
    name,
    ready(run, running, intent.generation),
  );
  return running;
}

describe("hub replicas", () => {
  it("a bundle applied through either replica is rolled out by the owner of the bundle rollouts", async () => {
    const contentSecret = randomBytes(32);
    await using a = await startJetStreamHub(server, {
      replica: { id: "hub-g", leaseTtlMs: TTL },
      contentSecret,
    });
    await connectClusters(a);
    await a.hub.registry.flush();
    await using b = await startJetStreamHub(server, {
      replica: { id: "hub-h", leaseTtlMs: TTL },
      contentSecret,
    });
    await waitFor(
      () =>
        [a, b].filter((h) => h.hub.leases?.held("bundles") !== undefined)
          .length === 1,
      { timeoutMs: 10_000 },
    );
    const owner = a.hub.leases?.held("bundles") === undefined ? b : a;
    const other = owner === a ? b : a;
    await other.apply({
      name: "web",
      namespace: "web",
      manifests: [
        {
          path: "cm.json",
          yaml: Buffer.from(
            JSON.stringify({
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name: "web" },
              data: { a: "1" },
            }),
          ),
          content: "yaml",
        },
      ],
      targetsJson: JSON.stringify([{ clusterSelector: {} }]),
    });
    // The owner learns of the bundle from the store and releases it into the intents.
    await waitFor(
      async () =>
        (await owner.hub.intents.refresh("prod-01")).intent.bundles["web"] !==
        undefined,
      { timeoutMs: 10_000 },
    );
    expect(owner.logs.some((l) => l.msg === "Bundle applied")).toBe(false);
  });

  it("the owner drives the run; commands and reports sent to the other replica take effect there, and its copy follows", async () => {
    await using a = await startJetStreamHub(server, {
      replica: { id: "hub-a", leaseTtlMs: TTL },
    });
    await connectClusters(a);
    await a.hub.registry.flush();
    await using b = await startJetStreamHub(server, {
      replica: { id: "hub-b", leaseTtlMs: TTL },
    });
    // The agents are connected to hub-a only: hub-b hears of them through hub-a's presence.
    await waitFor(() =>
      CLUSTERS.every(
        (c) => b.hub.registry.status(c)?.connection === "Connected",
      ),
    );
    // Both live: a run preferred for hub-b, created through hub-a.
    await waitFor(
      () =>
        (a.hub.leases?.replicas().length ?? 0) === 2 &&
        (b.hub.leases?.replicas().length ?? 0) === 2,
    );
    const name = nameOwnedBy("hub-b", ["hub-a", "hub-b"], "spread");
    await createRun(a, name);
    await waitFor(() => b.hub.runs.owns(name), { timeoutMs: 10_000 });
    expect(a.hub.runs.owns(name)).toBe(false);

    const started = await a.hub.runs.command(name, {
      type: "StartRun",
      actor: "test",
      reason: "",
    });
    expect(started.run.state).toBe("Running");
    expect(b.hub.runs.get(name).run.state).toBe("Running");

    // hub-a caches the intent of a member nobody has started yet.
    const waiting = CLUSTERS.filter(
      (c) => memberState(a.hub.runs.get(name).run, c) !== "Running",
    );
    for (const c of waiting) await a.hub.intents.current(c);
    const first = await succeedRunning(a, name);
    await waitFor(
      () => memberState(b.hub.runs.get(name).run, first) === "Succeeded",
    );
    // hub-b started the next member: hub-a's cached intent of it follows what hub-b stored.
    await waitFor(() =>
      waiting.some((c) => (a.hub.intents.peek(c)?.intent.generation ?? 0) >= 1),
    );
    // hub-a's copy follows hub-b's journal.
    await waitFor(
      () => memberState(a.hub.runs.get(name).run, first) === "Succeeded",
    );
    expect(a.hub.runs.get(name).revision).toBe(b.hub.runs.get(name).revision);

    // A cluster that joins through hub-a is known to hub-b too.
    await a.hub.registry.connect("prod-04", "1.0.0", {
      labels: { env: "prod" },
      nodePools: [],
    });
    await waitFor(
      () => b.hub.registry.status("prod-04")?.connection === "Connected",
    );
  });

  it("a run deleted through the replica that does not own it is deleted by its owner; both forget it and the lease goes", async () => {
    await using a = await startJetStreamHub(server, {
      replica: { id: "hub-e", leaseTtlMs: TTL },
    });
    await connectClusters(a);
    await a.hub.registry.flush();
    await using b = await startJetStreamHub(server, {
      replica: { id: "hub-f", leaseTtlMs: TTL },
    });
    await waitFor(
      () =>
        (a.hub.leases?.replicas().length ?? 0) === 2 &&
        (b.hub.leases?.replicas().length ?? 0) === 2,
    );
    const name = nameOwnedBy("hub-f", ["hub-e", "hub-f"], "gone");
    await createRun(a, name);
    await waitFor(() => b.hub.runs.owns(name), { timeoutMs: 10_000 });
    await a.hub.runs.command(name, {
      type: "StartRun",
      actor: "test",
      reason: "",
    });
    // In flight: refused on either replica, with the state.
    await expect(a.hub.runs.delete(name)).rejects.toThrow(/is Running/);
    await a.hub.runs.command(name, {
      type: "StopRun",
      actor: "test",
      reason: "",
    });
    await succeedRunning(a, name);
    await waitFor(() => a.hub.runs.get(name).run.state === "Stopped", {
      timeoutMs: 10_000,
    });

    expect(await a.hub.runs.delete(name)).toBe("Stopped");
    expect(() => a.hub.runs.get(name)).toThrow(/does not exist/);
    await waitFor(() => !b.hub.runs.list().some((r) => r.run.name === name), {
      message: "the owner to forget the run",
    });
    const records = await a.store.list(RUN_LOG);
    expect(records.filter((r) => r.key.startsWith(name))).toEqual([]);
    await waitFor(() => b.hub.leases?.held(`run/${name}`) === undefined, {
      timeoutMs: 10_000,
      message: "the run's lease to be released",
    });
    await expect(
      b.hub.runs.command(name, { type: "StartRun", actor: "test", reason: "" }),
    ).rejects.toThrow(/does not exist/);
  });

  it("a replica that stops hands its runs to the other at once, which finishes them", async () => {
    await using a = await startJetStreamHub(server, {
      replica: { id: "hub-c", leaseTtlMs: 60_000 },
    });
    await connectClusters(a);
    await a.hub.registry.flush();
    const b = await startJetStreamHub(server, {
      replica: { id: "hub-d", leaseTtlMs: 60_000 },
    });
    await connectClusters(b);
    // Rounds are 15 s apart with a one-minute TTL: the test runs them.
    await waitFor(async () => {
      await a.hub.leases?.round();
      return (a.hub.leases?.replicas().length ?? 0) >= 2;
    });
    const name = nameOwnedBy("hub-d", ["hub-c", "hub-d"], "handover");
    await createRun(b, name);
    await waitFor(() => b.hub.runs.owns(name), { timeoutMs: 10_000 });
    await b.hub.runs.command(name, {
      type: "StartRun",
      actor: "test",
      reason: "",
    });
    await succeedRunning(b, name);
    await b.stop();
    // The lease TTL is a minute: only the release makes this quick.
    await waitFor(
      async () => {
        await a.hub.leases?.round();
        return a.hub.runs.owns(name);
      },
      { timeoutMs: 10_000 },
    );
    // Each owner journaled its takeover, in order.
    const journal = await a.store.list(RUN_LOG, { prefix: `${name}.j.` });
    const takeovers = journal
      .map((e) => e.value as { seq: number; owner?: string })
      .filter((v) => v.owner !== undefined)
      .sort((x, y) => x.seq - y.seq)
      .map((v) => v.owner);
    expect(takeovers).toEqual(["hub-d", "hub-c"]);
    while (a.hub.runs.get(name).run.state !== "Completed") {
      const before = a.hub.runs.get(name).revision;
      await succeedRunning(a, name);
      await waitFor(() => a.hub.runs.get(name).revision > before);
    }
    expect(a.hub.runs.get(name).run.state).toBe("Completed");
  });

  it("a replica that stops renewing loses its runs after the TTL, and nothing it writes after that lands", async () => {
    // hub-e's lease clock never moves: it renews nothing after its first round, as if paused.
    const paused = createManualClock(Date.now());
    await using a = await startJetStreamHub(server, {
      replica: { id: "hub-e", leaseTtlMs: TTL },
      clock: paused,
    });
    const name = "fenced";
    await connectClusters(a);
    await createRun(a, name);
    expect(a.hub.runs.owns(name)).toBe(true);
    await a.hub.runs.command(name, {
      type: "StartRun",
      actor: "test",
      reason: "",
    });
    await a.hub.registry.flush();
    await using b = await startJetStreamHub(server, {
      replica: { id: "hub-f", leaseTtlMs: TTL },
    });
    await connectClusters(b);
    await waitFor(() => b.hub.runs.owns(name), { timeoutMs: 15_000 });
    const first = await succeedRunning(b, name);
    await waitFor(
      () => memberState(b.hub.runs.get(name).run, first) === "Succeeded",
    );
    await b.hub.runs.idle();
    const revision = b.hub.runs.get(name).revision;
    // hub-e still believes it owns the run: its write loses, and it learns it was deposed.
    expect(a.hub.runs.owns(name)).toBe(true);
    await expect(
      a.hub.runs.command(name, { type: "StopRun", actor: "late", reason: "" }),
    ).rejects.toThrow(/has a newer owner/);
    expect(a.hub.runs.owns(name)).toBe(false);
    const journal = await b.store.list(RUN_LOG, { prefix: `${name}.j.` });
    const entries = journal
      .map(
        (e) =>
          e.value as unknown as {
            seq: number;
            epoch?: number;
            events: { type: string; actor?: string }[];
          },
      )
      .sort((x, y) => x.seq - y.seq);
    // Entries are contiguous, epochs never go down, and the late StopRun is not among them.
    entries.forEach((e, i) => {
      if (i > 0) {
        expect(e.seq).toBe((entries[i - 1]?.seq ?? 0) + 1);
        expect(e.epoch ?? 0).toBeGreaterThanOrEqual(entries[i - 1]?.epoch ?? 0);
      }
    });
    expect(
      entries.flatMap((e) => e.events).some((ev) => ev.actor === "late"),
    ).toBe(false);
    expect(b.hub.runs.get(name).revision).toBe(revision);
    expect(b.hub.runs.get(name).run.state).toBe("Running");
  });
});
