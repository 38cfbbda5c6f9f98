import { describe, expect, it } from "vitest";
import type { Cluster } from "../src/cluster.js";
import type { Maintenance } from "../src/maintenance/windows.js";
import {
  bundleClusterState,
  isUnavailable,
  rolloutPass,
  type DeploymentObservation,
  type PassInput,
} from "../src/fleet/rollout-pass.js";
import {
  allReady,
  applyReleases,
  cluster,
  fleetOf,
  markReady,
  notReadyAt,
  readyAt,
  strategy,
  waitingFor,
} from "./fleet-fixtures.js";

const NOW = Date.UTC(2026, 2, 2, 10);
const HOUR = 3_600_000;

function pass(
  raw: unknown,
  targets: readonly Cluster[],
  deployments: ReadonlyMap<string, DeploymentObservation> = new Map(),
  extra: Partial<PassInput> = {},
) {
  return rolloutPass({
    strategy: strategy(raw),
    targets,
    clusterGroups: [],
    revision: "rev-2",
    deployments,
    nowMs: NOW,
    ...extra,
  });
}

const released = (r: ReturnType<typeof pass>): string[] =>
  r.release.map((d) => d.cluster);
const names = (targets: readonly Cluster[]): string[] =>
  targets.map((c) => c.name);

function workloadsWindow(startMs: number, endMs: number): Maintenance {
  return {
    windows: {
      kubernetes: [],
      nodeImage: [],
      workloads: [{ type: "OneOff", startMs, endMs }],
    },
    freezes: [],
  };
}

describe("cluster states (docs/semantics.md#cluster-states)", () => {
  const base = {
    ready: false,
    errored: false,
    modified: false,
    unreachable: false,
  };
  it.each([
    ["Pending", base, false],
    ["OutOfSync", readyAt("rev-1"), false],
    ["WaitApplied", waitingFor("rev-2", "rev-1"), true],
    ["WaitApplied", waitingFor("rev-2"), true],
    ["ErrApplied", { ...waitingFor("rev-2", "rev-1"), errored: true }, true],
    ["ErrApplied", { ...readyAt("rev-2"), errored: true }, true],
    ["NotReady", notReadyAt("rev-2"), true],
    ["NotReady", notReadyAt("rev-1"), true],
    ["Modified", { ...readyAt("rev-2"), modified: true }, false],
    ["Ready", readyAt("rev-2"), false],
  ] as const)(
    "%s (unavailable: %s)",
    (state, o: DeploymentObservation, unavailable) => {
      expect(bundleClusterState(o, "rev-2")).toBe(state);
      expect(isUnavailable(o)).toBe(unavailable);
    },
  );

  it("counts an unreachable agent as unavailable whatever it last reported (docs/semantics.md#offline-clusters)", () => {
    expect(isUnavailable({ ...readyAt("rev-2"), unreachable: true })).toBe(
      true,
    );
    expect(
      bundleClusterState({ ...readyAt("rev-2"), unreachable: true }, "rev-2"),
    ).toBe("Ready");
  });

  it("reports every target's state before the pass, byte order, Pending when never observed", () => {
    const targets = [cluster("c-2"), cluster("c-10"), cluster("c-1")];
    const r = pass({}, targets, new Map([["c-10", readyAt("rev-1")]]));
    expect([...r.states]).toEqual([
      ["c-1", "Pending"],
      ["c-10", "OutOfSync"],
      ["c-2", "Pending"],
    ]);
    // Within a partition the first-deployment batch is decided before the updates.
    expect(r.release.map((d) => [d.cluster, d.kind])).toEqual([
      ["c-1", "first"],
      ["c-2", "first"],
      ["c-10", "update"],
    ]);
  });
});

