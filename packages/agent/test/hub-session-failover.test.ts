// A hub session given two hub addresses (two replicas), each a fake hub on a real gRPC server:
// the session connects to one, moves to the other when its stream ends or cannot be opened, after
// the usual backoff pause, and the statuses the first never acked reach the second. The order of
// the addresses and the jitter come from an injected draw, time from a manual clock.
import { afterEach, expect, test } from "vitest";
import { pino } from "pino";
import { Registry } from "prom-client";
import type { HubSession } from "@flotilla/agent";
import { createAgentMetrics } from "@flotilla/agent";
import {
  createHubSession,
  registerAgentGauges,
  type SessionEvent,
  type StatusReportInput,
} from "@flotilla/agent/testing";
import { createManualClock, type ManualClock } from "@flotilla/node/testing";
import { waitFor } from "@flotilla/testkit";
import { FakeHub } from "./support/fake-hub.js";

interface Harness {
  readonly session: HubSession;
  readonly clock: ManualClock;
  readonly events: SessionEvent[];
  readonly registry: Registry;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startHub(
  behaviour: Parameters<typeof FakeHub.start>[0] = {},
): Promise<FakeHub> {
  const hub = await FakeHub.start(behaviour);
  cleanups.push(() => hub[Symbol.asyncDispose]());
  return hub;
}

/**
 * A session over `addresses`. The draw 0.99 keeps a list of two in the order given (the shuffle
 * swaps nothing), so the session starts with the first.
 */
function startSession(addresses: readonly string[]): Harness {
  const clock = createManualClock();
  const events: SessionEvent[] = [];
  const registry = new Registry();
  const session = createHubSession(
    {
      clock,
      random: () => 0.99,
      logger: pino({ level: "silent" }),
      metrics: createAgentMetrics(registry),
    },
    {
      clusterName: "c1",
      agentVersion: "0.0.0-test",
      hub: addresses,
      transport: { insecurePlaintext: true },
      channelOptions: {
        "grpc.initial_reconnect_backoff_ms": 50,
        "grpc.max_reconnect_backoff_ms": 100,
      },
      lastAppliedGeneration: () => 0,
      facts: () => Promise.resolve({ labels: {}, nodePools: [] }),
      onEvent: (event) => events.push(event),
    },
  );
  registerAgentGauges(registry, {
    sessionStates: () => [session.state],
    statuses: () => session.currentStatuses(),
    hubAddresses: {
      configured: addresses,
      connected: () => [session.connectedAddress ?? []].flat(),
    },
  });
  session.start();
  cleanups.push(() => session.stop());
  return { session, clock, events, registry };
}

function ofType<T extends SessionEvent["type"]>(
  events: readonly SessionEvent[],
  type: T,
): Extract<SessionEvent, { type: T }>[] {
  return events.filter(
    (e): e is Extract<SessionEvent, { type: T }> => e.type === type,
  );
}

/** Advances the manual clock past each scheduled retry until `predicate` holds. */
async function retryUntil(h: Harness, predicate: () => boolean): Promise<void> {
  await waitFor(
    async () => {
      if (predicate()) return true;
      const last = ofType(h.events, "RetryScheduled").at(-1);
      if (h.session.state === "waiting" && last !== undefined)
        await h.clock.advance(last.delayMs);
      return predicate();
    },
    { timeoutMs: 10_000, message: "the session to reconnect" },
  );
}

const APPLYING: StatusReportInput = {
  generation: 1,
  subject: { kind: "bundle", bundle: "web", revision: "r1" },
  phase: "Applying",
  reasons: [],
  reasonsTruncated: 0,
  observedAtMs: Date.UTC(2025, 0, 1),
};

test("moves to the second hub when the first stops, and the status the first never acked arrives there", async () => {
  const first = await startHub({ ack: false });
  const second = await startHub();
  const h = startSession([first.address, second.address]);
  await waitFor(() => h.session.connectedAddress === first.address);
  expect(second.sessions).toHaveLength(0);
  h.session.report(APPLYING);
  await waitFor(() => first.live("c1")?.statuses().length === 1);

  first.shutdown();
  await retryUntil(h, () => h.session.connectedAddress === second.address);
  const statuses = await waitFor(() => {
    const s = second.live("c1")?.statuses() ?? [];
    return s.length === 1 && s;
  });
  expect(statuses[0]).toMatchObject({ generation: 1, phase: "Applying" });
  await waitFor(() =>
    ofType(h.events, "ReportAcked").some((a) => a.accepted && a.current),
  );

  // The move waited out the backoff pause like any reconnect, and is told and counted.
  expect(ofType(h.events, "FailedOver")).toEqual([
    { type: "FailedOver", from: first.address, to: second.address },
  ]);
  const failedOver = h.events.findIndex((e) => e.type === "FailedOver");
  expect(h.events[failedOver + 1]).toMatchObject({ type: "RetryScheduled" });
  expect(ofType(h.events, "ConnectStarted").map((e) => e.address)).toEqual([
    first.address,
    second.address,
  ]);
  const metrics = await h.registry.metrics();
  expect(metrics).toContain("flotilla_agent_hub_failovers_total 1\n");
  expect(metrics).toContain(
    `flotilla_agent_hub_connected{address="${second.address}"} 1\n`,
  );
  expect(metrics).toContain(
    `flotilla_agent_hub_connected{address="${first.address}"} 0\n`,
  );
});

test("with the first address down at start, connects to the second", async () => {
  const down = await startHub();
  down.shutdown();
  const up = await startHub();
  const h = startSession([down.address, up.address]);
  await retryUntil(h, () => h.session.connectedAddress === up.address);
  expect(down.sessions).toHaveLength(0);
  expect(ofType(h.events, "Welcomed")).toMatchObject([{ address: up.address }]);
  expect(ofType(h.events, "FailedOver")).toEqual([
    { type: "FailedOver", from: down.address, to: up.address },
  ]);
});

test("keeps going round while every hub is down, and comes back to the first", async () => {
  const a = await startHub();
  const b = await startHub();
  const h = startSession([a.address, b.address]);
  await waitFor(() => h.session.connectedAddress === a.address);
  a.shutdown();
  b.shutdown();
  // Tried b, then a again, then b again: round and round.
  await retryUntil(h, () => ofType(h.events, "ConnectStarted").length >= 4);
  expect(
    ofType(h.events, "ConnectStarted")
      .slice(0, 4)
      .map((e) => e.address),
  ).toEqual([a.address, b.address, a.address, b.address]);
  await a.restart();
  await retryUntil(h, () => h.session.connectedAddress === a.address);
  const moves = ofType(h.events, "FailedOver").map((e) => e.to);
  expect(moves.length).toBeGreaterThanOrEqual(2);
  expect(moves.at(-1)).toBe(a.address);
});

test("reconnect() stays with the hub it was connected to", async () => {
  const first = await startHub();
  const second = await startHub();
  const h = startSession([first.address, second.address]);
  await waitFor(() => h.session.connectedAddress === first.address);
  h.session.reconnect("identity renewed");
  await waitFor(
    () =>
      first.sessionsOf("c1").length === 2 &&
      h.session.connectedAddress === first.address,
  );
  expect(second.sessions).toHaveLength(0);
  expect(ofType(h.events, "FailedOver")).toEqual([]);
});

test("one address: a restarted hub is connected to again, with no failover", async () => {
  const hub = await startHub();
  const h = startSession([hub.address]);
  await waitFor(() => h.session.connectedAddress === hub.address);
  await hub.restart();
  await retryUntil(
    h,
    () => hub.sessionsOf("c1").length === 2 && h.session.state === "connected",
  );
  expect(ofType(h.events, "FailedOver")).toEqual([]);
  expect(await h.registry.metrics()).toContain(
    "flotilla_agent_hub_failovers_total 0\n",
  );
});

test("one target resolving to several addresses: gRPC takes the first that answers, and another when that one stops", async () => {
  const a = await startHub();
  const b = await startHub();
  // What a name resolving to both gives gRPC's default policy (pick_first) when the answer lists
  // a first; the ipv4: target skips DNS. Which replica an agent lands on is the answer's order.
  const target = `ipv4:127.0.0.1:${String(a.port)},127.0.0.1:${String(b.port)}`;
  const sessions = Array.from({ length: 5 }, () => startSession([target]));
  await waitFor(() => sessions.every((h) => h.session.state === "connected"));
  expect(a.sessions).toHaveLength(5);
  expect(b.sessions).toHaveLength(0);

  a.shutdown();
  for (const h of sessions)
    await retryUntil(
      h,
      () =>
        h.session.state === "connected" &&
        ofType(h.events, "Welcomed").length === 2,
    );
  expect(b.sessions.filter((s) => !s.ended)).toHaveLength(5);
  // One address as far as the session knows: gRPC moved it, the session only reconnected.
  for (const h of sessions) expect(ofType(h.events, "FailedOver")).toEqual([]);
});
