import { describe, expect, it } from "vitest";
import type { Cluster } from "../src/cluster.js";
import { formPartitions } from "../src/fleet/partitions.js";
import { fleetWarnings } from "../src/fleet/warnings.js";
import { cluster, fleetOf, strategy } from "./fleet-fixtures.js";

function warn(raw: unknown, targets: readonly Cluster[]) {
  const s = strategy(raw);
  const plan = formPartitions(s, targets, []);
  return fleetWarnings(s, plan.partitions, plan.limits, plan.unassigned);
}
const codes = (raw: unknown, targets: readonly Cluster[]): string[] =>
  warn(raw, targets).map((w) => w.code);

const halves = fleetOf(40, (i) => ({ half: i < 20 ? "a" : "b" }));
const twoParts = [
  { name: "a", clusterSelector: { matchLabels: { half: "a" } } },
  { name: "b", clusterSelector: { matchLabels: { half: "b" } } },
];

describe("fleetWarnings", () => {
  it("warns that maxUnavailable 100% (the default) disables every partition gate", () => {
    const found = warn({}, fleetOf(200));
    expect(found.map((w) => w.code)).toEqual(["MaxUnavailableDisablesGates"]);
    expect(found[0]?.message).toBe(
      'maxUnavailable "100%": no partition can ever be NotReady, so partitions never gate and only maxNew (50 per pass) paces the rollout; set maxUnavailable, e.g. "10%"',
    );
  });

  it("gives no warning for a gating strategy", () => {
    expect(
      codes({ maxUnavailable: "10%", partitions: twoParts }, halves),
    ).toEqual([]);
    expect(codes({ maxUnavailable: "10%" }, fleetOf(200))).toEqual([]);
  });

  it("warns about an earlier partition too small for its limit to gate (a 1-cluster canary at 10%)", () => {
    const targets = [cluster("canary", { role: "canary" }), ...fleetOf(20)];
    const found = warn(
      {
        maxUnavailable: "10%",
        partitions: [
          {
            name: "canary",
            clusterSelector: { matchLabels: { role: "canary" } },
          },
          {
            name: "rest",
            clusterSelector: {
              matchExpressions: [{ key: "role", operator: "DoesNotExist" }],
            },
          },
        ],
      },
      targets,
    );
    expect(found.map((w) => w.code)).toEqual(["PartitionNeverGates"]);
    expect(found[0]?.message).toMatch(
      /partition "canary": maxUnavailable resolves to 1 of its 1 cluster/,
    );
  });

  it("warns when maxUnavailablePartitions can never stop the rollout before the last partition", () => {
    expect(
      codes(
        {
          maxUnavailable: "10%",
          maxUnavailablePartitions: 1,
          partitions: twoParts,
        },
        halves,
      ),
    ).toEqual(["MaxUnavailablePartitionsNoGate"]);
    expect(
      codes(
        {
          maxUnavailable: "10%",
          maxUnavailablePartitions: 1,
          autoPartitionSize: "10%",
        },
        fleetOf(200),
      ),
    ).toEqual([]);
    expect(
      codes(
        {
          maxUnavailable: "10%",
          maxUnavailablePartitions: 9,
          autoPartitionSize: "10%",
        },
        fleetOf(200),
      ),
    ).toEqual(["MaxUnavailablePartitionsNoGate"]);
  });

  it('warns that "0%" resolves to 1, not 0', () => {
    const found = warn(
      {
        maxUnavailable: "0%",
        maxUnavailablePartitions: "0%",
        partitions: twoParts,
      },
      halves,
    );
    expect(found.map((w) => w.code)).toEqual([
      "MaxUnavailablePartitionsNoGate",
      "ZeroPercentIsOne",
      "ZeroPercentIsOne",
    ]);
    expect(found[1]?.message).toMatch(/^maxUnavailable "0%" resolves to 1/);
  });

  it("lists unassigned clusters (first five) and suggests unassigned: autoPartition", () => {
    const targets = [
      ...fleetOf(3, () => ({ half: "a" })),
      ...Array.from({ length: 7 }, (_, i) => cluster(`u-${String(i)}`)),
    ];
    const found = warn(
      { maxUnavailable: 0, partitions: [twoParts[0]] },
      targets,
    );
    expect(found.map((w) => w.code)).toEqual(["UnassignedClusters"]);
    expect(found[0]?.message).toBe(
      "manual partitions leave 7 cluster(s) undeployed: u-0, u-1, u-2, u-3, u-4 and 2 more; add partitions for them or set unassigned: autoPartition to deploy them after the manual partitions",
    );
    expect(
      codes(
        {
          maxUnavailable: 0,
          unassigned: "autoPartition",
          partitions: [twoParts[0]],
        },
        targets,
      ),
    ).toEqual([]);
  });

  it("warns that maxNew 0 deploys nothing", () => {
    expect(codes({ maxNew: 0, maxUnavailable: "10%" }, fleetOf(10))).toEqual([
      "MaxNewZero",
    ]);
  });

  it("warns about empty partitions, saying when no criteria are set", () => {
    const found = warn(
      {
        maxUnavailable: 0,
        partitions: [
          { name: "none" },
          { name: "nobody", clusterName: "x" },
          twoParts[0],
          twoParts[1],
        ],
      },
      halves,
    );
    expect(found.map((w) => w.code)).toEqual([
      "EmptyPartition",
      "EmptyPartition",
    ]);
    expect(found[0]?.message).toMatch(/"none" sets none of clusterName/);
    expect(found[1]?.message).toMatch(/"nobody" holds no cluster/);
  });

  it("warns when autoPartitionSize has no effect below the threshold, or partitioning is turned off", () => {
    const below = warn(
      { maxUnavailable: "10%", autoPartitionSize: "50%" },
      fleetOf(50),
    );
    expect(below.map((w) => w.code)).toEqual(["AutoPartitionDisabled"]);
    expect(below[0]?.message).toBe(
      '50 clusters are below autoPartitionThreshold 200, so autoPartitionSize "50%" has no effect: all 50 clusters are in one partition',
    );
    expect(
      codes({ maxUnavailable: "10%", autoPartitionThreshold: 0 }, fleetOf(300)),
    ).toEqual(["AutoPartitionDisabled"]);
    expect(
      codes({ maxUnavailable: "10%", autoPartitionSize: 0 }, fleetOf(300)),
    ).toEqual(["AutoPartitionDisabled"]);
    // Below the threshold with the default size is the documented, intended behaviour: no warning.
    expect(codes({ maxUnavailable: "10%" }, fleetOf(50))).toEqual([]);
  });

  it("warns that autoPartitionSize is ignored with manual partitions", () => {
    expect(
      codes(
        {
          maxUnavailable: "10%",
          autoPartitionSize: "10%",
          partitions: twoParts,
        },
        halves,
      ),
    ).toEqual(["AutoPartitionSizeIgnored"]);
  });
});
