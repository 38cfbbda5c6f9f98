/**
 * maxConcurrency (docs/semantics.md#order-and-concurrency, docs/semantics.md#int-or-percent rule 2)
 * and the worked examples of the AKS seed ("Maksymalna współbieżność").
 */
import { describe, expect, it } from "vitest";
import { planStaged } from "../src/plan.js";
import { runWarnings } from "../src/staged/warnings.js";
import {
  cluster,
  group,
  groupOf,
  oneStage,
  resolve,
  running,
  stage,
  started,
  strategy,
} from "./staged-fixtures.js";

const inFlightBy = (names: readonly string[], prefix: string): number =>
  names.filter((n) => n.startsWith(prefix)).length;

describe("AKS seed: maxConcurrency examples", () => {
  it('Example 1 (fixed limits): stage "4", groups A "2" and B "2" → at most four in flight, at most two per group', () => {
    const run = resolve(
      oneStage(
        [
          { name: "a", maxConcurrency: "2" },
          { name: "b", maxConcurrency: "2" },
        ],
        { maxConcurrency: "4" },
      ),
      [...groupOf("a", 5), ...groupOf("b", 5)],
    );
    expect([
      stage(run, "stage-1").maxConcurrency,
      group(run, "a").maxConcurrency,
      group(run, "b").maxConcurrency,
    ]).toEqual([4, 2, 2]);
    const { d, first } = started(run);
    expect(first).toEqual(["a-00", "b-00", "a-01", "b-01"]);
    // A slot freed in A is refilled from A only: B is already at its own limit.
    expect(d.succeed("a-00")).toEqual(["a-02"]);
    while (running(run).length > 0) {
      const now = running(run);
      expect(now.length).toBeLessThanOrEqual(4);
      expect(inFlightBy(now, "a-")).toBeLessThanOrEqual(2);
      expect(inFlightBy(now, "b-")).toBeLessThanOrEqual(2);
      d.succeed(now[0] ?? "");
    }
    expect(run.state).toBe("Completed");
  });

  it('Example 1 with a third group: the stage "4" caps three groups of "2" at four in flight together', () => {
    const run = resolve(
      oneStage(
        [
          { name: "a", maxConcurrency: "2" },
          { name: "b", maxConcurrency: "2" },
          { name: "c", maxConcurrency: "2" },
        ],
        { maxConcurrency: "4" },
      ),
      [...groupOf("a", 3), ...groupOf("b", 3), ...groupOf("c", 3)],
    );
    const { first } = started(run);
    expect(first).toHaveLength(4);
    // Round-robin over the groups: every group gets a slot before any gets a second one.
    expect(first).toEqual(["a-00", "b-00", "c-00", "a-01"]);
  });

  it('Decision: Example 2 (stage limit wins): stage "2", groups "5" → only two in flight, and the effective group value is clamped to 2', () => {
    const s = oneStage(
      [
        { name: "a", maxConcurrency: "5" },
        { name: "b", maxConcurrency: "5" },
      ],
      { maxConcurrency: "2" },
    );
    const clusters = [...groupOf("a", 6), ...groupOf("b", 6)];
    const run = resolve(s, clusters);
    expect(group(run, "a")).toMatchObject({
      maxConcurrency: 2,
      configuredMaxConcurrency: "5",
    });
    expect(group(run, "b")).toMatchObject({
      maxConcurrency: 2,
      configuredMaxConcurrency: "5",
    });
    const planned = planStaged(s, clusters);
    expect(
      planned.ok && planned.value.waves[0]?.groups.map((g) => g.maxConcurrency),
    ).toEqual([2, 2]);
    expect(
      runWarnings(run, clusters)
        .filter((w) => w.code === "ConcurrencyClamped")
        .map((w) => w.message),
    ).toEqual([
      'group "a": maxConcurrency 5 is clamped to 2 by the stage limit (2) or the group size (6)',
      'group "b": maxConcurrency 5 is clamped to 2 by the stage limit (2) or the group size (6)',
    ]);

    const { d, first } = started(run);
    expect(first).toEqual(["a-00", "b-00"]);
    for (let i = 0; i < 20 && running(run).length > 0; i++) {
      expect(running(run).length).toBeLessThanOrEqual(2);
      d.succeed(running(run)[0] ?? "");
    }
    expect(run.state).toBe("Completed");
  });

  it('Example 3 (percentages): 20 clusters, A 8 at "50%" → 4, B 12 at "25%" → 3, stage "25%" → 5 in flight at most', () => {
    const run = resolve(
      oneStage(
        [
          { name: "a", maxConcurrency: "50%" },
          { name: "b", maxConcurrency: "25%" },
        ],
        { maxConcurrency: "25%" },
      ),
      [...groupOf("a", 8), ...groupOf("b", 12)],
    );
    expect([
      stage(run, "stage-1").maxConcurrency,
      group(run, "a").maxConcurrency,
      group(run, "b").maxConcurrency,
    ]).toEqual([5, 4, 3]);
    const { d, first } = started(run);
    expect(first).toHaveLength(5);
    let maxA = 0;
    let maxB = 0;
    while (running(run).length > 0) {
      const now = running(run);
      expect(now.length).toBeLessThanOrEqual(5);
      maxA = Math.max(maxA, inFlightBy(now, "a-"));
      maxB = Math.max(maxB, inFlightBy(now, "b-"));
      d.succeed(now[0] ?? "");
    }
    expect(maxA).toBeLessThanOrEqual(4);
    expect(maxB).toBeLessThanOrEqual(3);
    // Once A is done, B alone fills its own limit of 3.
    expect(maxB).toBe(3);
    expect(run.state).toBe("Completed");
  });

  it('strategy page: group-2 at "50%" of 4 clusters → 2 in flight', () => {
    const run = resolve(
      oneStage([{ name: "group-2", maxConcurrency: "50%" }]),
      groupOf("group-2", 4),
    );
    expect(group(run, "group-2").maxConcurrency).toBe(2);
    expect(started(run).first).toEqual(["group-2-00", "group-2-01"]);
  });

  it('strategy page: a group "3" with a single member is clamped to the group size, 1', () => {
    const run = resolve(
      oneStage([{ name: "backend", maxConcurrency: "3" }]),
      groupOf("backend", 1),
    );
    expect(group(run, "backend")).toMatchObject({
      maxConcurrency: 1,
      configuredMaxConcurrency: "3",
    });
  });
});

