import { describe, expect, it } from "vitest";
import { matchesSelector } from "../src/label-selector.js";
import {
  detectFleetStrategy,
  FLEET_STRATEGY_DEFAULTS,
  parseRolloutStrategy,
} from "../src/fleet/strategy.js";

function problems(raw: unknown, path = "rolloutStrategy") {
  const result = parseRolloutStrategy(raw, path);
  if (result.ok) throw new Error("accepted");
  return result.problems;
}

describe("parseRolloutStrategy", () => {
  it("fills in the defaults: 100%, 0, 25%, 200, 50, no partitions, report unassigned", () => {
    for (const raw of [undefined, null, {}]) {
      expect(parseRolloutStrategy(raw, "rolloutStrategy")).toEqual({
        ok: true,
        value: FLEET_STRATEGY_DEFAULTS,
      });
    }
    expect(FLEET_STRATEGY_DEFAULTS).toEqual({
      maxUnavailable: { kind: "percent", value: 100 },
      maxUnavailablePartitions: { kind: "int", value: 0 },
      autoPartitionSize: { kind: "percent", value: 25 },
      autoPartitionThreshold: 200,
      maxNew: 50,
      partitions: [],
      unassigned: "report",
      gates: [],
    });
  });

  it("treats YAML nulls (an empty `maxNew:`) as unset", () => {
    const parsed = parseRolloutStrategy(
      { maxNew: null, partitions: null, maxUnavailable: null },
      "",
    );
    expect(parsed).toEqual({ ok: true, value: FLEET_STRATEGY_DEFAULTS });
  });

  it("accepts every Fleet field plus unassigned: autoPartition", () => {
    const parsed = parseRolloutStrategy(
      {
        maxUnavailable: "10%",
        maxUnavailablePartitions: 1,
        autoPartitionSize: "18.4%",
        autoPartitionThreshold: 50,
        maxNew: 0,
        unassigned: "autoPartition",
        partitions: [
          { name: "canary", maxUnavailable: 0, clusterName: "c-1" },
          {
            name: "demoRollout",
            clusterSelector: { matchLabels: { env: "staging" } },
          },
          {
            name: "eu",
            clusterGroup: "eu",
            clusterGroupSelector: { matchLabels: { region: "eu" } },
          },
        ],
      },
      "rolloutStrategy",
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const s = parsed.value;
    expect(s.maxUnavailable).toEqual({ kind: "percent", value: 10 });
    expect(s.maxUnavailablePartitions).toEqual({ kind: "int", value: 1 });
    expect(s.autoPartitionSize).toEqual({ kind: "percent", value: 18.4 });
    expect([s.autoPartitionThreshold, s.maxNew, s.unassigned]).toEqual([
      50,
      0,
      "autoPartition",
    ]);
    expect(s.partitions.map((p) => p.name)).toEqual([
      "canary",
      "demoRollout",
      "eu",
    ]);
    expect(s.partitions[0]).toEqual({
      name: "canary",
      named: true,
      maxUnavailable: { kind: "int", value: 0 },
      clusterName: "c-1",
    });
    expect(s.partitions[1]?.maxUnavailable).toBeUndefined();
    const selector = s.partitions[1]?.clusterSelector;
    expect(selector && matchesSelector(selector, { env: "staging" })).toBe(
      true,
    );
    expect(s.partitions[2]?.clusterGroup).toBe("eu");
  });

  it("reads a numeric string without % as an integer (docs/semantics.md#int-or-percent)", () => {
    const parsed = parseRolloutStrategy({ maxUnavailable: "3" }, "");
    expect(parsed.ok && parsed.value.maxUnavailable).toEqual({
      kind: "int",
      value: 3,
    });
  });

  it("rejects unknown fields with a did-you-mean suggestion, at the field path", () => {
    const found = problems({
      maxUnavailabel: 1,
      partitions: [{ name: "a", clusterSelecter: {} }],
    });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: "rolloutStrategy.maxUnavailabel",
          message: 'unknown field; did you mean "maxUnavailable"?',
        }),
        expect.objectContaining({
          path: "rolloutStrategy.partitions[0].clusterSelecter",
          message: 'unknown field; did you mean "clusterSelector"?',
        }),
      ]),
    );
  });

  it("rejects bad int-or-percent values, counts and enum values with their paths", () => {
    const found = problems({
      maxUnavailable: "abc",
      autoPartitionSize: "10.5",
      autoPartitionThreshold: 1.5,
      maxNew: -1,
      unassigned: "drop",
      partitions: [{ name: "a", maxUnavailable: "x%" }],
    });
    const paths = found.map((p) => p.path).sort();
    expect(paths).toEqual([
      "rolloutStrategy.autoPartitionSize",
      "rolloutStrategy.autoPartitionThreshold",
      "rolloutStrategy.maxNew",
      "rolloutStrategy.maxUnavailable",
      "rolloutStrategy.partitions[0].maxUnavailable",
      "rolloutStrategy.unassigned",
    ]);
    expect(found.find((p) => p.path.endsWith("unassigned"))?.message).toBe(
      'must be one of "report", "autoPartition"',
    );
    expect(
      found.find((p) => p.path.endsWith("autoPartitionSize"))?.message,
    ).toMatch(/needs a "%"/);
  });

  it("rejects empty partition names and names both paths of a duplicate", () => {
    expect(problems({ partitions: [{ name: "" }] })).toEqual([
      expect.objectContaining({
        path: "rolloutStrategy.partitions[0].name",
        message: "must not be empty",
      }),
    ]);
    expect(
      problems({ partitions: [{ name: "a" }, { name: "b" }, { name: "a" }] }),
    ).toEqual([
      {
        path: "rolloutStrategy.partitions[2].name",
        message:
          "duplicate partition name; first defined at rolloutStrategy.partitions[0].name",
        value: "a",
      },
    ]);
  });

  it("reports bad selectors inside partitions at the selector's path", () => {
    const found = problems(
      {
        partitions: [
          { name: "a", clusterSelector: { matchLabels: { env: 3 } } },
        ],
      },
      "",
    );
    expect(found.map((p) => p.path)).toEqual([
      "partitions[0].clusterSelector.matchLabels.env",
    ]);
  });

  it("rejects a partitions value that is not a list and a strategy that is not an object", () => {
    expect(problems({ partitions: { name: "a" } }).map((p) => p.path)).toEqual([
      "rolloutStrategy.partitions",
    ]);
    expect(problems("fast").length).toBe(1);
  });
});

