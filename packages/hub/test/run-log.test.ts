/**
 * How the run manager stores runs (run-log.ts): a snapshot, in parts when it is large, plus a
 * journal of event batches. What is read back after a restart must equal what the manager held;
 * a batch must cost a write whose size does not depend on the number of members; a batch the
 * store refuses must leave nothing behind; runs written by earlier versions must still load.
 */
import {
  parseUpdateStrategy,
  type Cluster,
  type ClusterGroup,
  type Run,
} from "@flotilla/core";
import type { StatusReport } from "@flotilla/protocol";
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { ClusterDirectory } from "../src/clusters/cluster-directory.js";
import { createIntentWriter } from "../src/intents/intent-writer.js";
import { createMemoryIntentPublisher } from "../src/intents/memory-intent-publisher.js";
import { RING, RUN_LOG, SNAPSHOT_EVERY } from "../src/runs/run-log.js";
import { createRunManager, type RunManager } from "../src/runs/run-manager.js";
import { createMemoryStore } from "../src/store/memory-store.js";
import type { StateStore } from "../src/store/state-store.js";

const T0 = Date.parse("2026-12-01T10:00:00Z");

function fleet(count: number): ClusterDirectory {
  const clusters: Cluster[] = Array.from({ length: count }, (_, i) => ({
    name: `c-${String(i).padStart(5, "0")}`,
    labels: { env: "prod" },
    groups: [],
    kubernetesVersion: "1.29.9",
    nodePools: [],
  }));
  const byName = new Map(clusters.map((c) => [c.name, c]));
  return {
    clusters: () => clusters,
    cluster: (name) => byName.get(name),
    groups: (): readonly ClusterGroup[] => [],
    isUnreachable: () => false,
  };
}

type CountingStore = StateStore & {
  /** Length of the JSON of every put, in order. */
  written: number[];
  /** Puts refused while `failing`. */
  refused: number;
  failing: boolean;
};

/** A memory store that counts the bytes of every put and fails puts while `failing` is set. */
function countingStore(maxValueBytes: number): CountingStore {
  const inner = createMemoryStore({ maxValueBytes });
  const store: CountingStore = {
    written: [],
    refused: 0,
    failing: false,
    maxValueBytes: inner.maxValueBytes,
    start: (options) => inner.start(options),
    stop: () => inner.stop(),
    get: (collection, key, options) => inner.get(collection, key, options),
    delete: (collection, key, options) =>
      inner.delete(collection, key, options),
    list: (collection, options) => inner.list(collection, options),
    watch: (collection, options) => inner.watch(collection, options),
    [Symbol.asyncDispose]: () => inner[Symbol.asyncDispose](),
    put: (collection, key, value, options) => {
      if (store.failing) {
        store.refused += 1;
        return Promise.reject(new Error("store down"));
      }
      store.written.push(JSON.stringify(value).length);
      return inner.put(collection, key, value, options);
    },
  };
  return store;
}

function ready(): StatusReport {
  return {
    sequence: 1,
    generation: 1,
    subject: { kind: "upgrade", upgradeId: "big" },
    phase: "Ready",
    reasons: [],
    reasonsTruncated: 0,
    observedAtMs: T0,
  };
}

function manager(
  store: StateStore,
  dir: ClusterDirectory,
  clock: { now: number },
): RunManager {
  return createRunManager({
    store,
    intents: createIntentWriter(createMemoryIntentPublisher()),
    directory: dir,
    now: () => clock.now,
    logger: pino({ level: "silent" }),
    retryDelayMs: 1,
  });
}

