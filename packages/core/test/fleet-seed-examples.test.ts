/**
 * Every worked example of Rancher Fleet's rollout-strategy documentation, named after it, with
 * docs/semantics.md#partitioned-rollouts deciding where the seed and Fleet's code disagree.
 */
import { describe, expect, it } from "vitest";
import type {
  DeploymentObservation,
  PassInput,
} from "../src/fleet/rollout-pass.js";
import { rolloutPass } from "../src/fleet/rollout-pass.js";
import { formPartitions } from "../src/fleet/partitions.js";
import { fleetWarnings } from "../src/fleet/warnings.js";
import type { Cluster } from "../src/cluster.js";
import {
  applyReleases,
  cluster,
  fleetOf,
  markReady,
  notReadyAt,
  readyAt,
  sizes,
  strategy,
} from "./fleet-fixtures.js";

const REV = "rev-2";
const NOW = Date.UTC(2026, 2, 2, 10);

function pass(
  raw: unknown,
  targets: readonly Cluster[],
  deployments: ReadonlyMap<string, DeploymentObservation> = new Map(),
  revision = REV,
) {
  const input: PassInput = {
    strategy: strategy(raw),
    targets,
    clusterGroups: [],
    revision,
    deployments,
    nowMs: NOW,
  };
  return rolloutPass(input);
}

const released = (r: ReturnType<typeof pass>): string[] =>
  r.release.map((d) => d.cluster);

describe("Rancher Fleet seed: automatic partitioning", () => {
  it("200 clusters at autoPartitionSize 25% make four partitions of 50", () => {
    expect(
      sizes(formPartitions(strategy(), fleetOf(200), []).partitions),
    ).toEqual([50, 50, 50, 50]);
  });

  it("230 clusters at autoPartitionSize 25% make four partitions of 57 and one of 2", () => {
    expect(
      sizes(
        formPartitions(strategy({ autoPartitionSize: "25%" }), fleetOf(230), [])
          .partitions,
      ),
    ).toEqual([57, 57, 57, 57, 2]);
  });

  it("autoPartitionThreshold 50 with autoPartitionSize 50% makes two partitions of 25 from 50 clusters", () => {
    const plan = formPartitions(
      strategy({ autoPartitionThreshold: 50, autoPartitionSize: "50%" }),
      fleetOf(50),
      [],
    );
    expect(sizes(plan.partitions)).toEqual([25, 25]);
  });

  it("without autoPartitionThreshold those 50 clusters stay in a single partition (default 200)", () => {
    const plan = formPartitions(
      strategy({ autoPartitionSize: "50%" }),
      fleetOf(50),
      [],
    );
    expect(plan.partitions.map((p) => [p.name, p.clusters.length])).toEqual([
      ["All", 50],
    ]);
  });
});

describe("Rancher Fleet seed: batches of maxNew", () => {
  it("a partition of 25 clusters with maxUnavailable 5 deploys all 25 before maxUnavailable is checked", () => {
    const r = pass({ maxUnavailable: 5 }, fleetOf(25));
    expect(
      r.partitions.map((p) => [p.clusters.length, p.maxUnavailable]),
    ).toEqual([[25, 5]]);
    expect(r.release).toHaveLength(25);
    expect(r.release.every((d) => d.kind === "first")).toBe(true);
    // The check happens after the batch: the partition is now NotReady and the next batch would wait.
    expect(r.partitions[0]?.notReady).toBe(true);
  });

  it("a partition of 100 clusters deploys the first 50 (maxNew), checks maxUnavailable, then continues", () => {
    const first = pass({ maxUnavailable: "10%" }, fleetOf(100));
    expect(first.release).toHaveLength(50);
    expect(released(first)).toEqual(fleetOf(50).map((c) => c.name));
    expect(first.held.filter((h) => h.reason === "MaxNew")).toHaveLength(50);
  });
});

