/**
 * Unnamed partitions (docs/semantics.md#unnamed-partitions): a partition's `name` is optional, as
 * in Fleet; an unnamed one is shown as `partition-<index>`, 0-based in declared order, everywhere
 * its name appears (plan, simulate, status).
 */
import { describe, expect, it } from "vitest";
import { parseRolloutStrategy } from "../src/fleet/strategy.js";
import { plan } from "../src/plan.js";
import { simulate } from "../src/simulate.js";

const CLUSTERS = [
  { name: "a-1", labels: { ring: "a" } },
  { name: "b-1", labels: { ring: "b" } },
  { name: "c-1", labels: { ring: "c" } },
];

const ring = (r: string) => ({ clusterSelector: { matchLabels: { ring: r } } });

describe("unnamed partitions", () => {
  it("are named partition-<index> by their place in the declared list", () => {
    const parsed = parseRolloutStrategy(
      {
        partitions: [ring("a"), { name: "canary", ...ring("b") }, ring("c")],
      },
      "rolloutStrategy",
    );
    expect(parsed.ok && parsed.value.partitions.map((p) => p.name)).toEqual([
      "partition-0",
      "canary",
      "partition-2",
    ]);
  });

  it("treat an empty `name:` (YAML null) as unnamed, but still refuse an empty string", () => {
    const parsed = parseRolloutStrategy(
      { partitions: [{ name: null, ...ring("a") }] },
      "",
    );
    expect(parsed.ok && parsed.value.partitions[0]?.name).toBe("partition-0");
    expect(parseRolloutStrategy({ partitions: [{ name: "" }] }, "")).toEqual({
      ok: false,
      problems: [
        { path: "partitions[0].name", message: "must not be empty", value: "" },
      ],
    });
  });

  it("refuse a name that an unnamed partition would be shown as, naming both paths", () => {
    expect(
      parseRolloutStrategy(
        { partitions: [{ name: "partition-1", ...ring("a") }, ring("b")] },
        "rolloutStrategy",
      ),
    ).toEqual({
      ok: false,
      problems: [
        {
          path: "rolloutStrategy.partitions[1].name",
          message:
            'is not set, so the partition is shown as "partition-1", the name of rolloutStrategy.partitions[0]; give one of them another name',
        },
      ],
    });
  });

  it("refuse a later name equal to an earlier unnamed partition's shown name", () => {
    expect(
      parseRolloutStrategy(
        { partitions: [ring("a"), { name: "partition-0", ...ring("b") }] },
        "",
      ),
    ).toEqual({
      ok: false,
      problems: [
        {
          path: "partitions[1].name",
          message:
            'duplicate partition name: partitions[0] has no name and is shown as "partition-0"; give one of them another name',
          value: "partition-0",
        },
      ],
    });
  });

  it("appear under their shown names in the plan and its warnings", () => {
    const planned = plan({
      clusters: CLUSTERS,
      strategy: {
        rolloutStrategy: {
          maxUnavailable: 0,
          partitions: [ring("a"), ring("b"), { clusterName: "nobody" }],
        },
      },
    });
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    expect(planned.value.waves.map((w) => [w.name, w.groups[0]?.name])).toEqual(
      [
        ["partition-0", "partition-0"],
        ["partition-1", "partition-1"],
        ["partition-2", "partition-2"],
      ],
    );
    expect(planned.value.warnings).toContainEqual({
      code: "EmptyPartition",
      message:
        'partition "partition-2" holds no cluster (none matches, or each match belongs to an earlier partition)',
    });
  });

  it("appear under their shown names in a simulation", () => {
    const result = simulate({
      clusters: CLUSTERS,
      strategy: { partitions: [ring("a"), { name: "rest", ...ring("b") }] },
      scenario: { start: "2026-03-02T10:00:00Z", kind: "update" },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(result.value.waves.map((w) => w.name)).toEqual([
      "partition-0",
      "rest",
    ]);
    expect(
      result.value.timeline
        .filter((e) => e.type === "released")
        .map((e) => [e.cluster, e.wave]),
    ).toEqual([
      ["a-1", "partition-0"],
      ["b-1", "rest"],
    ]);
  });
});
