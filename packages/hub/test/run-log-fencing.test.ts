/**
 * Fenced writes of a run's journal and snapshots (run-log.ts, docs/high-availability.md): once a
 * new owner has taken the run over, nothing the deposed owner writes lands, even when it wakes up
 * with a batch already stepped, a snapshot half written, or reads the run back and tries again.
 */
import {
  parseUpdateStrategy,
  resolveRun,
  step,
  type Cluster,
  type Run,
  type RunEvent,
} from "@flotilla/core";
import pino from "pino";
import { describe, expect, it } from "vitest";
import {
  FencedError,
  RUN_LOG,
  RunLog,
  type RunFence,
} from "../src/runs/run-log.js";
import { createMemoryStore } from "../src/store/memory-store.js";
import {
  isRevisionConflict,
  type StateStore,
} from "../src/store/state-store.js";

const T0 = Date.parse("2026-12-01T10:00:00Z");
const logger = pino({ level: "silent" });

function newRun(members: number): Run {
  const clusters: Cluster[] = Array.from({ length: members }, (_, i) => ({
    name: `c-${String(i).padStart(5, "0")}`,
    labels: { env: "prod" },
    groups: [],
    kubernetesVersion: "1.29.9",
    nodePools: [],
  }));
  const strategy = parseUpdateStrategy({
    stages: [
      {
        name: "prod",
        groups: [{ name: "all", memberSelector: { byLabel: "env=prod" } }],
      },
    ],
  });
  if (!strategy.ok) throw new Error("strategy");
  const run = resolveRun({
    name: "r",
    strategy: strategy.value,
    clusters,
    payload: {
      kind: "upgrade",
      upgrade: {
        type: "Full",
        kubernetesVersion: "1.30.3",
        nodeImageSelection: "Latest",
      },
    },
    createdAtMs: T0,
  });
  if (!run.ok) throw new Error("run");
  return run.value;
}

const start: RunEvent = { type: "StartRun", actor: "a", reason: "" };
const stop: RunEvent = { type: "StopRun", actor: "a", reason: "" };

async function load(store: StateStore): Promise<{ run: Run; log: RunLog }> {
  const loaded = await RunLog.load(store, "r", logger);
  if (loaded === undefined) throw new Error("not stored");
  return loaded;
}

async function journal(
  store: StateStore,
): Promise<{ seq: number; epoch?: number; owner?: string; events: number }[]> {
  const entries = await store.list(RUN_LOG, { prefix: "r.j." });
  return entries
    .map(
      (e) =>
        e.value as unknown as {
          seq: number;
          epoch?: number;
          owner?: string;
          events: unknown[];
        },
    )
    .map((v) => ({
      seq: v.seq,
      ...(v.epoch === undefined ? {} : { epoch: v.epoch }),
      ...(v.owner === undefined ? {} : { owner: v.owner }),
      events: v.events.length,
    }))
    .sort((a, b) => a.seq - b.seq);
}