describe("Rancher Fleet seed: manual partitioning", () => {
  const targets = [
    ...Array.from({ length: 3 }, (_, i) =>
      cluster(`staging-${String(i)}`, { env: "staging" }),
    ),
    ...Array.from({ length: 20 }, (_, i) =>
      cluster(`prod-${String(i).padStart(2, "0")}`, { env: "prod" }),
    ),
  ];
  const demo = {
    partitions: [
      {
        name: "demoRollout",
        maxUnavailable: "10%",
        clusterSelector: { matchLabels: { env: "staging" } },
      },
      {
        name: "stable",
        maxUnavailable: "5%",
        clusterSelector: { matchLabels: { env: "prod" } },
      },
    ],
  };

  it("demoRollout (env: staging, 10%) and stable (env: prod, 5%) are selected by clusterSelector in declared order", () => {
    const plan = formPartitions(strategy(demo), targets, []);
    expect(
      plan.partitions.map((p) => [p.name, p.clusters.length, p.maxUnavailable]),
    ).toEqual([
      ["demoRollout", 3, 1],
      ["stable", 20, 1],
    ]);
  });

  it("starts with demoRollout, waits until it is Ready, then proceeds to stable", () => {
    const first = pass(demo, targets);
    expect(released(first)).toEqual(["staging-0", "staging-1", "staging-2"]);
    expect(first.stoppedAfter).toBe("demoRollout");
    let deployments = applyReleases(new Map(), first);
    // Two of three still NotReady: 2 > 1 keeps the partition NotReady.
    deployments = markReady(deployments, ["staging-0"]);
    expect(pass(demo, targets, deployments).release).toEqual([]);
    // One NotReady is within maxUnavailable 1 (10% of 3, at least 1): stable starts.
    deployments = markReady(deployments, ["staging-1"]);
    const next = pass(demo, targets, deployments);
    expect(next.partitions[0]?.notReady).toBe(false);
    expect(next.release.every((d) => d.partition === "stable")).toBe(true);
    expect(next.release).toHaveLength(20);
  });
});

describe("Rancher Fleet seed: preventing image pull storms", () => {
  // 200 clusters manually partitioned into five partitions of 40; maxUnavailablePartitions 0, maxUnavailable 10%.
  const targets = fleetOf(200, (i) => ({ wave: String(Math.floor(i / 40)) }));
  const storm = {
    maxUnavailablePartitions: 0,
    maxUnavailable: "10%",
    partitions: [0, 1, 2, 3, 4].map((w) => ({
      name: `wave-${String(w)}`,
      clusterSelector: { matchLabels: { wave: String(w) } },
    })),
  };
  const wave = (w: number): string[] =>
    targets.slice(w * 40, w * 40 + 40).map((c) => c.name);

  it("deploys all 40 clusters of the first partition in one batch", () => {
    const r = pass(storm, targets);
    expect(released(r)).toEqual(wave(0));
    expect(r.stoppedAfter).toBe("wave-0");
  });

  it("pauses while more than 4 of the 40 are NotReady and proceeds once at most 4 are", () => {
    let deployments = new Map<string, DeploymentObservation>(
      wave(0).map((n) => [n, notReadyAt(REV)]),
    );
    deployments = markReady(deployments, wave(0).slice(0, 35));
    const five = pass(storm, targets, deployments);
    expect(five.partitions[0]?.notReadyCount).toBe(5);
    expect(five.partitions[0]?.notReady).toBe(true);
    expect(five.release).toEqual([]);
    expect(five.stoppedAfter).toBe("wave-0");

    deployments = markReady(deployments, wave(0).slice(35, 36));
    const four = pass(storm, targets, deployments);
    expect(four.partitions[0]?.notReady).toBe(false);
    expect(released(four)).toEqual(wave(1));
  });
});

describe("Rancher Fleet seed: Scenario 50 clusters (single partition)", () => {
  it("maxUnavailable 10% deploys all 50 clusters at once: the batch overrides maxUnavailable initially", () => {
    const r = pass({ maxUnavailable: "10%" }, fleetOf(50));
    expect(r.partitions).toHaveLength(1);
    expect(r.release).toHaveLength(50);
    expect(r.limits.maxUnavailable).toBe(5);
  });
});

