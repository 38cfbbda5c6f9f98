/**
 * Simultaneous outcomes (docs/semantics.md#simultaneous-outcomes): member outcomes reported at the
 * same instant (`MembersReported`) are all counted before any freed slot is refilled, so a budget
 * that the batch as a whole exceeds starts nothing new: the AKS document's "why FailureCount can
 * exceed maxAllowedFailures" (concurrency 3, budget 1, three members fail together → failureCount
 * 3 and nothing new starts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MemberOutcome, RunEvent } from "../src/staged/events.js";
import { cloneRun, type Run } from "../src/staged/run.js";
import { simulate } from "../src/simulate.js";
import { step } from "../src/staged/step.js";
import {
  SECOND,
  T0,
  group,
  groupOf,
  member,
  oneStage,
  resolve,
  running,
  stage,
  started,
  startedBy,
} from "./staged-fixtures.js";

const failed = (name: string): MemberOutcome => ({
  type: "MemberFailed",
  member: name,
  error: "upgrade failed",
});
const succeeded = (name: string): MemberOutcome => ({
  type: "MemberSucceeded",
  member: name,
});
const batch = (...reports: MemberOutcome[]): RunEvent => ({
  type: "MembersReported",
  reports,
});

/** The issue's group: a1–a4, maxConcurrency 3, maxAllowedFailures 1, started at T0. */
function issueRun(): Run {
  return resolve(
    oneStage([{ name: "g", maxConcurrency: "3", maxAllowedFailures: "1" }]),
    ["a1", "a2", "a3", "a4"].map((n) => ({
      name: n,
      labels: {},
      groups: [],
      nodePools: [],
      updateGroup: "g",
    })),
  );
}

describe("outcomes reported at the same instant", () => {
  it("three failures together with budget 1: failureCount 3 and a4 never starts (the issue's reproduction)", () => {
    const run = issueRun();
    const { d, first } = started(run);
    expect(first).toEqual(["a1", "a2", "a3"]);
    const result = d.send(
      batch(failed("a1"), failed("a2"), failed("a3")),
      T0 + 30 * SECOND,
    );
    expect(result.rejected).toBeUndefined();
    expect(startedBy(result.actions)).toEqual([]);
    expect(member(run, "a4").state).toBe("NotStarted");
    expect(group(run, "g")).toMatchObject({ state: "Failed", failureCount: 3 });
    expect(stage(run, "stage-1").state).toBe("Failed");
    expect(run).toMatchObject({ state: "Failed", failureCount: 3 });
  });

  it.each([
    {
      name: "one failure within the budget and one success: both slots are refilled after counting",
      reports: [failed("a1"), succeeded("a2")],
      starts: ["a4", "a5"],
      state: "Running",
    },
    {
      name: "a success and two failures over the budget: the success's slot is not refilled",
      reports: [succeeded("a1"), failed("a2"), failed("a3")],
      starts: [],
      state: "Failed",
    },
    {
      name: "the budget reached exactly (count == budget) keeps going",
      reports: [failed("a3")],
      starts: ["a4"],
      state: "Running",
    },
  ])("$name", ({ reports, starts, state }) => {
    const run = resolve(
      oneStage([{ name: "a", maxConcurrency: 3, maxAllowedFailures: 1 }]),
      groupOf("a", 6).map((c, i) => ({ ...c, name: `a${String(i + 1)}` })),
    );
    const { d } = started(run);
    const result = d.send(batch(...reports), T0 + 30 * SECOND);
    expect(startedBy(result.actions)).toEqual(starts);
    expect(run.state).toBe(state);
  });

  it("a single report still refills at once: only reports of one instant are counted together", () => {
    const run = issueRun();
    const { d } = started(run);
    expect(d.fail("a1")).toEqual(["a4"]);
    d.fail("a2");
    expect(run).toMatchObject({ state: "Stopping", failureCount: 2 });
  });

  it("reports that do not apply are ignored and named; the others count", () => {
    const run = issueRun();
    const { d } = started(run);
    const result = d.send(
      batch(failed("a1"), succeeded("a4"), failed("nobody"), failed("a1")),
    );
    expect(result.rejected).toBeUndefined();
    expect(result.ignored?.map((r) => [r.code, r.message])).toEqual([
      [
        "failed_precondition",
        'Ignoring MemberFailed for member "a1": it is Failed, not Running',
      ],
      [
        "failed_precondition",
        'Ignoring MemberSucceeded for member "a4": it is NotStarted, not Running',
      ],
      ["not_found", 'Cluster "nobody" is not a member of run "run-1"'],
    ]);
    expect(group(run, "g").failureCount).toBe(1);
    expect(startedBy(result.actions)).toEqual(["a4"]);
  });

  it("a batch of which nothing applies is rejected and changes nothing; an empty batch is invalid", () => {
    const run = issueRun();
    const { d } = started(run);
    const before = cloneRun(run);
    expect(d.send(batch(succeeded("a4"))).rejected?.code).toBe(
      "failed_precondition",
    );
    expect(d.send(batch()).rejected).toEqual({
      code: "invalid_argument",
      message: 'Cannot apply MembersReported to run "run-1": it has no reports',
    });
    expect(cloneRun(run)).toEqual(before);
  });
});

