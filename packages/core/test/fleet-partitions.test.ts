import { describe, expect, it } from "vitest";
import { DISPLAY_NAME_LABEL, formPartitions } from "../src/fleet/partitions.js";
import { cluster, fleetOf, group, sizes, strategy } from "./fleet-fixtures.js";

describe("automatic partitions (docs/semantics.md#partition-forming, Fleet's slicing)", () => {
  it("cuts 230 clusters at 25% into 57, 57, 57, 57, 2 with Fleet's offset names", () => {
    const plan = formPartitions(
      strategy({ autoPartitionThreshold: 200 }),
      fleetOf(230),
      [],
    );
    expect(sizes(plan.partitions)).toEqual([57, 57, 57, 57, 2]);
    expect(plan.partitions.map((p) => p.name)).toEqual([
      "Partition 0 - 57",
      "Partition 57 - 114",
      "Partition 114 - 171",
      "Partition 171 - 228",
      "Partition 228 - 230",
    ]);
    expect(plan.partitions.every((p) => p.auto)).toBe(true);
    expect(plan.partitions[4]?.clusters).toEqual(["c-228", "c-229"]);
  });

  it("applies the threshold inclusively: 50 of 50 partition, 49 do not", () => {
    const s = strategy({
      autoPartitionThreshold: 50,
      autoPartitionSize: "50%",
    });
    expect(sizes(formPartitions(s, fleetOf(49), []).partitions)).toEqual([49]);
    expect(sizes(formPartitions(s, fleetOf(50), []).partitions)).toEqual([
      25, 25,
    ]);
  });

  it("makes one partition with threshold 0 or integer size 0, but '0%' means size 1", () => {
    expect(
      sizes(
        formPartitions(
          strategy({ autoPartitionThreshold: 0 }),
          fleetOf(300),
          [],
        ).partitions,
      ),
    ).toEqual([300]);
    expect(
      sizes(
        formPartitions(strategy({ autoPartitionSize: 0 }), fleetOf(300), [])
          .partitions,
      ),
    ).toEqual([300]);
    const tiny = formPartitions(
      strategy({ autoPartitionSize: "0%", autoPartitionThreshold: 3 }),
      fleetOf(3),
      [],
    );
    expect(sizes(tiny.partitions)).toEqual([1, 1, 1]);
  });

  it("names a single slice from an integer size above N 'Partition 0 - N', not 'All'", () => {
    const plan = formPartitions(
      strategy({ autoPartitionSize: 500 }),
      fleetOf(200),
      [],
    );
    expect(plan.partitions.map((p) => p.name)).toEqual(["Partition 0 - 200"]);
  });

  it("gives zero targets one empty 'All' partition with maxUnavailable 1", () => {
    const plan = formPartitions(strategy(), [], []);
    expect(plan.partitions).toEqual([
      { name: "All", clusters: [], maxUnavailable: 1, auto: true },
    ]);
  });

  it("sorts targets by name in byte order (c-10 before c-2), whatever the input order", () => {
    const plan = formPartitions(
      strategy(),
      ["c-2", "c-10", "c-1", "b"].map((n) => cluster(n)),
      [],
    );
    expect(plan.partitions[0]?.clusters).toEqual(["b", "c-1", "c-10", "c-2"]);
  });

  it("resolves each auto partition's maxUnavailable from its own size (at least 1)", () => {
    const plan = formPartitions(
      strategy({ maxUnavailable: "10%" }),
      fleetOf(230),
      [],
    );
    expect(plan.partitions.map((p) => p.maxUnavailable)).toEqual([
      5, 5, 5, 5, 1,
    ]);
    expect(plan.limits.maxUnavailable).toBe(23);
  });
});

describe("resolved limits", () => {
  it("uses fleetLimit for the bundle, the partition count for maxUnavailablePartitions, and keeps int 0", () => {
    const plan = formPartitions(
      strategy({ autoPartitionSize: "10%" }),
      fleetOf(200),
      [],
    );
    expect(plan.limits).toEqual({
      maxUnavailable: 200,
      maxUnavailablePartitions: 0,
      maxNew: 50,
    });
    const some = formPartitions(
      strategy({
        autoPartitionSize: "10%",
        maxUnavailable: 0,
        maxUnavailablePartitions: "50%",
        maxNew: 7,
      }),
      fleetOf(200),
      [],
    );
    expect(some.limits).toEqual({
      maxUnavailable: 0,
      maxUnavailablePartitions: 5,
      maxNew: 7,
    });
    const zeroPercent = formPartitions(
      strategy({ maxUnavailablePartitions: "0%" }),
      fleetOf(200),
      [],
    );
    expect(zeroPercent.limits.maxUnavailablePartitions).toBe(1);
  });
});