describe("fenced run journal", () => {
  it("a deposed owner's append loses to the takeover entry, and after reading the run back it is refused", async () => {
    const store = createMemoryStore();
    await store.start();
    await RunLog.create(store, newRun(3), undefined);
    const old: RunFence = { epoch: 5, replica: "hub-a" };
    const next: RunFence = { epoch: 9, replica: "hub-b" };
    const a = await load(store);
    await a.log.takeOver(T0, old);
    await a.log.append(T0 + 1, [start], old);
    // hub-b takes over while hub-a is paused.
    const b = await load(store);
    expect(b.log.epoch).toBe(5);
    await b.log.takeOver(T0 + 2, next);
    // hub-a wakes up with a batch already stepped.
    const late = await a.log
      .append(T0 + 3, [stop], old)
      .catch((e: unknown) => e);
    expect(isRevisionConflict(late)).toBe(true);
    // It reads the run back, as the driver does after a refused batch: now it knows.
    const reread = await load(store);
    expect(reread.log.epoch).toBe(9);
    await expect(reread.log.append(T0 + 4, [stop], old)).rejects.toBeInstanceOf(
      FencedError,
    );
    await expect(reread.log.takeOver(T0 + 4, old)).rejects.toThrow(
      /newer owner \(lease epoch 9\)/,
    );
    // The new owner goes on.
    await b.log.append(T0 + 5, [stop], next);
    expect(await journal(store)).toEqual([
      { seq: 2, epoch: 5, owner: "hub-a", events: 0 },
      { seq: 3, epoch: 5, events: 1 },
      { seq: 4, epoch: 9, owner: "hub-b", events: 0 },
      { seq: 5, epoch: 9, events: 1 },
    ]);
    const final = await load(store);
    expect(final.run.state).toBe("Stopping");
    expect(final.log.seq).toBe(5);
  });

  it("a takeover that loses to a late append of the old owner reads the run back and takes over after it", async () => {
    const store = createMemoryStore();
    await store.start();
    await RunLog.create(store, newRun(3), undefined);
    const a = await load(store);
    const b = await load(store);
    await a.log.append(T0, [start], { epoch: 5, replica: "hub-a" });
    const lost = await b.log
      .takeOver(T0 + 1, { epoch: 9, replica: "hub-b" })
      .catch((e: unknown) => e);
    expect(isRevisionConflict(lost)).toBe(true);
    const again = await load(store);
    await again.log.takeOver(T0 + 2, { epoch: 9, replica: "hub-b" });
    expect((await journal(store)).map((e) => e.seq)).toEqual([2, 3]);
    expect(again.run.state).toBe("Running");
  });

  it("a deposed owner's snapshot neither overwrites the new owner's parts nor moves the head", async () => {
    // Small values: the snapshot of a run of 40 members is stored in parts.
    const store = createMemoryStore({ maxValueBytes: 2_048 });
    await store.start();
    await RunLog.create(store, newRun(40), undefined);
    const old: RunFence = { epoch: 5, replica: "hub-a" };
    const next: RunFence = { epoch: 9, replica: "hub-b" };
    const a = await load(store);
    await a.log.takeOver(T0, old);
    const b = await load(store);
    await b.log.takeOver(T0 + 1, next);
    await b.log.append(T0 + 2, [start], next);
    b.run = (await load(store)).run;
    await b.log.snapshot(b.run, false, next);
    const headBefore = await store.get(RUN_LOG, "r");
    // hub-a wakes up and stores the snapshot it had started.
    await expect(a.log.snapshot(a.run, false, old)).rejects.toBeInstanceOf(
      FencedError,
    );
    expect((await store.get(RUN_LOG, "r"))?.revision).toBe(
      headBefore?.revision,
    );
    const after = await load(store);
    expect(after.run.state).toBe("Running");
    expect(after.log.seq).toBe(4);
    // Nothing of hub-a's epoch is named by the head, and hub-b's parts are intact.
    const parts = (await store.list(RUN_LOG, { prefix: "r.p." })).map(
      (e) => e.key,
    );
    expect(parts.some((k) => k.startsWith("r.p.e9-"))).toBe(true);
  });

  it("a new owner's snapshot replaces an older one stored meanwhile by the previous owner", async () => {
    const store = createMemoryStore();
    await store.start();
    await RunLog.create(store, newRun(3), undefined);
    const old: RunFence = { epoch: 5, replica: "hub-a" };
    const next: RunFence = { epoch: 9, replica: "hub-b" };
    const a = await load(store);
    await a.log.append(T0, [start], old);
    step(a.run, start, T0);
    const b = await load(store);
    await b.log.takeOver(T0 + 1, next);
    // hub-a stores a snapshot at its seq before it learns of hub-b: the head moves under hub-b.
    await a.log.snapshot(a.run, false, old);
    await b.log.append(T0 + 2, [stop], next);
    const stopped = (await load(store)).run;
    await b.log.snapshot(stopped, false, next);
    const head = (await store.get(RUN_LOG, "r"))?.value as {
      snapshot: { seq: number; epoch?: number };
    };
    expect(head.snapshot).toMatchObject({ seq: 4, epoch: 9 });
    expect((await load(store)).run.state).toBe("Stopping");
  });
});
