/**
 * docs/semantics.md#offline-clusters in the run manager: a member not yet started while its agent
 * is unreachable waits (Pending, reason Unreachable) like one whose window is closed, also when the
 * agent was already unreachable when the run was created, and a hub that restarts with a member
 * flagged unreachable in the stored run clears the flag once its directory counts the agent
 * reachable.
 */
import { parseUpdateStrategy } from "@flotilla/core";
import { describe, expect, it } from "vitest";
import type { ClusterDirectory } from "../src/clusters/cluster-directory.js";
import type { RunManager } from "../src/runs/run-manager.js";
import { createMemoryStore } from "../src/store/memory-store.js";
import type { StateStore } from "../src/store/state-store.js";
import {
  createAndStartUp,
  NOW,
  prodDirectory as directory,
  prodManager,
} from "./run-manager-fixture.js";

function manager(store: StateStore, dir: ClusterDirectory): RunManager {
  return prodManager(store, { directory: dir });
}

const strategy = parseUpdateStrategy({
  stages: [
    {
      name: "prod",
      memberSelector: { byLabel: "env=prod" },
      maxConcurrency: 1,
    },
  ],
});

function createAndStart(
  runs: RunManager,
  beforeStart?: () => void,
): Promise<void> {
  return createAndStartUp(
    runs,
    beforeStart === undefined ? {} : { beforeStart },
  );
}

function states(
  runs: RunManager,
): Record<string, [string, string | undefined]> {
  const members = runs
    .get("up")
    .run.stages.flatMap((s) => s.groups.flatMap((g) => g.members));
  return Object.fromEntries(members.map((m) => [m.name, [m.state, m.reason]]));
}

describe("run manager: unreachable members (docs/semantics.md#offline-clusters)", () => {
  it("holds a member whose agent is already unreachable when the run is created", async () => {
    const store = createMemoryStore();
    await store.start();
    const runs = manager(store, directory(new Set(["prod-01"])));
    await runs.start();
    await createAndStart(runs);
    expect(states(runs)).toEqual({
      "prod-01": ["Pending", "Unreachable"],
      "prod-02": ["Running", undefined],
      "prod-03": ["NotStarted", undefined],
    });
  });

  it("clears a stored unreachable flag when a restarted hub counts the agent reachable", async () => {
    const store = createMemoryStore();
    await store.start();
    const unreachable = new Set<string>();
    const first = manager(store, directory(unreachable));
    await first.start();
    await createAndStart(first, () => {
      unreachable.add("prod-01");
      first.clusterChanged({ type: "unreachable", cluster: "prod-01" });
    });
    expect(states(first)["prod-01"]).toEqual(["Pending", "Unreachable"]);
    first.stop();

    // A new hub over the same store: its registry counts every agent reachable at first.
    unreachable.clear();
    const second = manager(store, directory(unreachable));
    await second.start();
    await second.idle();
    const members = second.get("up").run.stages[0]!.groups[0]!.members;
    expect(members.find((m) => m.name === "prod-01")?.unreachable).toBe(false);
    // prod-02 is still in flight; once it succeeds, prod-01 is the next to start.
    second.memberReport("prod-02", "up", {
      sequence: 1,
      generation: 1,
      subject: { kind: "upgrade", upgradeId: "up" },
      phase: "Ready",
      reasons: [],
      reasonsTruncated: 0,
      observedAtMs: NOW,
    });
    await second.idle();
    expect(states(second)["prod-01"]).toEqual(["Running", undefined]);
    expect(states(second)["prod-02"]).toEqual(["Succeeded", undefined]);
  });
});

describe("run records", () => {
  it("keep the strategy a run was created from across a hub restart", async () => {
    const store = createMemoryStore();
    await store.start();
    if (!strategy.ok) throw new Error("strategy");
    const first = manager(store, directory(new Set()));
    await first.start();
    await first.create({
      name: "r",
      strategy: strategy.value,
      strategyName: "rings",
      payload: {
        kind: "upgrade",
        upgrade: {
          type: "Full",
          kubernetesVersion: "1.30.3",
          nodeImageSelection: "Latest",
        },
      },
    });
    const second = manager(store, directory(new Set()));
    await second.start();
    expect(second.get("r").strategyName).toBe("rings");
    expect(second.get("r").run.name).toBe("r");
  });
});