describe("updates (docs/semantics.md#releasing)", () => {
  const targets = fleetOf(10);
  const old = allReady(names(targets), "rev-1");

  it("releases updates one cluster at a time while unavailable < maxUnavailable, in name order", () => {
    const r = pass({ maxUnavailable: 2 }, targets, old);
    expect(released(r)).toEqual(["c-000", "c-001"]);
    expect(
      r.release.every((d) => d.kind === "update" && d.revision === "rev-2"),
    ).toBe(true);
    expect(r.unavailable).toBe(2);
    expect(r.held.map((h) => h.reason)).toEqual(
      Array(8).fill("MaxUnavailable"),
    );
    const waiting = applyReleases(old, r);
    expect(pass({ maxUnavailable: 2 }, targets, waiting).release).toEqual([]);
    const oneDone = markReady(waiting, ["c-000"]);
    expect(released(pass({ maxUnavailable: 2 }, targets, oneDone))).toEqual([
      "c-002",
    ]);
  });

  it("switches a cluster already unavailable at an older revision regardless of the limits (Fleet)", () => {
    const deployments = new Map(old);
    deployments.set("c-000", notReadyAt("rev-2"));
    deployments.set("c-005", notReadyAt("rev-1"));
    const r = pass({ maxUnavailable: 1 }, targets, deployments);
    expect(released(r)).toEqual(["c-005"]);
    expect(r.unavailable).toBe(2);
  });

  it("counts releases of already-unavailable clusters toward maxNew", () => {
    const deployments = new Map(
      names(targets).map((n) => [n, notReadyAt("rev-1")]),
    );
    const r = pass({ maxNew: 3 }, targets, deployments);
    expect(released(r)).toEqual(["c-000", "c-001", "c-002"]);
    expect(r.held.every((h) => h.reason === "MaxNew")).toBe(true);
  });

  it("caps updates at maxNew per pass even when maxUnavailable would allow more", () => {
    const many = fleetOf(120);
    const r = pass({}, many, allReady(names(many), "rev-1"));
    expect(r.release).toHaveLength(50);
  });

  it("does not let Modified clusters block a rollout", () => {
    const deployments = new Map(old);
    for (const n of ["c-000", "c-001"])
      deployments.set(n, { ...readyAt("rev-2"), modified: true });
    const r = pass({ maxUnavailable: 1 }, targets, deployments);
    expect(released(r)).toEqual(["c-002"]);
  });

  it("lets an unreachable cluster hold one unit of the budget", () => {
    const deployments = new Map(old);
    deployments.set("c-009", { ...readyAt("rev-2"), unreachable: true });
    expect(pass({ maxUnavailable: 1 }, targets, deployments).release).toEqual(
      [],
    );
    expect(released(pass({ maxUnavailable: 2 }, targets, deployments))).toEqual(
      ["c-000"],
    );
  });

  it("applies the bundle-wide limit across partitions as well as each partition's", () => {
    const two = fleetOf(10, (i) => ({ half: i < 5 ? "a" : "b" }));
    const s = {
      maxUnavailable: 3,
      maxUnavailablePartitions: 1,
      partitions: [
        {
          name: "a",
          maxUnavailable: 5,
          clusterSelector: { matchLabels: { half: "a" } },
        },
        {
          name: "b",
          maxUnavailable: 5,
          clusterSelector: { matchLabels: { half: "b" } },
        },
      ],
    };
    const r = pass(s, two, allReady(names(two), "rev-1"));
    expect(released(r)).toEqual(["c-000", "c-001", "c-002"]);
    expect(r.held.find((h) => h.cluster === "c-005")?.message).toMatch(
      /bundle has 3 unavailable/,
    );
  });
});

describe("first deployments (docs/semantics.md#releasing)", () => {
  it("starts a batch only while both counts are below their limits and counts it as unavailable at once", () => {
    const targets = fleetOf(30);
    const s = { maxUnavailable: 2, maxNew: 10 };
    const first = pass(s, targets);
    expect(released(first)).toEqual(names(targets).slice(0, 10));
    expect(first.unavailable).toBe(10);
    let deployments = applyReleases(new Map(), first);
    expect(pass(s, targets, deployments).release).toEqual([]);
    deployments = markReady(deployments, names(targets).slice(0, 9));
    expect(released(pass(s, targets, deployments))).toEqual(
      names(targets).slice(10, 20),
    );
  });

  it("shares maxNew across partitions and between first deployments and updates", () => {
    const targets = fleetOf(6, (i) => ({ half: i < 3 ? "a" : "b" }));
    const s = {
      maxNew: 4,
      maxUnavailablePartitions: 1,
      partitions: [
        { name: "a", clusterSelector: { matchLabels: { half: "a" } } },
        { name: "b", clusterSelector: { matchLabels: { half: "b" } } },
      ],
    };
    const deployments = new Map([["c-004", readyAt("rev-1")]]);
    const r = pass(s, targets, deployments);
    expect(r.release.map((d) => [d.cluster, d.partition, d.kind])).toEqual([
      ["c-000", "a", "first"],
      ["c-001", "a", "first"],
      ["c-002", "a", "first"],
      ["c-003", "b", "first"],
    ]);
    expect(r.held.map((h) => [h.cluster, h.reason])).toEqual([
      ["c-005", "MaxNew"],
      ["c-004", "MaxNew"],
    ]);
  });

  it("gives a cluster that joins mid-rollout the current revision in its turn", () => {
    const targets = fleetOf(4);
    const deployments = allReady(["c-000", "c-001", "c-003"], "rev-2");
    const r = pass({ maxUnavailable: 1 }, targets, deployments);
    expect(r.release).toEqual([
      { cluster: "c-002", partition: "All", revision: "rev-2", kind: "first" },
    ]);
  });

  it("releases nothing with maxNew 0", () => {
    const r = pass({ maxNew: 0 }, fleetOf(3));
    expect(r.release).toEqual([]);
    expect(r.held.map((h) => h.reason)).toEqual(["MaxNew", "MaxNew", "MaxNew"]);
  });
});