describe("concurrency defaults and rounding", () => {
  it("defaults: a stage allows 50 in flight and a group 1", () => {
    const run = resolve(oneStage([{ name: "a" }, { name: "b" }]), [
      ...groupOf("a", 3),
      ...groupOf("b", 3),
    ]);
    expect(stage(run, "stage-1").maxConcurrency).toBe(50);
    expect(group(run, "a").maxConcurrency).toBe(1);
    expect(started(run).first).toEqual(["a-00", "b-00"]);
  });

  it("an implicit group takes the stage value, default 50: 60 members start 50 at once", () => {
    const clusters = Array.from({ length: 60 }, (_, i) =>
      cluster(`c-${String(i).padStart(2, "0")}`, { labels: { env: "dev" } }),
    );
    const run = resolve(
      strategy({
        stages: [{ name: "dev", memberSelector: { byLabel: "env=dev" } }],
      }),
      clusters,
    );
    const { d, first } = started(run);
    expect(first).toHaveLength(50);
    expect(d.succeed("c-00")).toEqual(["c-50"]);
  });

  it('percentages round down with a minimum of 1: "10%" of 5 → 1, "99%" of 10 → 9', () => {
    const run = resolve(
      oneStage([
        { name: "a", maxConcurrency: "10%" },
        { name: "b", maxConcurrency: "99%" },
      ]),
      [...groupOf("a", 5), ...groupOf("b", 10)],
    );
    expect([
      group(run, "a").maxConcurrency,
      group(run, "b").maxConcurrency,
    ]).toEqual([1, 9]);
  });

  it("a stage percentage is taken of all the stage's members, across groups", () => {
    const run = resolve(
      oneStage([{ name: "a" }, { name: "b" }], { maxConcurrency: "50%" }),
      [...groupOf("a", 3), ...groupOf("b", 5)],
    );
    expect(stage(run, "stage-1").maxConcurrency).toBe(4);
  });

  it("a run without a strategy updates its members strictly one by one", () => {
    const run = resolve(undefined, [
      cluster("c-2"),
      cluster("c-1"),
      cluster("c-3"),
    ]);
    const { d, first } = started(run);
    expect(first).toEqual(["c-1"]);
    expect(d.succeed("c-1")).toEqual(["c-2"]);
    expect(d.succeed("c-2")).toEqual(["c-3"]);
  });

  it("groups of a stage run in parallel and stages one after another", () => {
    const run = resolve(
      strategy({
        stages: [
          { name: "s1", groups: [{ name: "a" }, { name: "b" }] },
          { name: "s2", groups: [{ name: "c", maxConcurrency: 2 }] },
        ],
      }),
      [...groupOf("a", 2), ...groupOf("b", 1), ...groupOf("c", 2)],
    );
    const { d, first } = started(run);
    expect(first).toEqual(["a-00", "b-00"]);
    expect(d.succeed("b-00")).toEqual([]);
    expect(d.succeed("a-00")).toEqual(["a-01"]);
    expect(d.succeed("a-01")).toEqual(["c-00", "c-01"]);
    expect(stage(run, "s1").state).toBe("Completed");
    expect(stage(run, "s2").state).toBe("Running");
  });
});
