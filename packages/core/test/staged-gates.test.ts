/**
 * Gates and waits (docs/semantics.md#gates-and-waits): approvals before/after stages and groups,
 * scheduled starts, and the after-stage wait that runs in parallel with the after-stage approval.
 */
import { describe, expect, it } from "vitest";
import { nextWeeklyOccurrence } from "../src/staged/gates.js";
import {
  DAY,
  HOUR,
  MINUTE,
  T0,
  at,
  cluster,
  gate,
  group,
  groupOf,
  member,
  oneOff,
  oneStage,
  resolve,
  running,
  stage,
  started,
  strategy,
} from "./staged-fixtures.js";
import { compact } from "../src/compact.js";

const approval = (displayName: string) => ({ type: "Approval", displayName });
const scheduled = (
  startDay: string,
  startTime: string,
  utcOffset?: string,
) => ({
  type: "ScheduledStart",
  scheduledStartConfiguration: {
    startDay,
    startTime,
    ...compact({ utcOffset }),
  },
});

describe("approval gates", () => {
  it("a before-stage approval is Pending once reached (stage and run Pending); approving records the identity and the stage starts", () => {
    const run = resolve(
      oneStage([{ name: "a" }], { beforeGates: [approval("Check staging")] }),
      groupOf("a", 1),
    );
    expect(gate(run, "stage:stage-1:before").state).toBe("NotStarted");
    const { d, first } = started(run);
    expect(first).toEqual([]);
    expect(gate(run, "stage:stage-1:before")).toMatchObject({
      state: "Pending",
      reachedAtMs: T0,
      message: 'Waiting for approval "Check staging" (stage:stage-1:before)',
    });
    expect([stage(run, "stage-1").state, run.state]).toEqual([
      "Pending",
      "Pending",
    ]);
    expect(run.message).toBe(
      'Stage "stage-1": Waiting for approval "Check staging" (stage:stage-1:before)',
    );

    expect(
      d.ok(
        {
          type: "ApproveGate",
          gate: "stage:stage-1:before",
          actor: "bob@example.com",
          reason: "staging is green",
        },
        T0 + HOUR,
      ),
    ).toEqual(["a-00"]);
    expect(gate(run, "stage:stage-1:before")).toMatchObject({
      state: "Completed",
      completedBy: "bob@example.com",
      completedAtMs: T0 + HOUR,
      message:
        "Approved by bob@example.com: staging is green at 2026-03-02T11:00:00Z",
    });
    expect(run.state).toBe("Running");
  });

  it("approvals never expire: a month later the gate is still Pending and the run has nothing to wake for", () => {
    const run = resolve(
      oneStage([{ name: "a" }], { beforeGates: [approval("Go")] }),
      groupOf("a", 1),
    );
    const { d } = started(run);
    expect(run.wakeAtMs).toBeUndefined();
    d.tick(T0 + 30 * DAY);
    expect(gate(run, "stage:stage-1:before").state).toBe("Pending");
  });

  it("an after-stage approval holds the next stage until it is approved", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "canary",
            groups: [{ name: "a" }],
            afterGates: [approval("Canary OK")],
          },
          { name: "prod", groups: [{ name: "b" }] },
        ],
      }),
      [...groupOf("a", 1), ...groupOf("b", 1)],
    );
    const { d } = started(run);
    expect(gate(run, "stage:canary:after").state).toBe("NotStarted");
    expect(d.succeed("a-00")).toEqual([]);
    expect(gate(run, "stage:canary:after").state).toBe("Pending");
    expect([stage(run, "canary").state, run.state]).toEqual([
      "Pending",
      "Pending",
    ]);
    expect(
      d.ok({ type: "ApproveGate", gate: "stage:canary:after", actor: "carol" }),
    ).toEqual(["b-00"]);
    expect(stage(run, "canary").state).toBe("Completed");
  });

  it("a before-group approval blocks only its group: the other groups of the stage run meanwhile", () => {
    const run = resolve(
      oneStage([
        { name: "gated", beforeGates: [approval("Gated")] },
        { name: "free" },
      ]),
      [...groupOf("gated", 1), ...groupOf("free", 2)],
    );
    const { d, first } = started(run);
    expect(first).toEqual(["free-00"]);
    expect([
      group(run, "gated").state,
      group(run, "free").state,
      stage(run, "stage-1").state,
    ]).toEqual(["Pending", "Running", "Running"]);
    expect(d.succeed("free-00")).toEqual(["free-01"]);
    d.succeed("free-01");
    // Only the gated group is left: now the stage and run are Pending.
    expect([stage(run, "stage-1").state, run.state]).toEqual([
      "Pending",
      "Pending",
    ]);
    expect(
      d.ok({ type: "ApproveGate", gate: "group:gated:before", actor: "dave" }),
    ).toEqual(["gated-00"]);
    d.succeed("gated-00");
    expect(run.state).toBe("Completed");
  });

  it("an after-group approval holds its group (and so the stage) but not the other groups", () => {
    const run = resolve(
      oneStage([
        { name: "a", afterGates: [approval("A done")] },
        { name: "b" },
      ]),
      [...groupOf("a", 1), ...groupOf("b", 2)],
    );
    const { d } = started(run);
    d.succeed("a-00");
    expect(group(run, "a").state).toBe("Pending");
    expect(gate(run, "group:a:after").state).toBe("Pending");
    expect(running(run)).toEqual(["b-00"]);
    d.succeed("b-00", "b-01");
    expect(stage(run, "stage-1").state).toBe("Pending");
    d.ok({ type: "ApproveGate", gate: "group:a:after", actor: "erin" });
    expect([group(run, "a").state, run.state]).toEqual([
      "Completed",
      "Completed",
    ]);
  });

  it("several gates at one position are all reached together and the scope waits for each; the second has id #2", () => {
    const run = resolve(
      oneStage([{ name: "a" }], {
        beforeGates: [approval("Security"), approval("Product")],
      }),
      groupOf("a", 1),
    );
    const { d } = started(run);
    expect([
      gate(run, "stage:stage-1:before").state,
      gate(run, "stage:stage-1:before#2").state,
    ]).toEqual(["Pending", "Pending"]);
    expect(
      d.ok({
        type: "ApproveGate",
        gate: "stage:stage-1:before#2",
        actor: "pm",
      }),
    ).toEqual([]);
    expect(run.state).toBe("Pending");
    expect(
      d.ok({ type: "ApproveGate", gate: "stage:stage-1:before", actor: "sec" }),
    ).toEqual(["a-00"]);
  });

  it("approving a gate id without #N approves every Pending approval at that position", () => {
    const run = resolve(
      oneStage([{ name: "a" }], {
        beforeGates: [approval("Security"), approval("Product")],
      }),
      groupOf("a", 1),
    );
    const { d } = started(run);
    expect(
      d.ok({
        type: "ApproveGate",
        gate: "stage:stage-1:before",
        actor: "boss",
      }),
    ).toEqual(["a-00"]);
    expect(gate(run, "stage:stage-1:before#2").completedBy).toBe("boss");
  });

  it("approving a gate that is not Pending is rejected with a clear message and changes nothing", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "s1",
            groups: [{ name: "a" }],
            afterGates: [approval("After")],
          },
          { name: "s2", groups: [{ name: "b" }] },
        ],
      }),
      [...groupOf("a", 1), ...groupOf("b", 1)],
    );
    const { d } = started(run);
    const early = d.send({
      type: "ApproveGate",
      gate: "stage:s1:after",
      actor: "eager",
    });
    expect(early.rejected).toEqual({
      code: "failed_precondition",
      message:
        'Cannot approve gate "stage:s1:after": stage:s1:after is NotStarted; only a Pending approval gate can be completed',
    });
    expect(early.actions).toEqual([]);
    expect(gate(run, "stage:s1:after").state).toBe("NotStarted");
    expect(
      d.send({ type: "ApproveGate", gate: "stage:nope:after" }).rejected,
    ).toEqual({
      code: "not_found",
      message:
        'Cannot complete gate "stage:nope:after": run "run-1" has no such gate',
    });
    d.succeed("a-00");
    d.ok({ type: "ApproveGate", gate: "stage:s1:after", actor: "ok" });
    expect(
      d.send({ type: "ApproveGate", gate: "stage:s1:after", actor: "twice" })
        .rejected?.message,
    ).toContain("stage:s1:after is Completed");
    expect(gate(run, "stage:s1:after").completedBy).toBe("ok");
  });
});

