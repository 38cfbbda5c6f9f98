/**
 * Undeclared cluster groups (docs/semantics.md#undeclared-groups): a partition's
 * `clusterGroup` or a cluster's `groups` entry naming a group that is not declared matches
 * nothing, as before, but is never silent: plan and simulate warn, naming the group.
 */
import { describe, expect, it } from "vitest";
import { plan } from "../src/plan.js";
import { simulate } from "../src/simulate.js";
import type { PlanWarning } from "../src/preview-types.js";

const GROUPS = [
  { name: "canary", selector: { matchLabels: { ring: "canary" } } },
  { name: "emea", labels: { geo: "emea" } },
];

function planWarnings(
  clusters: unknown,
  strategy: unknown,
  clusterGroups: unknown = GROUPS,
): PlanWarning[] {
  const planned = plan({
    clusters,
    strategy,
    ...(clusterGroups === "none" ? {} : { clusterGroups }),
  });
  if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
  return planned.value.warnings.filter(
    (w) => w.code === "UndeclaredClusterGroup",
  );
}

describe("undeclared cluster groups", () => {
  it.each([
    [
      "a partition's clusterGroup",
      [{ name: "c-1", labels: { ring: "canary" } }],
      {
        partitions: [
          { name: "first", clusterGroup: "canary" },
          { name: "rest", clusterGroup: "prod" },
        ],
      },
      [
        'partitions[1] ("rest"): clusterGroup "prod" is not a declared cluster group, so the partition matches no cluster',
      ],
    ],
    [
      "a partition's clusterGroup with a near miss",
      [{ name: "c-1" }],
      { partitions: [{ clusterGroup: "canery" }] },
      [
        'partitions[0] ("partition-0"): clusterGroup "canery" is not a declared cluster group, so the partition matches no cluster; did you mean "canary"?',
      ],
    ],
    [
      "clusters' groups entries, one warning per group",
      [
        { name: "c-1", groups: ["emea", "apac"] },
        { name: "c-2", groups: ["apac"] },
        { name: "c-3", groups: ["amer"] },
      ],
      { maxUnavailable: 1 },
      [
        'cluster group "amer" is listed in the groups of 1 cluster(s) (c-3) but is not declared, so it holds none of them',
        'cluster group "apac" is listed in the groups of 2 cluster(s) (c-1, c-2) but is not declared, so it holds none of them',
      ],
    ],
  ])("warns about %s", (_what, clusters, strategy, expected) => {
    expect(planWarnings(clusters, strategy).map((w) => w.message)).toEqual(
      expected,
    );
  });

  it("gives no warning when every named group is declared", () => {
    expect(
      planWarnings([{ name: "c-1", groups: ["emea"] }], {
        partitions: [{ name: "a", clusterGroup: "canary" }],
      }),
    ).toEqual([]);
  });

  it("warns when no cluster-groups file is given at all", () => {
    expect(
      planWarnings(
        [{ name: "c-1", groups: ["canary"] }],
        { partitions: [{ name: "a", clusterGroup: "canary" }] },
        "none",
      ).map((w) => w.message),
    ).toEqual([
      'partitions[0] ("a"): clusterGroup "canary" is not a declared cluster group, so the partition matches no cluster',
      'cluster group "canary" is listed in the groups of 1 cluster(s) (c-1) but is not declared, so it holds none of them',
    ]);
  });

  it("lists the first five clusters of a group and counts the rest", () => {
    const clusters = Array.from({ length: 7 }, (_, i) => ({
      name: `c-${String(i)}`,
      groups: ["lost"],
    }));
    expect(
      planWarnings(clusters, { maxUnavailable: 1 }).map((w) => w.message),
    ).toEqual([
      'cluster group "lost" is listed in the groups of 7 cluster(s) (c-0, c-1, c-2, c-3, c-4 and 2 more) but is not declared, so it holds none of them',
    ]);
  });

  it("warns in simulate too", () => {
    const result = simulate({
      clusters: [{ name: "c-1", groups: ["lost"] }],
      strategy: { partitions: [{ name: "a", clusterGroup: "lost" }] },
      scenario: { start: "2026-03-02T10:00:00Z", kind: "update" },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(
      result.value.warnings
        .filter((w) => w.code === "UndeclaredClusterGroup")
        .map((w) => w.message),
    ).toHaveLength(2);
    expect(result.value.unassigned).toEqual(["c-1"]);
  });
});