describe("partition gating (docs/semantics.md#releasing)", () => {
  const targets = fleetOf(6, (i) => ({ half: i < 3 ? "a" : "b" }));
  const twoParts = (extra: object) => ({
    ...extra,
    partitions: [
      { name: "a", clusterSelector: { matchLabels: { half: "a" } } },
      { name: "b", clusterSelector: { matchLabels: { half: "b" } } },
    ],
  });

  it("counts not-yet-released clusters toward a partition's NotReady predicate", () => {
    const r = pass(twoParts({ maxUnavailable: 1, maxNew: 1 }), targets);
    expect(released(r)).toEqual(["c-000"]);
    // 1 released (unavailable) + 2 not released = 3 > 1.
    expect(r.partitions[0]).toMatchObject({
      notReadyCount: 3,
      notReady: true,
      unavailable: 1,
      released: 1,
      visited: true,
    });
    expect(r.stoppedAfter).toBe("a");
    expect(r.partitions[1]).toMatchObject({ visited: false, released: 0 });
    expect(
      r.held
        .filter((h) => h.partition === "b")
        .every((h) => h.reason === "PartitionsNotReady"),
    ).toBe(true);
  });

  it("does not report stoppedAfter when only the last partition is NotReady", () => {
    const deployments = allReady(["c-000", "c-001", "c-002"], "rev-2");
    const r = pass(twoParts({ maxUnavailable: 0 }), targets, deployments);
    expect(released(r)).toEqual(["c-003", "c-004", "c-005"]);
    expect(r.notReadyPartitions).toBe(1);
    expect(r.stoppedAfter).toBeUndefined();
  });

  it("never releases to unassigned clusters and reports them", () => {
    const s = {
      partitions: [
        { name: "a", clusterSelector: { matchLabels: { half: "a" } } },
      ],
    };
    const r = pass(s, targets);
    expect(released(r)).toEqual(["c-000", "c-001", "c-002"]);
    expect(r.unassigned).toEqual(["c-003", "c-004", "c-005"]);
    expect(r.held.map((h) => h.cluster)).toEqual([]);
  });
});

describe("workload windows and pause", () => {
  it("holds a cluster whose workloads window is closed, with the next opening, and releases the rest", () => {
    const opens = NOW + 2 * HOUR;
    const targets = [
      {
        ...cluster("c-0"),
        maintenance: workloadsWindow(opens, opens + 4 * HOUR),
      },
      {
        ...cluster("c-1"),
        maintenance: workloadsWindow(NOW - HOUR, NOW + HOUR),
      },
      cluster("c-2"),
    ];
    const r = pass({ maxNew: 2 }, targets);
    expect(released(r)).toEqual(["c-1", "c-2"]);
    expect(r.held).toEqual([
      {
        cluster: "c-0",
        partition: "All",
        reason: "WindowClosed",
        nextOpeningMs: opens,
        message:
          "workloads maintenance window closed; next opening 2026-03-02T12:00:00.000Z",
      },
    ]);
    expect(r.states.get("c-0")).toBe("Pending");
    const later = pass({ maxNew: 2 }, targets, applyReleases(new Map(), r), {
      nowMs: opens,
    });
    expect(released(later)).toEqual(["c-0"]);
  });

  it("holds updates too: the window governs every release to the cluster", () => {
    const targets = [
      {
        ...cluster("c-0"),
        maintenance: workloadsWindow(NOW + HOUR, NOW + 2 * HOUR),
      },
    ];
    const r = pass({}, targets, allReady(["c-0"], "rev-1"));
    expect(r.release).toEqual([]);
    expect(r.held[0]?.reason).toBe("WindowClosed");
    expect(r.states.get("c-0")).toBe("OutOfSync");
  });

  it("releases nothing while paused", () => {
    const targets = fleetOf(3);
    const r = pass({}, targets, allReady(["c-000"], "rev-1"), { paused: true });
    expect(r.release).toEqual([]);
    expect(r.held.map((h) => [h.cluster, h.reason])).toEqual([
      ["c-000", "Paused"],
      ["c-001", "Paused"],
      ["c-002", "Paused"],
    ]);
  });
});