describe("scheduled-start gates", () => {
  it("nextWeeklyOccurrence: later this week, else next week; the start instant itself counts as reached", () => {
    // T0 is Monday 10:00 UTC.
    expect(nextWeeklyOccurrence(T0, "Wednesday", 2 * 60, 0)).toBe(
      at("2026-03-04T02:00:00Z"),
    );
    expect(nextWeeklyOccurrence(T0, "Monday", 9 * 60, 0)).toBe(
      at("2026-03-09T09:00:00Z"),
    );
    expect(nextWeeklyOccurrence(T0, "Monday", 10 * 60, 0)).toBe(T0);
    expect(nextWeeklyOccurrence(T0, "Sunday", 23 * 60, 0)).toBe(
      at("2026-03-08T23:00:00Z"),
    );
    // Offsets: Monday 13:00 at +02:00 is 11:00 UTC today; Monday 11:00 at +02:00 (09:00 UTC) has passed.
    expect(nextWeeklyOccurrence(T0, "Monday", 13 * 60, 120)).toBe(
      at("2026-03-02T11:00:00Z"),
    );
    expect(nextWeeklyOccurrence(T0, "Monday", 11 * 60, 120)).toBe(
      at("2026-03-09T09:00:00Z"),
    );
    // Tuesday 02:00 at -05:00 is Tuesday 07:00 UTC; Monday 23:00 at -05:00 is Tuesday 04:00 UTC.
    expect(nextWeeklyOccurrence(T0, "Tuesday", 2 * 60, -300)).toBe(
      at("2026-03-03T07:00:00Z"),
    );
    expect(nextWeeklyOccurrence(T0, "Monday", 23 * 60, -300)).toBe(
      at("2026-03-03T04:00:00Z"),
    );
    // At +14:00 it is already Tuesday 00:00 locally: Monday 09:00 local is next week's.
    expect(nextWeeklyOccurrence(T0, "Monday", 9 * 60, 14 * 60)).toBe(
      at("2026-03-08T19:00:00Z"),
    );
  });

  it("when reached, a scheduled start computes its time this week and completes by itself at that time (Tick at wakeAtMs)", () => {
    const run = resolve(
      oneStage([{ name: "a" }], {
        beforeGates: [scheduled("Wednesday", "02:00", "+01:00")],
      }),
      groupOf("a", 1),
    );
    const { d, first } = started(run);
    expect(first).toEqual([]);
    const g = gate(run, "stage:stage-1:before");
    expect(g).toMatchObject({
      state: "Pending",
      scheduledAtMs: at("2026-03-04T01:00:00Z"),
      message: "Scheduled to start at 2026-03-04T01:00:00Z",
    });
    expect(run).toMatchObject({
      state: "Pending",
      wakeAtMs: at("2026-03-04T01:00:00Z"),
    });
    expect(d.tick(at("2026-03-04T00:59:59Z"))).toEqual([]);
    expect(d.tick()).toEqual(["a-00"]);
    expect(gate(run, "stage:stage-1:before")).toMatchObject({
      state: "Completed",
      completedBy: "schedule",
      completedAtMs: at("2026-03-04T01:00:00Z"),
    });
  });

  it("a scheduled start whose moment has passed this week waits for next week", () => {
    const run = resolve(
      oneStage([{ name: "a" }], {
        beforeGates: [scheduled("Monday", "09:00")],
      }),
      groupOf("a", 1),
    );
    started(run);
    expect(gate(run, "stage:stage-1:before").scheduledAtMs).toBe(
      at("2026-03-09T09:00:00Z"),
    );
  });

  it("the time is computed when the gate is reached, not when the run is created", () => {
    const run = resolve(
      strategy({
        stages: [
          { name: "s1", groups: [{ name: "a" }] },
          {
            name: "s2",
            groups: [
              { name: "b", beforeGates: [scheduled("Tuesday", "06:00")] },
            ],
          },
        ],
      }),
      [...groupOf("a", 1), ...groupOf("b", 1)],
      { progressDeadlineSeconds: 7 * 24 * 3600 },
    );
    const { d } = started(run);
    // Stage s1 takes until Tuesday 07:00, past this week's Tuesday 06:00.
    d.ok(
      { type: "MemberSucceeded", member: "a-00" },
      at("2026-03-03T07:00:00Z"),
    );
    expect(gate(run, "group:b:before")).toMatchObject({
      state: "Pending",
      reachedAtMs: at("2026-03-03T07:00:00Z"),
      scheduledAtMs: at("2026-03-10T06:00:00Z"),
    });
  });

  it("an operator may complete a scheduled start early with CompleteGate; ApproveGate does not apply to it", () => {
    const run = resolve(
      oneStage([{ name: "a", beforeGates: [scheduled("Friday", "22:00")] }]),
      groupOf("a", 1),
    );
    const { d } = started(run);
    expect(group(run, "a").state).toBe("Pending");
    expect(run.wakeAtMs).toBe(at("2026-03-06T22:00:00Z"));
    expect(
      d.send({ type: "ApproveGate", gate: "group:a:before", actor: "x" })
        .rejected?.message,
    ).toBe(
      'Cannot approve gate "group:a:before": group:a:before is Pending; only a Pending approval gate can be completed',
    );
    expect(
      d.ok(
        {
          type: "CompleteGate",
          gate: "group:a:before",
          actor: "ops",
          reason: "hotfix",
        },
        T0 + MINUTE,
      ),
    ).toEqual(["a-00"]);
    expect(gate(run, "group:a:before")).toMatchObject({
      state: "Completed",
      completedBy: "ops",
      message: "Completed by ops: hotfix at 2026-03-02T10:01:00Z",
    });
  });

  it("maintenance windows still apply after a scheduled start opens", () => {
    const run = resolve(
      oneStage([{ name: "a" }], {
        beforeGates: [scheduled("Monday", "12:00")],
      }),
      [
        cluster("a-00", {
          updateGroup: "a",
          maintenance: oneOff(T0 + 5 * HOUR, T0 + 6 * HOUR),
        }),
      ],
    );
    const { d } = started(run);
    expect(d.tick()).toEqual([]);
    expect(d.now).toBe(T0 + 2 * HOUR);
    expect(member(run, "a-00").state).toBe("Pending");
    expect(d.tick()).toEqual(["a-00"]);
    expect(d.now).toBe(T0 + 5 * HOUR);
  });
});