describe("a batch of outcomes, as a property", () => {
  const caseArb = fc.record({
    size: fc.integer({ min: 2, max: 8 }),
    concurrency: fc.integer({ min: 1, max: 6 }),
    budget: fc.integer({ min: 0, max: 3 }),
    outcomes: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    order: fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
  });

  it("counts every outcome before refilling, whatever the order of its reports: no start once the batch exceeds a budget, and the same run for every order", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const build = () => {
          const run = resolve(
            oneStage([
              {
                name: "g",
                maxConcurrency: c.concurrency,
                maxAllowedFailures: c.budget,
              },
            ]),
            groupOf("g", c.size),
          );
          step(run, { type: "StartRun" }, T0);
          return run;
        };
        const a = build();
        const inFlight = running(a);
        const reports = inFlight.map((name, i) =>
          c.outcomes[i] === true ? succeeded(name) : failed(name),
        );
        const shuffled = [...reports].sort(
          (x, y) =>
            (c.order[reports.indexOf(x)] ?? 0) -
            (c.order[reports.indexOf(y)] ?? 0),
        );
        const first = step(a, batch(...reports), T0 + SECOND);
        const b = build();
        const second = step(b, batch(...shuffled), T0 + SECOND);
        expect(b).toEqual(a);
        expect(second.actions).toEqual(first.actions);
        const failures = reports.filter(
          (r) => r.type === "MemberFailed",
        ).length;
        expect(a.failureCount).toBe(failures);
        if (failures > c.budget) expect(startedBy(first.actions)).toEqual([]);
        else
          expect(startedBy(first.actions).length).toBe(
            Math.min(inFlight.length, c.size - inFlight.length),
          );
      }),
      { numRuns: 300 },
    );
  });
});

describe("simulate: outcomes due at the same instant are one batch", () => {
  it("a1–a3 fail together at +30s with budget 1: failureCount 3, a4 never starts, the run fails", () => {
    const result = simulate({
      clusters: ["a1", "a2", "a3", "a4"].map((name) => ({
        name,
        updateGroup: "g",
      })),
      strategy: {
        stages: [
          {
            name: "s",
            groups: [
              { name: "g", maxConcurrency: "3", maxAllowedFailures: "1" },
            ],
          },
        ],
      },
      scenario: {
        start: "2026-03-02T10:00:00Z",
        kind: "update",
        defaults: { readyAfterSeconds: 60 },
        clusters: {
          a1: { fail: true, failAfterSeconds: 30 },
          a2: { fail: true, failAfterSeconds: 30 },
          a3: { fail: true, failAfterSeconds: 30 },
        },
      },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const out = result.value;
    expect(out.failureCount).toBe(3);
    expect(out.finalState).toBe("Failed");
    expect(out.end).toBe("2026-03-02T10:00:30Z");
    expect(
      out.timeline.filter((e) => e.type === "started").map((e) => e.cluster),
    ).toEqual(["a1", "a2", "a3"]);
    const members = out.waves[0]?.groups[0]?.members ?? [];
    expect(members.map((m) => [m.name, m.state])).toEqual([
      ["a1", "Failed"],
      ["a2", "Failed"],
      ["a3", "Failed"],
      ["a4", "NotStarted"],
    ]);
  });
});