describe("Rancher Fleet seed: Scenario 100 clusters (single partition)", () => {
  const s = { maxUnavailable: "10%" };
  const targets = fleetOf(100);
  const names = targets.map((c) => c.name);

  it("maxUnavailable 10% releases 50 at once and holds the other 50 until fewer than 10 are NotReady", () => {
    const first = pass(s, targets);
    expect(released(first)).toEqual(names.slice(0, 50));
    let deployments = applyReleases(new Map(), first);

    // 10 NotReady: not fewer than 10, so the remaining 50 wait.
    deployments = markReady(deployments, names.slice(0, 40));
    const ten = pass(s, targets, deployments);
    expect(ten.release).toEqual([]);
    expect(ten.unavailable).toBe(10);
    expect(new Set(ten.held.map((h) => h.reason))).toEqual(
      new Set(["MaxUnavailable"]),
    );
    expect(ten.held).toHaveLength(50);

    // 9 NotReady: the remaining 50 go out as one batch.
    deployments = markReady(deployments, names.slice(40, 41));
    const nine = pass(s, targets, deployments);
    expect(released(nine)).toEqual(names.slice(50));
  });
});

describe("Rancher Fleet seed: Scenario 200 clusters (multiple partitions)", () => {
  const targets = fleetOf(200);
  const names = targets.map((c) => c.name);
  const slice = (k: number): string[] => names.slice(k * 20, k * 20 + 20);

  it("maxUnavailablePartitions 1 with autoPartitionSize 10% makes ten partitions of 20", () => {
    const plan = formPartitions(
      strategy({ maxUnavailablePartitions: 1, autoPartitionSize: "10%" }),
      targets,
      [],
    );
    expect(sizes(plan.partitions)).toEqual(Array(10).fill(20));
    expect(plan.limits.maxUnavailablePartitions).toBe(1);
  });

  // The seed's settings leave maxUnavailable at 100%, under which no partition can ever be NotReady
  // (docs/semantics.md#releasing; fleet.md section 8 row 7). maxUnavailable "10%" (2 per partition)
  // makes the partition gate observable, which is what the scenario describes.
  const gated = {
    maxUnavailablePartitions: 1,
    autoPartitionSize: "10%",
    maxUnavailable: "10%",
  };

  it("one NotReady partition is passed: the rollout proceeds to the next", () => {
    const deployments = new Map<string, DeploymentObservation>(
      slice(0).map((n) => [n, readyAt(REV)]),
    );
    for (const n of slice(0).slice(0, 3)) deployments.set(n, notReadyAt(REV));
    const r = pass(gated, targets, deployments);
    expect(r.partitions[0]?.notReady).toBe(true);
    expect(released(r)).toEqual(slice(1));
    // The second partition is now NotReady too: two exceed 1, so the pass stops after it.
    expect(r.notReadyPartitions).toBe(2);
    expect(r.stoppedAfter).toBe("Partition 20 - 40");
    expect(r.partitions[2]?.visited).toBe(false);
  });

  it("two NotReady partitions pause the rollout", () => {
    const deployments = new Map<string, DeploymentObservation>(
      [...slice(0), ...slice(1)].map((n) => [n, readyAt(REV)]),
    );
    for (const n of [...slice(0).slice(0, 3), ...slice(1).slice(0, 3)])
      deployments.set(n, notReadyAt(REV));
    const r = pass(gated, targets, deployments);
    expect(r.release).toEqual([]);
    expect(r.stoppedAfter).toBe("Partition 20 - 40");
    expect(r.held.every((h) => h.reason === "PartitionsNotReady")).toBe(true);
    expect(r.held).toHaveLength(160);
  });

  it("with the seed's settings as written (maxUnavailable 100%) the same 200 are never gated, and plan warns", () => {
    const seed = { maxUnavailablePartitions: 1, autoPartitionSize: "10%" };
    let deployments = new Map<string, DeploymentObservation>();
    const perPass: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = pass(seed, targets, deployments);
      expect(r.partitions.every((p) => !p.notReady)).toBe(true);
      perPass.push(r.release.length);
      deployments = applyReleases(deployments, r); // nothing ever becomes Ready
    }
    expect(perPass).toEqual([50, 50, 50, 50]);
    const plan = formPartitions(strategy(seed), targets, []);
    const codes = fleetWarnings(
      strategy(seed),
      plan.partitions,
      plan.limits,
      plan.unassigned,
    ).map((w) => w.code);
    expect(codes).toContain("MaxUnavailableDisablesGates");
  });
});