describe("after-stage wait (docs/semantics.md#gates-and-waits)", () => {
  const twoStages = (wait: number) =>
    strategy({
      stages: [
        {
          name: "s1",
          groups: [{ name: "a" }],
          afterStageWaitInSeconds: wait,
          afterGates: [approval("Bake OK")],
        },
        { name: "s2", groups: [{ name: "b" }] },
      ],
    });

  it("runs in parallel with the after-stage approval: approved early, the next stage starts when the wait ends", () => {
    const run = resolve(twoStages(3600), [
      ...groupOf("a", 1),
      ...groupOf("b", 1),
    ]);
    const { d } = started(run);
    d.succeed("a-00");
    expect(stage(run, "s1").waitUntilMs).toBe(T0 + HOUR);
    expect(gate(run, "stage:s1:after").state).toBe("Pending");
    expect(
      d.ok(
        { type: "ApproveGate", gate: "stage:s1:after", actor: "qa" },
        T0 + 10 * MINUTE,
      ),
    ).toEqual([]);
    expect(stage(run, "s1")).toMatchObject({
      state: "Running",
      message: "Waiting 3600s after the stage, until 2026-03-02T11:00:00Z",
    });
    expect(run.wakeAtMs).toBe(T0 + HOUR);
    expect(d.tick()).toEqual(["b-00"]);
    expect(stage(run, "s1").state).toBe("Completed");
  });

  it("runs in parallel with the after-stage approval: when the wait ends first, the next stage starts at the approval", () => {
    const run = resolve(twoStages(600), [
      ...groupOf("a", 1),
      ...groupOf("b", 1),
    ]);
    const { d } = started(run);
    d.succeed("a-00");
    expect(d.tick()).toEqual([]);
    expect(d.now).toBe(T0 + 10 * MINUTE);
    expect(stage(run, "s1").state).toBe("Pending");
    expect(
      d.ok(
        { type: "ApproveGate", gate: "stage:s1:after", actor: "qa" },
        T0 + HOUR,
      ),
    ).toEqual(["b-00"]);
  });

  it("without gates, the wait alone holds the next stage", () => {
    const run = resolve(
      strategy({
        stages: [
          { name: "s1", groups: [{ name: "a" }], afterStageWaitInSeconds: 120 },
          { name: "s2", groups: [{ name: "b" }] },
        ],
      }),
      [...groupOf("a", 1), ...groupOf("b", 1)],
    );
    const { d } = started(run);
    expect(
      d.ok({ type: "MemberSucceeded", member: "a-00" }, T0 + MINUTE),
    ).toEqual([]);
    expect(run.wakeAtMs).toBe(T0 + 3 * MINUTE);
    expect(d.tick()).toEqual(["b-00"]);
  });
});