const strategy = (() => {
  const parsed = parseUpdateStrategy({
    stages: [
      {
        name: "prod",
        maxConcurrency: 10,
        groups: [
          {
            name: "all",
            memberSelector: { byLabel: "env=prod" },
            maxConcurrency: 10,
          },
        ],
      },
    ],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
})();

async function startRun(runs: RunManager): Promise<void> {
  await runs.create({
    name: "big",
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
  await runs.command("big", { type: "StartRun", actor: "test", reason: "" });
}

/** Reports Ready for every Running member, `rounds` times (one batch per report). */
async function succeed(runs: RunManager, rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const running = members(runs.get("big").run).filter(
      (m) => m.state === "Running",
    );
    if (running.length === 0) return;
    for (const m of running) {
      runs.memberReport(m.name, "big", ready());
      await runs.idle();
    }
  }
}

function members(run: Run): { name: string; state: string }[] {
  return run.stages.flatMap((s) =>
    s.groups.flatMap((g) =>
      g.members.map((m) => ({ name: m.name, state: m.state })),
    ),
  );
}

describe("run storage", () => {
  it("reads back, after a restart, exactly the run the manager held, across snapshots in parts and the journal", async () => {
    const store = countingStore(64 * 1024);
    await store.start();
    const dir = fleet(600);
    const clock = { now: T0 };
    const first = manager(store, dir, clock);
    await first.start();
    await startRun(first);
    // More batches than one snapshot interval, fewer than the ring: snapshot + journal tail.
    await succeed(first, 25);
    const held = first.get("big");
    expect(held.revision).toBeGreaterThan(SNAPSHOT_EVERY);
    expect(held.revision).toBeLessThan(RING);
    const keys = (await store.list(RUN_LOG)).map((e) => e.key);
    expect(keys.some((k) => k.startsWith("big.p."))).toBe(true);
    expect(keys.some((k) => k.startsWith("big.j."))).toBe(true);

    const second = manager(store, dir, clock);
    await second.start();
    const loaded = second.get("big");
    expect(loaded.revision).toBe(held.revision);
    expect(JSON.stringify(loaded.run)).toBe(JSON.stringify(held.run));
  });

  it("writes a batch in a size that does not grow with the run", async () => {
    const sizes: number[] = [];
    for (const count of [100, 2_000]) {
      const store = countingStore(1024 * 1024);
      await store.start();
      const runs = manager(store, fleet(count), { now: T0 });
      await runs.start();
      await startRun(runs);
      store.written.length = 0;
      await succeed(runs, 3);
      sizes.push(Math.max(...store.written));
    }
    // The largest single write of a batch at 2,000 members is within a small factor of the one at
    // 100 (it names members, not the run); storing the whole run would be ~20 times larger.
    expect(sizes[1]).toBeLessThan((sizes[0] ?? 0) * 3);
  });

  it("keeps a finished run as one snapshot and drops its journal", async () => {
    const store = countingStore(64 * 1024);
    await store.start();
    const dir = fleet(40);
    const runs = manager(store, dir, { now: T0 });
    await runs.start();
    await startRun(runs);
    await succeed(runs, 10);
    expect(runs.get("big").run.state).toBe("Completed");
    const keys = (await store.list(RUN_LOG)).map((e) => e.key);
    expect(keys.filter((k) => k.startsWith("big.j."))).toEqual([]);
    const again = manager(store, dir, { now: T0 });
    await again.start();
    expect(again.get("big").run.state).toBe("Completed");
    expect(again.get("big").revision).toBe(runs.get("big").revision);
  });

  it("undoes a batch the store refused: the command fails, the observation is applied once the store is back", async () => {
    const store = countingStore(64 * 1024);
    await store.start();
    const dir = fleet(20);
    const runs = manager(store, dir, { now: T0 });
    await runs.start();
    await startRun(runs);
    const before = runs.get("big");
    const running = members(before.run).filter((m) => m.state === "Running");
    const target = running[0]?.name ?? "";
    const beforeJson = JSON.stringify(before.run);

    store.failing = true;
    await expect(
      runs.command("big", { type: "StopRun", actor: "test", reason: "" }),
    ).rejects.toThrow("store down");
    runs.memberReport(target, "big", ready());
    // Nothing of either is visible while the store is down, however often the batch is retried...
    await expect.poll(() => store.refused).toBeGreaterThanOrEqual(3);
    expect(runs.get("big").revision).toBe(before.revision);
    expect(runs.get("big").run.state).toBe("Running");
    expect(JSON.stringify(runs.get("big").run)).toBe(beforeJson);

    // ...and once it is back the report counts, the refused stop does not.
    store.failing = false;
    await runs.idle();
    await expect
      .poll(
        () =>
          members(runs.get("big").run).find((m) => m.name === target)?.state,
      )
      .toBe("Succeeded");
    expect(runs.get("big").run.state).toBe("Running");
  });

  it("loads a run stored whole by an earlier version and journals on top of it", async () => {
    const store = countingStore(1024 * 1024);
    await store.start();
    const dir = fleet(5);
    const clock = { now: T0 };
    const runs = manager(store, dir, clock);
    await runs.start();
    await startRun(runs);
    const run = runs.get("big").run;
    // The earlier format: `{run, strategyName}` under the run's name, nothing else.
    const fresh = createMemoryStore();
    await fresh.start();
    await fresh.put(RUN_LOG, "big", { run, strategyName: "rings" });
    const upgraded = manager(fresh, dir, clock);
    await upgraded.start();
    expect(upgraded.get("big").strategyName).toBe("rings");
    expect(JSON.stringify(upgraded.get("big").run)).toBe(JSON.stringify(run));
    await succeed(upgraded, 10);
    expect(upgraded.get("big").run.state).toBe("Completed");
    const reread = manager(fresh, dir, clock);
    await reread.start();
    expect(reread.get("big").run.state).toBe("Completed");
  });
});
