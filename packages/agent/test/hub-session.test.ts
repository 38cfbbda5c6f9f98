// The hub session against a fake hub on a real gRPC server: hello/facts/welcome, heartbeats at the
// welcome's interval, numbered and acked reports, resync, refusals, reconnects with backoff. Time
// is a manual clock and jitter a fixed draw, so every interval and delay is known exactly.
import { afterEach, describe, expect, test } from "vitest";
import { pino } from "pino";
import type { Maintenance } from "@flotilla/core";
import { FlotillaError } from "@flotilla/core";
import { type HubSession } from "@flotilla/agent";
import {
  createHubSession,
  type SessionEvent,
  type StatusReportInput,
  type SyncReason,
} from "@flotilla/agent/testing";
import { createBackoff } from "@flotilla/node";
import { createManualClock, type ManualClock } from "@flotilla/node/testing";
import { maintenanceFromWire, type ClusterFacts } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { FakeHub } from "./support/fake-hub.js";

const FACTS: ClusterFacts = {
  labels: { env: "test" },
  kubernetesVersion: "1.30.5",
  nodePools: [
    { name: "pool-a", imageFamily: "ubuntu", imageVersion: "2025.01" },
  ],
};

interface Harness {
  readonly session: HubSession;
  readonly clock: ManualClock;
  readonly events: SessionEvent[];
  readonly syncs: SyncReason[];
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

function startSession(hub: FakeHub, cluster = "c1"): Harness {
  const clock = createManualClock();
  const events: SessionEvent[] = [];
  const syncs: SyncReason[] = [];
  const session = createHubSession(
    { clock, random: () => 0.5, logger: pino({ level: "silent" }) },
    {
      clusterName: cluster,
      agentVersion: "0.0.0-test",
      hub: hub.address,
      transport: { insecurePlaintext: true },
      // grpc-js's own reconnects are real time: keep them short so restarts are seen quickly.
      channelOptions: {
        "grpc.initial_reconnect_backoff_ms": 50,
        "grpc.max_reconnect_backoff_ms": 100,
      },
      lastAppliedGeneration: () => 7,
      facts: () => Promise.resolve(FACTS),
      onSync: (reason) => {
        syncs.push(reason);
        return Promise.resolve();
      },
      onEvent: (event) => events.push(event),
    },
  );
  session.start();
  cleanups.push(() => session.stop());
  return { session, clock, events, syncs };
}

function connected(h: Harness): Promise<true> {
  return waitFor(() => h.session.state === "connected", {
    message: "the session to be welcomed",
  });
}

function report(
  phase: StatusReportInput["phase"],
  subject: StatusReportInput["subject"],
  extra: Partial<StatusReportInput> = {},
): StatusReportInput {
  return {
    generation: 3,
    subject,
    phase,
    reasons: [],
    reasonsTruncated: 0,
    observedAtMs: Date.UTC(2025, 0, 1),
    ...extra,
  };
}

const WEB = { kind: "bundle", bundle: "web", revision: "r1" } as const;
const UPGRADE = { kind: "upgrade", upgradeId: "upgrade-1-31" } as const;

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

describe("hub session", () => {
  test("opens with hello then facts, and is welcomed", async () => {
    const hub = await startHub({ heartbeatIntervalMs: 1_000 });
    const h = startSession(hub);
    await connected(h);
    const session = hub.live("c1")!;
    expect(session.bodies()).toEqual(["hello", "facts"]);
    expect(session.hello).toEqual({
      clusterName: "c1",
      agentVersion: "0.0.0-test",
      protocolVersion: 1,
      lastAppliedGeneration: 7,
    });
    expect(session.messages[1]?.facts?.labels).toEqual({ env: "test" });
    expect(ofType(h.events, "Welcomed")).toMatchObject([
      { heartbeatIntervalMs: 1_000 },
    ]);
    await waitFor(() => h.syncs.length === 1);
    expect(h.syncs).toEqual(["connected"]);
  });

  test("sends heartbeats at the interval the welcome names", async () => {
    const hub = await startHub({ heartbeatIntervalMs: 1_000 });
    const h = startSession(hub);
    await connected(h);
    const t0 = h.clock.now();
    await h.clock.advance(999);
    expect(h.session.stats().heartbeatsSent).toBe(0);
    await h.clock.advance(1);
    expect(h.session.stats().heartbeatsSent).toBe(1);
    await h.clock.advance(1_000);
    expect(h.session.stats().heartbeatsSent).toBe(2);
    const received = await waitFor(() => {
      const beats = hub.live("c1")!.heartbeats();
      return beats.length === 2 && beats;
    });
    expect(received).toEqual([
      { sentAtMs: t0 + 1_000, lastAppliedGeneration: 7 },
      { sentAtMs: t0 + 2_000, lastAppliedGeneration: 7 },
    ]);
  });

  test("numbers reports per stream, skips repeats and tracks acks", async () => {
    const hub = await startHub();
    const h = startSession(hub);
    await connected(h);
    h.session.report(report("Applying", WEB));
    // The same status observed later is not news.
    h.session.report(
      report("Applying", WEB, { observedAtMs: Date.UTC(2025, 0, 2) }),
    );
    h.session.report(report("Applied", WEB));
    const statuses = await waitFor(() => {
      const s = hub.live("c1")!.statuses();
      return s.length === 2 && s;
    });
    expect(statuses.map((s) => [s.sequence, s.phase, s.generation])).toEqual([
      [1, "Applying", 3],
      [2, "Applied", 3],
    ]);
    const acks = await waitFor(() => {
      const a = ofType(h.events, "ReportAcked");
      return a.length === 2 && a;
    });
    // The first report was superseded by the time its ack came.
    expect(acks.map((a) => [a.sequence, a.accepted, a.current])).toEqual([
      [1, true, false],
      [2, true, true],
    ]);
    expect(h.session.stats().reportsSent).toBe(2);
  });

  test("reconnects with backoff when the hub restarts, and resends only reports still current", async () => {
    const hub = await startHub({ ack: false });
    const h = startSession(hub);
    await connected(h);
    h.session.report(report("Applying", WEB));
    h.session.report(report("Pending", UPGRADE, { pendingUntilMs: 1 }));
    await waitFor(() => hub.live("c1")!.statuses().length === 2);
    // The bundle left the intent: its unacked report is no longer current.
    h.session.retain([UPGRADE]);

    await hub.restart();
    const [disconnected] = await waitFor(() => {
      const d = ofType(h.events, "Disconnected");
      return d.length === 1 && d;
    });
    expect(disconnected).toMatchObject({ welcomed: true, unackedCurrent: 1 });
    await retryUntil(
      h,
      () => h.session.state === "connected" && hub.sessionsOf("c1").length >= 2,
    );
    const resent = await waitFor(() => {
      const s = hub.live("c1")!.statuses();
      return s.length === 1 && s;
    });
    expect(resent).toMatchObject([
      { sequence: 1, subject: UPGRADE, phase: "Pending", pendingUntilMs: 1 },
    ]);
    expect(h.syncs).toEqual(["connected", "connected"]);
  });

  test("backs off 0.5 s doubling while the hub is down, and starts over after a welcome", async () => {
    const hub = await startHub();
    const h = startSession(hub);
    await connected(h);
    hub.shutdown();
    const delays = (): number[] =>
      ofType(h.events, "RetryScheduled").map((e) => e.delayMs);
    await retryUntil(h, () => delays().length >= 6);
    // A draw of 0.5 is the middle of the ±50% jitter: the delays are the ceilings themselves.
    expect(delays().slice(0, 6)).toEqual([
      500, 1_000, 2_000, 4_000, 8_000, 8_000,
    ]);

    await hub.restart();
    await retryUntil(h, () => h.session.state === "connected");
    const before = delays().length;
    hub.shutdown();
    await waitFor(() => delays().length > before);
    expect(delays()[before]).toBe(500);
  });

  test("resends every current status when the hub asks for a resync", async () => {
    const hub = await startHub();
    const h = startSession(hub);
    await connected(h);
    h.session.report(report("Ready", WEB));
    h.session.report(report("Pending", UPGRADE));
    await waitFor(() => ofType(h.events, "ReportAcked").length === 2);
    hub.live("c1")!.send({ resync: { reason: "hub restarted" } });
    const statuses = await waitFor(() => {
      const s = hub.live("c1")!.statuses();
      return s.length === 4 && s;
    });
    expect(statuses.map((s) => [s.sequence, s.phase])).toEqual([
      [1, "Ready"],
      [2, "Pending"],
      [3, "Ready"],
      [4, "Pending"],
    ]);
    expect(h.syncs).toEqual(["connected", "resync"]);
    expect(ofType(h.events, "ResyncRequested")).toEqual([
      { type: "ResyncRequested", reason: "hub restarted" },
    ]);
  });

  test("turns a hub's StreamError into a FlotillaError and tries again later", async () => {
    let refusals = 0;
    const hub = await startHub({
      refuse: (hello) =>
        refusals++ === 0
          ? new FlotillaError(
              "already_exists",
              `Cluster "${hello.clusterName}" already has a live session`,
              {
                problems: [
                  {
                    path: "hello.clusterName",
                    message: "is held by another session",
                    value: hello.clusterName,
                  },
                ],
              },
            )
          : undefined,
    });
    const h = startSession(hub);
    const [refused] = await waitFor(() => {
      const r = ofType(h.events, "HubRefused");
      return r.length === 1 && r;
    });
    expect(refused?.error).toBeInstanceOf(FlotillaError);
    expect(refused?.error).toMatchObject({
      code: "already_exists",
      message: 'Cluster "c1" already has a live session',
      problems: [
        {
          path: "hello.clusterName",
          message: "is held by another session",
          value: "c1",
        },
      ],
    });
    await waitFor(() => ofType(h.events, "Disconnected").length === 1);
    expect(ofType(h.events, "Disconnected")[0]).toMatchObject({
      welcomed: false,
      error: { code: "already_exists" },
    });
    await retryUntil(h, () => h.session.state === "connected");
    expect(hub.sessionsOf("c1")).toHaveLength(2);
  });

  test("sends windowsChanged and new facts on the open stream", async () => {
    const hub = await startHub();
    const h = startSession(hub);
    await connected(h);
    const maintenance: Maintenance = {
      windows: {
        kubernetes: [{ type: "OneOff", startMs: 1_000, endMs: 2_000 }],
        nodeImage: [],
        workloads: [],
      },
      freezes: [],
    };
    h.session.windowsChanged(maintenance);
    h.session.factsChanged();
    const live = hub.live("c1")!;
    await waitFor(() => live.messages.length === 4);
    expect(live.bodies()).toEqual([
      "hello",
      "facts",
      "windowsChanged",
      "facts",
    ]);
    const decoded = maintenanceFromWire(
      live.messages[2]?.windowsChanged?.maintenance,
    );
    expect(decoded).toEqual({ ok: true, value: maintenance });
  });

  test("stop ends the stream and leaves no timer behind", async () => {
    const hub = await startHub({ heartbeatIntervalMs: 1_000 });
    const h = startSession(hub);
    await connected(h);
    const live = hub.live("c1")!;
    await h.session.stop();
    expect(h.session.state).toBe("stopped");
    await waitFor(() => live.ended, {
      message: "the hub to see the stream end",
    });
    expect(h.clock.pending()).toBe(0);
    h.session.report(report("Ready", WEB));
    expect(h.session.stats().reportsSent).toBe(0);
  });
});

describe("backoff", () => {
  test("doubles from 0.5 s to 8 s with ±50% jitter, and resets", () => {
    const draws = [0, 0.5, 0.999_999, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5];
    let i = 0;
    const backoff = createBackoff({ random: () => draws[i++] ?? 0.5 });
    const delays = Array.from({ length: 9 }, () => backoff.next());
    expect(delays).toEqual([
      250, 1_000, 3_000, 4_000, 8_000, 8_000, 8_000, 8_000, 8_000,
    ]);
    expect(backoff.attempts).toBe(9);
    backoff.reset();
    expect(backoff.next()).toBe(500);
  });
});