describe("Rancher Fleet seed: Scenario 200 clusters (strict readiness, manual partitions)", () => {
  const targets = fleetOf(200, (i) => ({
    stage: i < 20 ? "demoRollout" : "stable",
  }));
  const strict = {
    maxUnavailable: 0,
    maxUnavailablePartitions: 0,
    partitions: [
      {
        name: "demoRollout",
        clusterSelector: { matchLabels: { stage: "demoRollout" } },
      },
      { name: "stable", clusterSelector: { matchLabels: { stage: "stable" } } },
    ],
  };
  const demo = targets.slice(0, 20).map((c) => c.name);

  it("maxUnavailable 0 and maxUnavailablePartitions 0 move to stable only when demoRollout is fully Ready", () => {
    const first = pass(strict, targets);
    expect(released(first)).toEqual(demo);
    expect(first.stoppedAfter).toBe("demoRollout");
    let deployments = applyReleases(new Map(), first);
    deployments = markReady(deployments, demo.slice(0, 19));
    const almost = pass(strict, targets, deployments);
    expect(almost.release).toEqual([]);
    expect(almost.partitions[0]?.notReady).toBe(true);
    deployments = markReady(deployments, demo.slice(19));
    const ready = pass(strict, targets, deployments);
    expect(ready.release.map((d) => d.partition)).toEqual(
      Array(50).fill("stable"),
    );
  });

  it("updates go one cluster at a time, each Ready before the next (docs/semantics.md#limit-zero: a limit of 0 means one at a time)", () => {
    let deployments = new Map<string, DeploymentObservation>(
      targets.map((c) => [c.name, readyAt("rev-1")]),
    );
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = pass(strict, targets, deployments);
      expect(r.release).toHaveLength(1);
      expect(r.release[0]?.kind).toBe("update");
      order.push(released(r)[0] ?? "");
      deployments = applyReleases(deployments, r);
      // While it is NotReady nothing else moves (Fleet's code would never release anything at 0).
      expect(pass(strict, targets, deployments).release).toEqual([]);
      deployments = markReady(deployments, released(r));
    }
    expect(order).toEqual(demo.slice(0, 3));
  });
});

describe("Rancher Fleet seed: rollout strategy defaults", () => {
  it("200 clusters with defaults: 4 partitions of 50, each Ready at once, paced only by maxNew (50 per pass)", () => {
    const targets = fleetOf(200);
    let deployments = new Map<string, DeploymentObservation>();
    const perPass: number[][] = [];
    for (let i = 0; i < 5; i++) {
      const r = pass({}, targets, deployments);
      expect(r.partitions.map((p) => p.maxUnavailable)).toEqual([
        50, 50, 50, 50,
      ]);
      expect(r.partitions.every((p) => !p.notReady)).toBe(true);
      expect(r.stoppedAfter).toBeUndefined();
      perPass.push(r.partitions.map((p) => p.released));
      deployments = applyReleases(deployments, r); // none ever Ready: readiness plays no part
    }
    expect(perPass).toEqual([
      [50, 0, 0, 0],
      [0, 50, 0, 0],
      [0, 0, 50, 0],
      [0, 0, 0, 50],
      [0, 0, 0, 0],
    ]);
  });

  it("230 clusters with defaults go out 50, 50, 50, 50, 30 over five passes (fleet.md section 5)", () => {
    const targets = fleetOf(230);
    let deployments = new Map<string, DeploymentObservation>();
    const counts: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = pass({}, targets, deployments);
      counts.push(r.release.length);
      deployments = applyReleases(deployments, r);
    }
    expect(counts).toEqual([50, 50, 50, 50, 30]);
  });
});
