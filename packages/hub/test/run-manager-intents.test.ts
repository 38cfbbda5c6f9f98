/**
 * The run manager publishes the intent changes core returned, and nothing else: a started member's
 * intent holds the run's upgrade, a failed member's loses it. A hub that stored a batch but could
 * not publish it republishes, when it starts, what core's `runIntents` says the stored run implies.
 */
import type { UpgradeIntent } from "@flotilla/core";
import type { StatusReport } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import {
  createIntentWriter,
  type IntentWriter,
} from "../src/intents/intent-writer.js";
import {
  createMemoryIntentPublisher,
  type MemoryIntentPublisher,
} from "../src/intents/memory-intent-publisher.js";
import type { RunManager } from "../src/runs/run-manager.js";
import { createMemoryStore } from "../src/store/memory-store.js";
import type { StateStore } from "../src/store/state-store.js";
import { createAndStartUp, NOW, prodManager } from "./run-manager-fixture.js";

function manager(store: StateStore, intents: IntentWriter): RunManager {
  return prodManager(store, { intents });
}

/** An intent writer whose every write fails, as when NATS is away. */
const unwritable: IntentWriter = {
  change: () => Promise.reject(new Error("NATS is away")),
  current: () => Promise.reject(new Error("NATS is away")),
  refresh: () => Promise.reject(new Error("NATS is away")),
  follow: () => Promise.resolve(),
  peek: () => undefined,
  remove: () => Promise.reject(new Error("NATS is away")),
};

function createAndStart(runs: RunManager): Promise<void> {
  return createAndStartUp(runs, { maxAllowedFailures: 1 });
}

function failed(): StatusReport {
  return {
    sequence: 1,
    generation: 1,
    subject: { kind: "upgrade", upgradeId: "up" },
    phase: "Failed",
    error: "the upgrade failed",
    reasons: [],
    reasonsTruncated: 0,
    observedAtMs: NOW,
  };
}

/** The upgrade each cluster's published intent holds. */
function upgrades(
  publisher: MemoryIntentPublisher,
): Record<string, UpgradeIntent | undefined> {
  return Object.fromEntries(
    [...publisher.snapshot()].map(([cluster, p]) => [
      cluster,
      p.intent.upgrade,
    ]),
  );
}

describe("run manager: member intents", () => {
  it("publishes core's changes: the started member holds the upgrade, a failed one loses it", async () => {
    const store = createMemoryStore();
    await store.start();
    const publisher = createMemoryIntentPublisher();
    await publisher.start();
    const runs = manager(store, createIntentWriter(publisher));
    await runs.start();
    await createAndStart(runs);
    expect(upgrades(publisher)).toEqual({
      "prod-01": {
        run: "up",
        type: "Full",
        target: expect.objectContaining({ kubernetesVersion: "1.30.3" }),
      },
    });

    runs.memberReport("prod-01", "up", failed());
    await runs.idle();
    const after = upgrades(publisher);
    expect(after["prod-01"]).toBeUndefined();
    expect(after["prod-02"]?.run).toBe("up");
    expect(publisher.snapshot().get("prod-01")?.intent.generation).toBe(2);
  });

  it("republishes what the stored run implies when a hub that could not publish starts again", async () => {
    const store = createMemoryStore();
    await store.start();
    const first = manager(store, unwritable);
    await first.start();
    await createAndStart(first);
    // The batch that started prod-01 is stored, but its intent never reached NATS.
    expect(first.get("up").run.stages[0]?.groups[0]?.members[0]?.state).toBe(
      "Running",
    );
    first.stop();

    const publisher = createMemoryIntentPublisher();
    await publisher.start();
    const second = manager(store, createIntentWriter(publisher));
    await second.start();
    await second.idle();
    expect(Object.keys(upgrades(publisher))).toEqual(["prod-01"]);
    expect(upgrades(publisher)["prod-01"]?.run).toBe("up");
  });
});