describe("detectFleetStrategy", () => {
  it("takes a fleet.yaml's rolloutStrategy and ignores its other keys", () => {
    const doc = {
      defaultNamespace: "web",
      helm: { chart: "x" },
      targetCustomizations: [],
      paused: false,
      rolloutStrategy: { maxUnavailable: "10%" },
    };
    expect(detectFleetStrategy(doc)).toEqual({
      raw: { maxUnavailable: "10%" },
      path: "rolloutStrategy",
    });
  });

  it("treats a fleet.yaml without rolloutStrategy as the defaults", () => {
    const found = detectFleetStrategy({
      namespace: "web",
      helm: { chart: "x" },
    });
    expect(found).toEqual({ raw: undefined, path: "rolloutStrategy" });
    expect(parseRolloutStrategy(found?.raw, found?.path ?? "").ok).toBe(true);
  });

  it("recognises a bare rolloutStrategy by any of its keys", () => {
    expect(detectFleetStrategy({ maxNew: 10 })).toEqual({
      raw: { maxNew: 10 },
      path: "",
    });
    const typo = { partitions: [], maxUnavailabel: 1 };
    expect(detectFleetStrategy(typo)).toEqual({ raw: typo, path: "" });
  });

  it("returns undefined for an AKS strategy and for non-objects", () => {
    expect(
      detectFleetStrategy({ stages: [{ name: "canary" }] }),
    ).toBeUndefined();
    expect(detectFleetStrategy({ stages: [], labels: {} })).toBeUndefined();
    for (const raw of [undefined, null, [], "x", 3, {}])
      expect(detectFleetStrategy(raw)).toBeUndefined();
  });
});