describe("gates of skipped scopes", () => {
  it("skipping a stage marks all its gates and its groups' gates Skipped", () => {
    const run = resolve(
      strategy({
        stages: [
          { name: "s1", groups: [{ name: "a" }] },
          {
            name: "s2",
            beforeGates: [approval("Before")],
            afterGates: [approval("After")],
            groups: [
              {
                name: "b",
                beforeGates: [approval("B")],
                afterGates: [approval("B after")],
              },
            ],
          },
          { name: "s3", groups: [{ name: "c" }] },
        ],
      }),
      [...groupOf("a", 1), ...groupOf("b", 1), ...groupOf("c", 1)],
    );
    const { d } = started(run);
    d.ok({
      type: "SkipStage",
      stage: "s2",
      actor: "ops",
      reason: "not needed",
    });
    for (const id of [
      "stage:s2:before",
      "stage:s2:after",
      "group:b:before",
      "group:b:after",
    ]) {
      expect(gate(run, id)).toMatchObject({
        state: "Skipped",
        message: "Skipped by ops: not needed",
      });
    }
    expect(d.succeed("a-00")).toEqual(["c-00"]);
  });

  it("skipping a group whose before-gate is Pending skips the gate and lets the stage finish", () => {
    const run = resolve(
      oneStage([{ name: "a", beforeGates: [approval("A")] }, { name: "b" }]),
      [...groupOf("a", 1), ...groupOf("b", 1)],
    );
    const { d } = started(run);
    expect(gate(run, "group:a:before").state).toBe("Pending");
    d.ok({ type: "SkipGroup", group: "a", actor: "ops" });
    expect(gate(run, "group:a:before").state).toBe("Skipped");
    d.succeed("b-00");
    expect(run.state).toBe("Completed");
  });
});
