/**
 * Negative Fleet numbers (docs/semantics.md#negative-values): Fleet accepts them, so flotilla does
 * too. A negative integer resolves like 0, a negative percentage like "0%" (at least 1), and an
 * autoPartitionThreshold at or below 0 turns automatic partitions off; each gives a warning that
 * names the field and the value. maxConcurrency and maxAllowedFailures keep refusing them.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  fleetLimit,
  parseIntOrPercent,
  type IntOrPercentRule,
} from "../src/int-or-percent.js";
import { parseBundleSpec } from "../src/fleet/bundle-spec.js";
import { formPartitions } from "../src/fleet/partitions.js";
import { planFleet, plan } from "../src/plan.js";
import { fleetOf, strategy } from "./fleet-fixtures.js";

const negativeWarnings = (raw: unknown, clusters = fleetOf(10)): string[] =>
  planFleet(strategy(raw), clusters, [])
    .warnings.filter((w) => w.code === "NegativeValue")
    .map((w) => w.message);

describe("parsing negative values", () => {
  it.each([
    [-3, { kind: "int", value: -3 }],
    ["-3", { kind: "int", value: -3 }],
    ["-10%", { kind: "percent", value: -10 }],
    ["-12.5%", { kind: "percent", value: -12.5 }],
  ] as const)("fleetLimit fields accept %o", (raw, expected) => {
    expect(parseIntOrPercent(raw, "maxUnavailable", "fleetLimit")).toEqual({
      ok: true,
      value: expected,
    });
  });

  it.each([
    [-1, "concurrency"],
    ["-1", "concurrency"],
    ["-10%", "concurrency"],
    [-1, "failureBudget"],
    ["-1", "failureBudget"],
    ["-10%", "failureBudget"],
  ] as const)(
    "maxConcurrency and maxAllowedFailures still refuse %o (%s)",
    (raw, rule: IntOrPercentRule) => {
      expect(parseIntOrPercent(raw, "stages[0].x", rule)).toEqual({
        ok: false,
        problems: [
          { path: "stages[0].x", message: "must not be negative", value: raw },
        ],
      });
    },
  );

  it("accepts every negative Fleet field of a rolloutStrategy and of a fleet.yaml", () => {
    const raw = {
      maxUnavailable: -3,
      maxUnavailablePartitions: "-1",
      autoPartitionSize: "-10%",
      autoPartitionThreshold: -1,
      partitions: [{ name: "a", maxUnavailable: "-10%", clusterName: "x" }],
    };
    const s = strategy(raw);
    expect(s.maxUnavailable).toEqual({ kind: "int", value: -3 });
    expect(s.autoPartitionThreshold).toBe(-1);
    expect(s.partitions[0]?.maxUnavailable).toEqual({
      kind: "percent",
      value: -10,
    });
    expect(parseBundleSpec({ rolloutStrategy: raw }, "bundle").ok).toBe(true);
  });

  it("still refuses a negative maxNew, which Fleet reads as 'never deploy'", () => {
    expect(parseBundleSpec({ rolloutStrategy: { maxNew: -1 } }).ok).toBe(false);
  });
});

describe("resolving negative values", () => {
  it.each([
    [{ maxUnavailable: -3 }, { maxUnavailable: 0 }],
    [{ maxUnavailable: "-10%" }, { maxUnavailable: 1 }],
    [{ maxUnavailablePartitions: -2 }, { maxUnavailablePartitions: 0 }],
    [{ maxUnavailablePartitions: "-50%" }, { maxUnavailablePartitions: 1 }],
  ] as const)("%o over 10 clusters gives limits %o", (raw, expected) => {
    expect(formPartitions(strategy(raw), fleetOf(10), []).limits).toEqual(
      expect.objectContaining(expected),
    );
  });

  it("gives a partition with a negative maxUnavailable the limit 0 (integer) or 1 (percent)", () => {
    const formed = formPartitions(
      strategy({
        partitions: [
          { name: "a", maxUnavailable: -3, clusterSelector: {} },
          { name: "b", maxUnavailable: "-10%", clusterName: "nobody" },
        ],
      }),
      fleetOf(10),
      [],
    );
    expect(formed.partitions.map((p) => p.maxUnavailable)).toEqual([0, 1]);
  });

  it("turns automatic partitions off for autoPartitionThreshold -1 and for an autoPartitionSize of -5", () => {
    for (const raw of [
      { autoPartitionThreshold: -1 },
      { autoPartitionSize: -5 },
    ]) {
      const formed = formPartitions(strategy(raw), fleetOf(300), []);
      expect(formed.partitions.map((p) => p.name)).toEqual(["All"]);
    }
  });

  it('cuts one-cluster partitions for autoPartitionSize "-10%" (it resolves to 1)', () => {
    const formed = formPartitions(
      strategy({ autoPartitionSize: "-10%", autoPartitionThreshold: 3 }),
      fleetOf(3),
      [],
    );
    expect(formed.partitions.map((p) => p.clusters.length)).toEqual([1, 1, 1]);
  });

  it("resolves any negative value exactly as its documented replacement (-n as 0, -p% as 0%)", () => {
    const value = fc.oneof(
      fc.integer({ min: -1000, max: -1 }),
      fc
        .double({ min: -500, max: -0.01, noNaN: true })
        .map((p) => `${String(Math.round(p * 100) / 100)}%`),
    );
    const replacement = (v: number | string): number | string =>
      typeof v === "number" ? 0 : "0%";
    fc.assert(
      fc.property(
        value,
        value,
        value,
        fc.integer({ min: -300, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
        (maxUnavailable, maxUnavailablePartitions, size, threshold, n) => {
          const negative = strategy({
            maxUnavailable,
            maxUnavailablePartitions,
            autoPartitionSize: size,
            autoPartitionThreshold: threshold,
          });
          const replaced = strategy({
            maxUnavailable: replacement(maxUnavailable),
            maxUnavailablePartitions: replacement(maxUnavailablePartitions),
            autoPartitionSize: replacement(size),
            autoPartitionThreshold: Math.max(threshold, 0),
          });
          const clusters = fleetOf(n);
          expect(formPartitions(negative, clusters, [])).toEqual(
            formPartitions(replaced, clusters, []),
          );
        },
      ),
    );
  });

  it("never resolves a negative integer above 0 nor a negative percentage below 1", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: -1_000_000, max: -1 }),
        (count, v) => {
          expect(fleetLimit(count, { kind: "int", value: v })).toBe(0);
          expect(fleetLimit(count, { kind: "percent", value: v })).toBe(1);
        },
      ),
    );
  });
});

describe("warnings for negative values", () => {
  it("names each negative field, its value and what it resolves to", () => {
    expect(
      negativeWarnings({
        maxUnavailable: -3,
        maxUnavailablePartitions: "-10%",
        partitions: [
          { name: "a", maxUnavailable: -1, clusterSelector: {} },
          { name: "b", maxUnavailable: "-5%", clusterName: "x" },
        ],
      }),
    ).toEqual([
      "maxUnavailable -3 is negative: it resolves to 0, as in Fleet (a negative integer counts as 0)",
      'maxUnavailablePartitions "-10%" is negative: it resolves to 1, as in Fleet (a percentage resolves to at least 1)',
      "partitions[0].maxUnavailable -1 is negative: it resolves to 0, as in Fleet (a negative integer counts as 0)",
      'partitions[1].maxUnavailable "-5%" is negative: it resolves to 1, as in Fleet (a percentage resolves to at least 1)',
    ]);
  });

  it("says that a threshold or an integer size below 0 turns automatic partitions off", () => {
    expect(
      negativeWarnings({ autoPartitionThreshold: -1, autoPartitionSize: -5 }),
    ).toEqual([
      "autoPartitionSize -5 is negative: automatic partitioning is off, as in Fleet (as with 0)",
      "autoPartitionThreshold -1 is negative: automatic partitioning is off, as in Fleet (as with 0)",
    ]);
    expect(negativeWarnings({ autoPartitionSize: "-10%" })).toEqual([
      'autoPartitionSize "-10%" is negative: it resolves to 1, as in Fleet (a percentage resolves to at least 1), so each automatic partition holds one cluster',
    ]);
  });

  it("names the real threshold when explaining that automatic partitioning is off", () => {
    const found = planFleet(
      strategy({ maxUnavailable: "10%", autoPartitionThreshold: -1 }),
      fleetOf(300),
      [],
    ).warnings;
    expect(found.find((w) => w.code === "AutoPartitionDisabled")?.message).toBe(
      "autoPartitionThreshold -1 turns automatic partitioning off: all 300 clusters are in one partition",
    );
  });

  it("gives no NegativeValue warning for zero or positive values", () => {
    expect(
      negativeWarnings({
        maxUnavailable: 0,
        maxUnavailablePartitions: "0%",
        autoPartitionThreshold: 0,
      }),
    ).toEqual([]);
  });

  it("plans a fleet.yaml with negative values instead of refusing it", () => {
    const planned = plan({
      clusters: [{ name: "c-1" }, { name: "c-2" }],
      strategy: {
        rolloutStrategy: { maxUnavailable: -3, autoPartitionThreshold: -1 },
      },
    });
    expect(planned.ok).toBe(true);
    if (!planned.ok) return;
    expect(planned.value.limits.maxUnavailable).toBe(0);
    expect(
      planned.value.warnings.filter((w) => w.code === "NegativeValue"),
    ).toHaveLength(2);
  });
});
