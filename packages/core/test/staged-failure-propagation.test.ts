/**
 * Failure propagates up (docs/semantics.md#failure-propagates-up): a group over its budget is
 * Failed and so are its stage and the run, whatever the stage's own budget allows; `Stopped` is
 * only ever the result of an operator's stop. Groups of the failed stage that were still going
 * when the run halted end Failed too (halted by a budget, not stopped by anyone).
 */
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../src/staged/events.js";
import type { UpdateStrategy } from "../src/update-strategy.js";
import type { Cluster } from "../src/cluster.js";
import {
  cluster,
  group,
  groupOf,
  oneStage,
  resolve,
  stage,
  started,
  strategy,
} from "./staged-fixtures.js";

const fail = (member: string): RunEvent => ({
  type: "MemberFailed",
  member,
  error: "upgrade failed",
});
const succeed = (member: string): RunEvent => ({
  type: "MemberSucceeded",
  member,
});

interface Case {
  readonly name: string;
  readonly strategy: UpdateStrategy;
  readonly clusters: readonly Cluster[];
  readonly events: readonly RunEvent[];
  /** `state` or `state: message` of each group, the stage and the run after the events. */
  readonly groups: Readonly<Record<string, string>>;
  readonly stage: string;
  readonly run: string;
}

const issueFleet = [
  cluster("a1", { updateGroup: "g" }),
  cluster("a2", { updateGroup: "g" }),
];

const CASES: readonly Case[] = [
  {
    name: "a group over its budget fails its stage even though the stage's budget is not exceeded (the issue's reproduction)",
    strategy: strategy({
      stages: [
        {
          name: "s",
          maxAllowedFailures: "5",
          groups: [{ name: "g", maxAllowedFailures: "0" }],
        },
      ],
    }),
    clusters: issueFleet,
    events: [fail("a1")],
    groups: { g: "Failed: failureCount 1 exceeds maxAllowedFailures 0" },
    stage:
      'Failed: group "g" failed: failureCount 1 exceeds maxAllowedFailures 0',
    run: "Failed",
  },
  {
    name: "the stage is Failed as soon as its group is, while the run waits for members in flight",
    strategy: oneStage(
      [{ name: "g", maxAllowedFailures: 0, maxConcurrency: 2 }],
      {
        maxAllowedFailures: 5,
      },
    ),
    clusters: issueFleet,
    events: [fail("a1")],
    groups: { g: "Failed: failureCount 1 exceeds maxAllowedFailures 0" },
    stage:
      'Failed: group "g" failed: failureCount 1 exceeds maxAllowedFailures 0',
    run: "Stopping",
  },
  {
    name: "...and stays Failed when they have finished",
    strategy: oneStage(
      [{ name: "g", maxAllowedFailures: 0, maxConcurrency: 2 }],
      {
        maxAllowedFailures: 5,
      },
    ),
    clusters: issueFleet,
    events: [fail("a1"), succeed("a2")],
    groups: { g: "Failed: failureCount 1 exceeds maxAllowedFailures 0" },
    stage:
      'Failed: group "g" failed: failureCount 1 exceeds maxAllowedFailures 0',
    run: "Failed",
  },
  {
    name: "a sibling group within its budget that was still going ends Failed (halted), not Stopped",
    strategy: oneStage(
      [
        { name: "a", maxAllowedFailures: 0 },
        { name: "b", maxAllowedFailures: 3 },
      ],
      { maxAllowedFailures: 10 },
    ),
    clusters: [...groupOf("a", 2), ...groupOf("b", 2)],
    events: [fail("a-00"), succeed("b-00")],
    groups: {
      a: "Failed: failureCount 1 exceeds maxAllowedFailures 0",
      b: 'Failed: Halted: Failure budget exceeded in group "a": failureCount 1 exceeds maxAllowedFailures 0',
    },
    stage:
      'Failed: group "a" failed: failureCount 1 exceeds maxAllowedFailures 0',
    run: "Failed",
  },
  {
    name: "fail-fast (no budget anywhere): the stage fails and its group ends Failed with it",
    strategy: oneStage([{ name: "g" }]),
    clusters: issueFleet,
    events: [fail("a1")],
    groups: {
      g: 'Failed: Halted: Failure budget exceeded in stage "stage-1": failed member "a1" and no maxAllowedFailures is set (fail-fast)',
    },
    stage:
      'Failed: failed member "a1" and no maxAllowedFailures is set (fail-fast)',
    run: "Failed",
  },
  {
    name: "only an operator's stop ends a stage and its groups Stopped",
    strategy: oneStage([{ name: "g", maxAllowedFailures: 0 }], {
      maxAllowedFailures: 5,
    }),
    clusters: issueFleet,
    events: [{ type: "StopRun", actor: "bob" }, succeed("a1")],
    groups: { g: "Stopped: Stopped (stop requested)" },
    stage: "Stopped: Stopped (stop requested)",
    run: "Stopped",
  },
];

function shown(s: { state: string; message: string }, withMessage: boolean) {
  return withMessage ? `${s.state}: ${s.message}` : s.state;
}

describe("failure propagates up: (strategy, events) → group, stage and run states", () => {
  it.each(CASES)("$name", (c) => {
    const run = resolve(c.strategy, c.clusters);
    const { d } = started(run);
    for (const event of c.events) d.ok(event);
    const current = run.stages[0];
    if (current === undefined) throw new Error("no stage");
    expect(
      Object.fromEntries(
        current.groups.map((g) => [
          g.name,
          shown(g, c.groups[g.name]?.includes(":") ?? false),
        ]),
      ),
    ).toEqual(c.groups);
    expect(shown(current, c.stage.includes(":"))).toBe(c.stage);
    expect(run.state).toBe(c.run);
    // Stopped is an operator's doing only.
    const stopped = d.actions.filter(
      (a) => a.type === "Transitioned" && a.to === "Stopped",
    );
    if (!c.events.some((e) => e.type === "StopRun"))
      expect(stopped).toEqual([]);
  });
});

describe("a run failed by a budget and started again", () => {
  it("resumes its Failed stage and halted groups; a halted group that only waited for its after-gate completes", () => {
    const run = resolve(
      oneStage(
        [
          { name: "a", maxAllowedFailures: 0, maxConcurrency: 2 },
          { name: "b", afterGates: [{ type: "Approval" }] },
        ],
        { maxAllowedFailures: 10 },
      ),
      [...groupOf("a", 3), ...groupOf("b", 1)],
    );
    const { d } = started(run);
    d.succeed("b-00");
    expect(group(run, "b").state).toBe("Pending");
    d.fail("a-00");
    d.succeed("a-01");
    expect([group(run, "b").state, stage(run, "stage-1").state]).toEqual([
      "Failed",
      "Failed",
    ]);
    expect(run.state).toBe("Failed");
    expect(d.start()).toEqual(["a-02"]);
    expect(stage(run, "stage-1").state).toBe("Running");
    d.ok({ type: "ApproveGate", gate: "group:b:after", actor: "alice" });
    expect(group(run, "b").state).toBe("Completed");
    d.succeed("a-02");
    expect(run.state).toBe("Completed");
  });
});