describe("manual partitions (docs/semantics.md#partition-forming, Fleet's matcher)", () => {
  const stagingAndProd = [
    ...fleetOf(40, () => ({ env: "staging" })),
    ...Array.from({ length: 160 }, (_, i) =>
      cluster(`p-${String(i).padStart(3, "0")}`, { env: "prod" }),
    ),
  ];

  it("selects demoRollout (staging, 10%) and stable (prod, 5%) by clusterSelector", () => {
    const plan = formPartitions(
      strategy({
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
      }),
      stagingAndProd,
      [],
    );
    expect(
      plan.partitions.map((p) => [
        p.name,
        p.clusters.length,
        p.maxUnavailable,
        p.auto,
      ]),
    ).toEqual([
      ["demoRollout", 40, 4, false],
      ["stable", 160, 8, false],
    ]);
    expect(plan.unassigned).toEqual([]);
    expect(plan.limits.maxUnavailable).toBe(200);
  });

  it("ignores autoPartitionSize and the threshold when partitions are given", () => {
    const plan = formPartitions(
      strategy({
        autoPartitionSize: "10%",
        autoPartitionThreshold: 1,
        partitions: [{ name: "all", clusterSelector: {} }],
      }),
      stagingAndProd,
      [],
    );
    expect(sizes(plan.partitions)).toEqual([200]);
  });

  it("falls back to the strategy's maxUnavailable, then 100% (not Fleet's documented 10%)", () => {
    const spec = { partitions: [{ name: "all", clusterSelector: {} }] };
    expect(
      formPartitions(strategy(spec), fleetOf(40), []).partitions[0]
        ?.maxUnavailable,
    ).toBe(40);
    expect(
      formPartitions(
        strategy({ ...spec, maxUnavailable: "25%" }),
        fleetOf(40),
        [],
      ).partitions[0]?.maxUnavailable,
    ).toBe(10);
  });

  it("matches clusterName against the name or Fleet's display-name label", () => {
    const targets = [
      cluster("c-a"),
      cluster("c-b", { [DISPLAY_NAME_LABEL]: "shop-eu" }),
      cluster("c-c"),
    ];
    const plan = formPartitions(
      strategy({
        partitions: [
          { name: "one", clusterName: "c-a" },
          { name: "two", clusterName: "shop-eu" },
        ],
      }),
      targets,
      [],
    );
    expect(plan.partitions.map((p) => p.clusters)).toEqual([["c-a"], ["c-b"]]);
    expect(plan.unassigned).toEqual(["c-c"]);
  });

  it("matches clusterGroup by listed membership or by the group's selector", () => {
    const groups = [
      group("listed", {}),
      group("eu", {}, { matchLabels: { region: "eu" } }),
    ];
    const targets = [
      cluster("a", {}, ["listed"]),
      cluster("b", { region: "eu" }),
      cluster("c", { region: "us" }),
    ];
    const plan = formPartitions(
      strategy({
        partitions: [
          { name: "l", clusterGroup: "listed" },
          { name: "e", clusterGroup: "eu" },
        ],
      }),
      targets,
      groups,
    );
    expect(plan.partitions.map((p) => p.clusters)).toEqual([["a"], ["b"]]);
    expect(plan.unassigned).toEqual(["c"]);
  });

  it("matches clusterGroupSelector against the group's own labels, not the cluster's", () => {
    const groups = [
      group("g-eu", { tier: "canary" }, { matchLabels: { region: "eu" } }),
    ];
    const targets = [
      cluster("a", { region: "eu" }),
      cluster("b", { region: "us", tier: "canary" }),
    ];
    const plan = formPartitions(
      strategy({
        partitions: [
          {
            name: "canary",
            clusterGroupSelector: { matchLabels: { tier: "canary" } },
          },
        ],
      }),
      targets,
      groups,
    );
    expect(plan.partitions[0]?.clusters).toEqual(["a"]);
    expect(plan.unassigned).toEqual(["b"]);
  });

  it("needs one group to satisfy both clusterGroup and clusterGroupSelector", () => {
    const groups = [group("x", { tier: "a" }), group("y", { tier: "b" })];
    const targets = [
      cluster("both", {}, ["x", "y"]),
      cluster("only-x", {}, ["x"]),
    ];
    const plan = formPartitions(
      strategy({
        partitions: [
          {
            name: "mixed",
            clusterGroup: "x",
            clusterGroupSelector: { matchLabels: { tier: "b" } },
          },
          {
            name: "same",
            clusterGroup: "x",
            clusterGroupSelector: { matchLabels: { tier: "a" } },
          },
        ],
      }),
      targets,
      groups,
    );
    expect(plan.partitions.map((p) => p.clusters)).toEqual([
      [],
      ["both", "only-x"],
    ]);
  });

  it("never matches group criteria for a cluster in no group (docs/semantics.md: any group the cluster belongs to)", () => {
    const plan = formPartitions(
      strategy({ partitions: [{ name: "grouped", clusterGroupSelector: {} }] }),
      [cluster("loner"), cluster("member", {}, ["g"])],
      [group("g", {})],
    );
    expect(plan.partitions[0]?.clusters).toEqual(["member"]);
    expect(plan.unassigned).toEqual(["loner"]);
  });

  it("ANDs every criterion a partition sets", () => {
    const groups = [group("eu", {}, { matchLabels: { region: "eu" } })];
    const targets = [
      cluster("a", { region: "eu", env: "prod" }),
      cluster("b", { region: "eu", env: "dev" }),
      cluster("c", { region: "us", env: "prod" }),
    ];
    const plan = formPartitions(
      strategy({
        partitions: [
          {
            name: "eu-prod",
            clusterGroup: "eu",
            clusterSelector: { matchLabels: { env: "prod" } },
          },
        ],
      }),
      targets,
      groups,
    );
    expect(plan.partitions[0]?.clusters).toEqual(["a"]);
    expect(plan.unassigned).toEqual(["b", "c"]);
    const named = formPartitions(
      strategy({
        partitions: [
          {
            name: "x",
            clusterName: "b",
            clusterSelector: { matchLabels: { env: "prod" } },
          },
        ],
      }),
      targets,
      groups,
    );
    expect(named.partitions[0]?.clusters).toEqual([]);
  });

  it("puts a cluster matching several partitions in the first one only", () => {
    const plan = formPartitions(
      strategy({
        partitions: [
          { name: "canary", clusterName: "c-001" },
          { name: "rest", clusterSelector: {} },
        ],
      }),
      fleetOf(3),
      [],
    );
    expect(plan.partitions.map((p) => p.clusters)).toEqual([
      ["c-001"],
      ["c-000", "c-002"],
    ]);
  });

  it("gives a partition with no criteria no clusters and maxUnavailable 1", () => {
    const plan = formPartitions(
      strategy({
        partitions: [{ name: "empty" }, { name: "all", clusterSelector: {} }],
      }),
      fleetOf(3),
      [],
    );
    expect(plan.partitions[0]).toEqual({
      name: "empty",
      clusters: [],
      maxUnavailable: 1,
      auto: false,
    });
    expect(plan.partitions[1]?.clusters).toHaveLength(3);
  });

  it("reports clusters that match no partition as unassigned and does not deploy them (docs/semantics.md#unassigned-clusters: never dropped silently)", () => {
    const plan = formPartitions(
      strategy({
        partitions: [
          { name: "prod", clusterSelector: { matchLabels: { env: "prod" } } },
        ],
      }),
      [
        cluster("z", { env: "prod" }),
        cluster("b"),
        cluster("a", { env: "dev" }),
      ],
      [],
    );
    expect(plan.partitions.map((p) => p.clusters)).toEqual([["z"]]);
    expect(plan.unassigned).toEqual(["a", "b"]);
    // They still count in the bundle-wide N (Fleet's rule).
    expect(plan.limits.maxUnavailable).toBe(3);
  });

  it("appends unassigned clusters as automatic partitions with unassigned: autoPartition (docs/semantics.md#unassigned-clusters)", () => {
    const manual = [
      { name: "staging", clusterSelector: { matchLabels: { env: "staging" } } },
    ];
    const targets = [
      ...fleetOf(4, () => ({ env: "staging" })),
      ...["u-1", "u-2", "u-3"].map((n) => cluster(n)),
    ];
    const one = formPartitions(
      strategy({ unassigned: "autoPartition", partitions: manual }),
      targets,
      [],
    );
    expect(one.partitions.map((p) => [p.name, p.clusters, p.auto])).toEqual([
      ["staging", ["c-000", "c-001", "c-002", "c-003"], false],
      ["Unassigned", ["u-1", "u-2", "u-3"], true],
    ]);
    expect(one.unassigned).toEqual([]);
    // The automatic rules apply to the unassigned clusters alone: threshold and size count them only.
    const sliced = formPartitions(
      strategy({
        unassigned: "autoPartition",
        autoPartitionThreshold: 3,
        autoPartitionSize: 2,
        partitions: manual,
      }),
      targets,
      [],
    );
    expect(sliced.partitions.map((p) => p.name)).toEqual([
      "staging",
      "Partition 0 - 2",
      "Partition 2 - 3",
    ]);
    expect(sliced.partitions[2]?.clusters).toEqual(["u-3"]);
  });

  it("keeps appended partition names distinct from manual ones", () => {
    const plan = formPartitions(
      strategy({
        unassigned: "autoPartition",
        partitions: [{ name: "Unassigned", clusterName: "c-000" }],
      }),
      fleetOf(2),
      [],
    );
    expect(plan.partitions.map((p) => p.name)).toEqual([
      "Unassigned",
      "Unassigned (auto)",
    ]);
  });
});
