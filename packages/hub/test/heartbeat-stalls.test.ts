/**
 * Heartbeat deadlines across a stalled hub, with an injected clock: the registry checks every
 * second, agents beat every 2 s and are Unreachable after 6 s of silence. A stall shows as a late
 * check; it must not make live agents Unreachable, and a dead agent must still be caught within
 * its deadline, or one heartbeat interval after the hub resumed.
 */
import { describe, expect, it } from "vitest";
import {
  createClusterRegistry,
  type ClusterRegistry,
  type SessionHandle,
} from "../src/clusters/cluster-registry.js";
import { createHeartbeatStalls } from "../src/clusters/heartbeat-stalls.js";
import { createMemoryStore } from "../src/store/memory-store.js";

const CHECK_MS = 1_000;
const HEARTBEAT_MS = 2_000;
const UNREACHABLE_AFTER_MS = 3 * HEARTBEAT_MS;

interface Fleet {
  readonly registry: ClusterRegistry;
  readonly sessions: ReadonlyMap<string, SessionHandle>;
  /** Moves the clock to `ms`. */
  at(ms: number): void;
  /** Runs a heartbeat check at `ms`; returns who became Unreachable. */
  checkAt(ms: number): string[];
}

/** A registry with `names` connected at time 0 and checked once then. */
async function fleet(names: readonly string[]): Promise<Fleet> {
  const store = createMemoryStore();
  await store.start();
  let now = 0;
  const registry = createClusterRegistry({
    store,
    now: () => now,
    unreachableAfterMs: UNREACHABLE_AFTER_MS,
    stalls: { checkIntervalMs: CHECK_MS, heartbeatIntervalMs: HEARTBEAT_MS },
    groups: () => [],
  });
  await registry.start();
  const sessions = new Map<string, SessionHandle>();
  for (const name of names)
    sessions.set(name, await registry.connect(name, "v1", undefined));
  registry.checkHeartbeats();
  return {
    registry,
    sessions,
    at(ms) {
      now = ms;
    },
    checkAt(ms) {
      now = ms;
      return registry.checkHeartbeats();
    },
  };
}

/** Checks on time from `fromMs` to `toMs`; `alive` agents beat every interval. */
function run(
  f: Fleet,
  fromMs: number,
  toMs: number,
  alive: readonly string[],
): { name: string; atMs: number }[] {
  const marked: { name: string; atMs: number }[] = [];
  for (let t = fromMs; t <= toMs; t += CHECK_MS) {
    f.at(t);
    if (t % HEARTBEAT_MS === 0) {
      for (const name of alive) {
        const session = f.sessions.get(name);
        if (session !== undefined) f.registry.seen(session);
      }
    }
    for (const name of f.registry.checkHeartbeats())
      marked.push({ name, atMs: t });
  }
  return marked;
}

describe("heartbeat deadlines", () => {
  it("a silent agent is Unreachable after the timeout when the hub runs smoothly", async () => {
    const f = await fleet(["live", "dead"]);
    expect(run(f, CHECK_MS, 20_000, ["live"])).toEqual([
      { name: "dead", atMs: UNREACHABLE_AFTER_MS },
    ]);
  });

  it("a stall longer than the timeout marks no one at the first check after it", async () => {
    const f = await fleet(["a", "b", "c"]);
    run(f, CHECK_MS, 10_000, ["a", "b", "c"]);
    // Frozen from just after 10 s to 30 s: the heartbeats sent meanwhile are not read yet.
    expect(f.checkAt(30_000)).toEqual([]);
    // They are read now, and the agents go on beating.
    for (const session of f.sessions.values()) f.registry.seen(session);
    expect(run(f, 31_000, 60_000, ["a", "b", "c"])).toEqual([]);
  });

  it("an agent that died before the stall is caught one heartbeat interval after it", async () => {
    const f = await fleet(["live", "dead"]);
    run(f, CHECK_MS, 2_000, ["live", "dead"]);
    run(f, 3_000, 4_000, ["live"]);
    // "dead" was last heard at 2 s; its deadline (8 s) falls inside the stall.
    expect(f.checkAt(20_000)).toEqual([]);
    f.registry.seen(f.sessions.get("live") as SessionHandle);
    expect(run(f, 21_000, 40_000, ["live"])).toEqual([
      { name: "dead", atMs: 20_000 + HEARTBEAT_MS },
    ]);
  });

  it("an agent that dies after the stall is caught within its normal timeout", async () => {
    const f = await fleet(["live", "dead"]);
    run(f, CHECK_MS, 10_000, ["live", "dead"]);
    f.checkAt(30_000);
    for (const session of f.sessions.values()) f.registry.seen(session);
    expect(run(f, 31_000, 60_000, ["live"])).toEqual([
      { name: "dead", atMs: 30_000 + UNREACHABLE_AFTER_MS },
    ]);
  });

  it("a hub that stalls over and over still catches a dead agent", async () => {
    const f = await fleet(["dead"]);
    const marked: string[] = [];
    // Every check 3 s late: each one a stall, none of them on time.
    for (let t = 4_000; t <= 60_000 && marked.length === 0; t += 4_000)
      marked.push(...f.checkAt(t));
    expect(marked).toEqual(["dead"]);
  });
});

describe("createHeartbeatStalls", () => {
  const stalls = () =>
    createHeartbeatStalls({
      checkIntervalMs: CHECK_MS,
      heartbeatIntervalMs: HEARTBEAT_MS,
      unreachableAfterMs: UNREACHABLE_AFTER_MS,
    });

  it("counts only lateness of more than half a heartbeat interval", () => {
    const s = stalls();
    expect(s.blindMsAt(0)).toBe(0);
    expect(s.blindMsAt(1_000)).toBe(0);
    expect(s.blindMsAt(2_900)).toBe(0);
    expect(s.blindMsAt(5_000)).toBe(1_100);
    expect(s.blindMsAt(6_000)).toBe(0);
  });

  it("moves silence on by the stall, never past one interval from now, never back", () => {
    const s = stalls();
    // Short stall: the whole of it is taken out.
    expect(s.silenceFromAfter(10_000, 1_500, 16_000)).toBe(11_500);
    // An agent with more than an interval left keeps its deadline.
    expect(s.silenceFromAfter(10_000, 1_500, 12_000)).toBe(10_000);
    // Long stall: the deadline becomes one heartbeat interval from now.
    expect(s.silenceFromAfter(10_000, 20_000, 31_000)).toBe(
      31_000 + HEARTBEAT_MS - UNREACHABLE_AFTER_MS,
    );
    // Heard after the cap: left as it is.
    expect(s.silenceFromAfter(30_000, 20_000, 31_000)).toBe(30_000);
    // No stall: unchanged.
    expect(s.silenceFromAfter(10_000, 0, 31_000)).toBe(10_000);
  });
});
