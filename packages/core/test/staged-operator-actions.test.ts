/**
 * Operator actions and states (docs/semantics.md#operator-actions): start, stop, resume, retry,
 * skip; rejected commands change nothing; every state is reachable and every transition carries a
 * time and a message.
 */
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../src/staged/events.js";
import { cloneRun, type Run } from "../src/staged/run.js";
import {
  Driver,
  HOUR,
  MINUTE,
  T0,
  cluster,
  fullUpgrade,
  group,
  groupOf,
  member,
  oneStage,
  resolve,
  running,
  stage,
  started,
  strategy,
  transitions,
  windows,
} from "./staged-fixtures.js";

const twoStages = () =>
  strategy({
    stages: [
      { name: "s1", groups: [{ name: "a", maxConcurrency: 2 }, { name: "b" }] },
      { name: "s2", groups: [{ name: "c" }] },
    ],
  });
const twoStageFleet = () => [
  ...groupOf("a", 4),
  ...groupOf("b", 2),
  ...groupOf("c", 2),
];

describe("start, stop and resume", () => {
  it("StartRun starts a NotStarted run and records who and why", () => {
    const run = resolve(twoStages(), twoStageFleet());
    const d = new Driver(run);
    expect(d.start()).toEqual(["a-00", "b-00", "a-01"]);
    expect(run).toMatchObject({ state: "Running", startedAtMs: T0 });
    expect(d.transitionsOf("run", "run-1")).toEqual(["NotStarted->Running"]);
    expect(transitions(d.actions).find((t) => t.scope === "run")?.message).toBe(
      "Started by alice: test",
    );
  });

  it("StopRun lets in-flight members finish and starts nothing new: Stopping, then Stopped", () => {
    const run = resolve(twoStages(), twoStageFleet());
    const { d } = started(run);
    d.ok({ type: "StopRun", actor: "ops", reason: "incident" });
    expect(run.state).toBe("Stopping");
    expect(
      transitions(d.last?.actions ?? []).filter((t) => t.scope === "run"),
    ).toEqual([
      {
        type: "Transitioned",
        scope: "run",
        name: "run-1",
        from: "Running",
        to: "Stopping",
        atMs: T0,
        message: "Stop requested by ops: incident",
      },
    ]);
    expect(d.succeed("a-00")).toEqual([]);
    expect(run.state).toBe("Stopping");
    expect(run.message).toBe(
      "Stopping (stop requested): waiting for 2 in-flight member(s)",
    );
    expect(d.succeed("b-00", "a-01")).toEqual([]);
    expect(run).toMatchObject({
      state: "Stopped",
      message: "Stopped by ops: incident",
    });
    expect([
      group(run, "a").state,
      group(run, "b").state,
      stage(run, "s1").state,
      stage(run, "s2").state,
    ]).toEqual(["Stopped", "Stopped", "Stopped", "NotStarted"]);
  });

  it("StartRun is refused while the run is Stopping (as in AKS): in-flight members finish first", () => {
    const run = resolve(twoStages(), twoStageFleet());
    const { d } = started(run);
    d.ok({ type: "StopRun", actor: "ops" });
    expect(d.send({ type: "StartRun", actor: "ops" }).rejected).toEqual({
      code: "failed_precondition",
      message:
        'Cannot start run "run-1": it is Stopping; start it again once it is Stopped',
    });
    expect(run.state).toBe("Stopping");
    d.succeed("a-00", "b-00", "a-01");
    expect(run.state).toBe("Stopped");
    d.ok({ type: "StartRun", actor: "ops" });
    expect(run.state).toBe("Running");
  });

  it("StopRun with nothing in flight stops at once", () => {
    const run = resolve(
      oneStage([{ name: "a" }], { beforeGates: [{ type: "Approval" }] }),
      groupOf("a", 1),
    );
    const { d } = started(run);
    expect(run.state).toBe("Pending");
    d.ok({ type: "StopRun", actor: "ops" });
    expect(run.state).toBe("Stopped");
    expect(d.transitionsOf("run", "run-1")).toEqual([
      "NotStarted->Running",
      "Running->Pending",
      "Pending->Stopping",
      "Stopping->Stopped",
    ]);
  });

  it("StartRun on a Stopped run resumes with the first unprocessed member", () => {
    const run = resolve(twoStages(), twoStageFleet());
    const { d } = started(run);
    d.ok({ type: "StopRun" });
    d.succeed("a-00", "b-00", "a-01");
    expect(run.state).toBe("Stopped");
    const resumed = d.ok(
      { type: "StartRun", actor: "ops", reason: "incident over" },
      T0 + HOUR,
    );
    expect(resumed).toEqual(["a-02", "b-01", "a-03"]);
    expect(run).toMatchObject({ state: "Running", startedAtMs: T0 });
    expect(
      transitions(d.last?.actions ?? []).find((t) => t.scope === "run"),
    ).toMatchObject({
      from: "Stopped",
      to: "Running",
      message: "Resumed by ops: incident over",
    });
    expect([group(run, "a").state, stage(run, "s1").state]).toEqual([
      "Running",
      "Running",
    ]);
    expect(d.drain()).toEqual(["c-00", "c-01"]);
    expect(run.state).toBe("Completed");
  });

  it("a Failed run can be started again; it resumes with the next unprocessed member and does not retry the failed one", () => {
    const run = resolve(oneStage([{ name: "a" }]), groupOf("a", 3));
    const { d } = started(run);
    d.fail("a-00");
    expect(run.state).toBe("Failed");
    expect(d.ok({ type: "StartRun", actor: "ops" })).toEqual(["a-01"]);
    expect(member(run, "a-00").state).toBe("Failed");
    expect(d.drain()).toEqual(["a-02"]);
    expect(run).toMatchObject({ state: "Completed", failureCount: 1 });
  });

  it("a restarted run whose budget is still exceeded stops again at the next failure", () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: 0 }]),
      groupOf("a", 3),
    );
    const { d } = started(run);
    d.fail("a-00");
    d.ok({ type: "StartRun" });
    d.fail("a-01");
    expect(run.state).toBe("Failed");
    expect(member(run, "a-02").state).toBe("NotStarted");
  });
});

describe("retry", () => {
  it("RetryMembers puts failed members back in the queue, uncounts their failure and keeps their attempt count", () => {
    const run = resolve(oneStage([{ name: "a" }]), groupOf("a", 2));
    const { d } = started(run);
    d.fail("a-00");
    expect(run.state).toBe("Failed");
    d.ok({ type: "RetryMembers", actor: "ops", reason: "flaky" });
    expect(member(run, "a-00")).toMatchObject({
      state: "NotStarted",
      message: "Retry requested by ops: flaky",
      failureCount: 1,
    });
    expect([
      group(run, "a").failureCount,
      stage(run, "stage-1").failureCount,
      run.failureCount,
    ]).toEqual([0, 0, 0]);
    // A Failed run still needs StartRun; the retried member goes first (lowest name).
    expect(run.state).toBe("Failed");
    expect(d.ok({ type: "StartRun" })).toEqual(["a-00"]);
    expect(d.drain()).toEqual(["a-01"]);
    expect(run).toMatchObject({ state: "Completed", failureCount: 0 });
  });

  it("a member retried in a running run starts again when a slot frees", () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: 1 }]),
      groupOf("a", 3),
    );
    const { d } = started(run);
    d.fail("a-00");
    expect(running(run)).toEqual(["a-01"]);
    d.ok({ type: "RetryMembers", members: ["a-00"] });
    expect(d.succeed("a-01")).toEqual(["a-00"]);
  });

  it("a failed member of a group that already completed within its budget can be retried while its stage is still open", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "s1",
            afterGates: [{ type: "Approval" }],
            groups: [{ name: "a", maxAllowedFailures: 1 }],
          },
          { name: "s2", groups: [{ name: "b" }] },
        ],
      }),
      [...groupOf("a", 2), ...groupOf("b", 1)],
    );
    const { d } = started(run);
    d.fail("a-00");
    d.succeed("a-01");
    expect(group(run, "a").state).toBe("Completed");
    expect(stage(run, "s1").state).toBe("Pending");
    expect(d.ok({ type: "RetryMembers", members: ["a-00"] })).toEqual(["a-00"]);
    expect(group(run, "a").state).toBe("Running");
    d.succeed("a-00");
    d.ok({ type: "ApproveGate", gate: "stage:s1:after" });
    expect(member(run, "a-00").state).toBe("Succeeded");
    d.succeed("b-00");
    expect(run).toMatchObject({ state: "Completed", failureCount: 0 });
  });

  it("the after-stage wait restarts when a retried member finishes: it counts from the stage's last member", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "s1",
            afterStageWaitInSeconds: 600,
            groups: [{ name: "a", maxAllowedFailures: 1 }],
          },
          { name: "s2", groups: [{ name: "b" }] },
        ],
      }),
      [...groupOf("a", 2), ...groupOf("b", 1)],
    );
    const { d } = started(run);
    d.fail("a-00");
    d.succeed("a-01");
    expect(stage(run, "s1").waitUntilMs).toBe(T0 + 10 * MINUTE);
    expect(
      d.ok({ type: "RetryMembers", members: ["a-00"] }, T0 + MINUTE),
    ).toEqual(["a-00"]);
    expect(
      d.ok({ type: "MemberSucceeded", member: "a-00" }, T0 + 20 * MINUTE),
    ).toEqual([]);
    expect(stage(run, "s1").waitUntilMs).toBe(T0 + 30 * MINUTE);
    expect(d.tick()).toEqual(["b-00"]);
    expect(d.now).toBe(T0 + 30 * MINUTE);
  });

  it("RetryMembers does not put back failed members of a skipped group, where they would never run", () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: 1 }, { name: "b" }]),
      [...groupOf("a", 2), ...groupOf("b", 1)],
    );
    const { d } = started(run);
    d.fail("a-00");
    d.ok({ type: "SkipGroup", group: "a", actor: "ops" });
    d.succeed("a-01");
    expect(group(run, "a").state).toBe("Skipped");
    expect(
      d.send({ type: "RetryMembers", members: ["a-00"] }).rejected,
    ).toEqual({
      code: "failed_precondition",
      message: 'Cannot retry member "a-00": its group "a" was skipped',
    });
    expect(d.send({ type: "RetryMembers" }).rejected?.message).toBe(
      'Cannot retry: run "run-1" has no failed members in its current stage',
    );
    d.succeed("b-00");
    expect(run).toMatchObject({ state: "Completed", failureCount: 1 });
  });

  it("RetryMembers naming a member twice retries it once", () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: 5 }]),
      groupOf("a", 2),
    );
    const { d } = started(run);
    d.fail("a-00");
    d.ok({ type: "RetryMembers", members: ["a-00", "a-00"] });
    expect([
      group(run, "a").failureCount,
      run.failureCount,
      group(run, "a").remaining,
    ]).toEqual([0, 0, 2]);
    expect(d.drain()).toEqual(["a-00"]);
    expect(run).toMatchObject({ state: "Completed", failureCount: 0 });
  });

  it("RetryMembers is rejected for a member that is not Failed, or not in the current stage", () => {
    const run = resolve(twoStages(), twoStageFleet());
    const { d } = started(run);
    expect(
      d.send({ type: "RetryMembers", members: ["a-00"] }).rejected?.message,
    ).toBe('Cannot retry member "a-00": it is Running, not Failed');
    expect(d.send({ type: "RetryMembers" }).rejected?.message).toBe(
      'Cannot retry: run "run-1" has no failed members in its current stage',
    );
    expect(
      d.send({ type: "RetryMembers", members: ["zzz"] }).rejected?.code,
    ).toBe("not_found");
  });
});

describe("skip", () => {
  it("SkipMember skips a waiting member with reason SkippedByOperator and the operator's reason in the message", () => {
    const run = resolve(oneStage([{ name: "a" }]), groupOf("a", 3));
    const { d } = started(run);
    d.ok({
      type: "SkipMember",
      member: "a-01",
      actor: "ops",
      reason: "decommissioning",
    });
    expect(member(run, "a-01")).toMatchObject({
      state: "Skipped",
      reason: "SkippedByOperator",
      message: "Skipped by ops: decommissioning",
    });
    expect(d.succeed("a-00")).toEqual(["a-02"]);
  });

  it("skipping the failed member of a group that exceeded its budget uncounts the failure and lets the group finish on restart", () => {
    const run = resolve(
      oneStage([
        {
          name: "a",
          maxAllowedFailures: 0,
          afterGates: [{ type: "Approval" }],
        },
        { name: "b" },
      ]),
      [...groupOf("a", 1), ...groupOf("b", 1)],
    );
    const { d } = started(run);
    d.fail("a-00");
    d.succeed("b-00");
    expect([group(run, "a").state, run.state]).toEqual(["Failed", "Failed"]);
    d.ok({
      type: "SkipMember",
      member: "a-00",
      actor: "ops",
      reason: "known bad cluster",
    });
    expect([group(run, "a").failureCount, run.failureCount]).toEqual([0, 0]);
    expect(group(run, "a").state).not.toBe("Failed");
    d.ok({ type: "StartRun", actor: "ops" });
    expect(group(run, "a").state).toBe("Skipped");
    expect(d.transitionsOf("gate", "group:a:after")).toEqual([
      "NotStarted->Skipped",
    ]);
    expect(run).toMatchObject({ state: "Completed", failureCount: 0 });
  });

  it("SkipGroup skips the group's waiting members; in-flight members finish first, then the group is Skipped", () => {
    const run = resolve(
      oneStage([{ name: "a", maxConcurrency: 2 }, { name: "b" }]),
      [...groupOf("a", 4), ...groupOf("b", 1)],
    );
    const { d } = started(run);
    d.ok({ type: "SkipGroup", group: "a", actor: "ops", reason: "bad batch" });
    expect([member(run, "a-02").state, member(run, "a-03").state]).toEqual([
      "Skipped",
      "Skipped",
    ]);
    expect(group(run, "a")).toMatchObject({
      state: "Running",
      message: "Skipping: waiting for 2 in-flight member(s)",
    });
    expect(d.succeed("a-00", "a-01")).toEqual([]);
    expect(group(run, "a").state).toBe("Skipped");
    d.succeed("b-00");
    expect(stage(run, "stage-1").state).toBe("Completed");
    expect(run.state).toBe("Completed");
  });

  it("a member in flight when its group is skipped and then deferred by its agent is skipped with the group", () => {
    const run = resolve(oneStage([{ name: "a" }, { name: "b" }]), [
      ...groupOf("a", 2),
      ...groupOf("b", 1),
    ]);
    const { d } = started(run);
    d.ok({ type: "SkipGroup", group: "a", actor: "ops" });
    d.ok({
      type: "MemberDeferred",
      member: "a-00",
      message: "window closed on the agent",
    });
    expect(member(run, "a-00")).toMatchObject({
      state: "Skipped",
      reason: "SkippedByOperator",
      message: 'Skipped with group "a"',
    });
    expect(group(run, "a")).toMatchObject({ state: "Skipped", remaining: 0 });
    d.succeed("b-00");
    expect(run.state).toBe("Completed");
  });

  it("SkipStage skips the stage's waiting members and groups; the run moves on to the next stage", () => {
    const run = resolve(twoStages(), twoStageFleet());
    const { d } = started(run);
    d.ok({
      type: "SkipStage",
      stage: "s1",
      actor: "ops",
      reason: "hotfix first",
    });
    expect(stage(run, "s1")).toMatchObject({
      state: "Running",
      message: "Skipping: waiting for 3 in-flight member(s)",
    });
    expect(d.succeed("a-00", "b-00")).toEqual([]);
    expect(d.succeed("a-01")).toEqual(["c-00"]);
    expect(stage(run, "s1").state).toBe("Skipped");
    expect([group(run, "a").state, group(run, "b").state]).toEqual([
      "Skipped",
      "Skipped",
    ]);
    expect(member(run, "a-02")).toMatchObject({
      state: "Skipped",
      message: "Skipped by ops: hotfix first",
    });
  });

  it("skipping a stage with nothing in flight skips its groups too, now or when the run reaches it", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "s1",
            groups: [{ name: "a" }],
            beforeGates: [{ type: "Approval" }],
          },
          { name: "s2", groups: [{ name: "b" }, { name: "c" }] },
        ],
      }),
      [...groupOf("a", 1), ...groupOf("b", 1), ...groupOf("c", 1)],
    );
    const { d } = started(run);
    d.ok({ type: "SkipStage", stage: "s2" });
    expect(d.ok({ type: "SkipStage", stage: "s1" })).toEqual([]);
    expect(run.state).toBe("Skipped");
    expect(
      run.stages.flatMap((s) => s.groups.map((g) => `${g.name}:${g.state}`)),
    ).toEqual(["a:Skipped", "b:Skipped", "c:Skipped"]);
  });

  it("an operator may skip a stage that has no members before the run reaches it: the skip is theirs, not NoMembers", () => {
    const s = strategy({
      stages: [
        { name: "s1", groups: [{ name: "a" }] },
        { name: "empty", groups: [{ name: "nobody" }] },
      ],
    });
    const run = resolve(s, groupOf("a", 1));
    const d = new Driver(run);
    d.ok({
      type: "SkipStage",
      stage: "empty",
      actor: "ops",
      reason: "no members",
    });
    expect(d.start()).toEqual(["a-00"]);
    d.succeed("a-00");
    expect(run.stages.map((st) => [st.state, st.reason])).toEqual([
      ["Completed", undefined],
      ["Skipped", undefined],
    ]);
    expect(run.stages[1]?.message).toBe("Skipped by ops: no members");
    expect(run.state).toBe("Completed");
  });

  it("a run whose stages are all skipped is Skipped", () => {
    const run = resolve(twoStages(), twoStageFleet());
    const d = new Driver(run);
    d.ok({ type: "SkipStage", stage: "s1" });
    d.ok({ type: "SkipStage", stage: "s2" });
    expect(d.start()).toEqual([]);
    expect(run).toMatchObject({
      state: "Skipped",
      message: "All stages were skipped",
    });
  });

  it("a stage whose groups are all skipped is Skipped", () => {
    const run = resolve(twoStages(), twoStageFleet());
    const { d } = started(run);
    d.ok({ type: "SkipGroup", group: "c" });
    d.ok({ type: "SkipGroup", group: "b" });
    d.succeed("b-00");
    d.ok({ type: "SkipGroup", group: "a" });
    d.succeed("a-00", "a-01");
    expect(run.stages.map((s) => s.state)).toEqual(["Skipped", "Skipped"]);
    expect(run.state).toBe("Skipped");
  });
});

describe("rejected commands change nothing and say why", () => {
  const cases: [string, (run: Run) => Driver, RunEvent, string, string][] = [
    [
      "starting a Completed run",
      completedRun,
      { type: "StartRun" },
      "failed_precondition",
      'Cannot start run "run-1": it is Completed',
    ],
    [
      "starting a Running run",
      runningRun,
      { type: "StartRun" },
      "failed_precondition",
      'Cannot start run "run-1": it is already Running',
    ],
    [
      "stopping a NotStarted run",
      (r) => new Driver(r),
      { type: "StopRun" },
      "failed_precondition",
      'Cannot stop run "run-1": it is NotStarted',
    ],
    [
      "skipping an unknown stage",
      runningRun,
      { type: "SkipStage", stage: "nope" },
      "not_found",
      'Cannot skip stage "nope": run "run-1" has no such stage',
    ],
    [
      "skipping an unknown group",
      runningRun,
      { type: "SkipGroup", group: "nope" },
      "not_found",
      'Cannot skip group "nope": run "run-1" has no such group',
    ],
    [
      "skipping a Running member",
      runningRun,
      { type: "SkipMember", member: "a-00" },
      "failed_precondition",
      'Cannot skip member "a-00": it is Running; wait for it to finish or for its deadline',
    ],
    [
      "skipping a Succeeded member",
      completedRun,
      { type: "SkipMember", member: "a-00" },
      "failed_precondition",
      'Cannot skip member "a-00": it is already Succeeded',
    ],
    [
      "skipping a finished stage",
      completedRun,
      { type: "SkipStage", stage: "stage-1" },
      "failed_precondition",
      'Cannot skip stage "stage-1": it has already finished (Completed)',
    ],
    [
      "approving a gate that does not exist",
      runningRun,
      { type: "ApproveGate", gate: "group:a:before" },
      "not_found",
      'Cannot complete gate "group:a:before": run "run-1" has no such gate',
    ],
    [
      "reporting on a cluster that is not a member",
      runningRun,
      { type: "MemberFailed", member: "x", error: "e" },
      "not_found",
      'Cluster "x" is not a member of run "run-1"',
    ],
    [
      "reporting success for a member that is not Running",
      runningRun,
      { type: "MemberSucceeded", member: "a-01" },
      "failed_precondition",
      'Ignoring MemberSucceeded for member "a-01": it is NotStarted, not Running',
    ],
    [
      "retrying members of a Completed run",
      completedRun,
      { type: "RetryMembers" },
      "failed_precondition",
      'Cannot retry members of run "run-1": it is Completed',
    ],
  ];

  function runningRun(run: Run): Driver {
    return started(run).d;
  }
  function completedRun(run: Run): Driver {
    const d = started(run).d;
    d.drain();
    return d;
  }

  it.each(cases)(
    "%s is rejected with a clear message and no change",
    (_, setup, event, code, message) => {
      const run = resolve(oneStage([{ name: "a" }]), groupOf("a", 2));
      const d = setup(run);
      const before = cloneRun(run);
      const result = d.send(event, d.now + 1000);
      expect(result.rejected).toEqual({ code, message });
      expect(result.actions).toEqual([]);
      expect(result.run).toBe(run);
      expect(cloneRun(run)).toEqual(before);
    },
  );
});

describe("states (docs/semantics.md#operator-actions)", () => {
  it("every run, stage, group and member state is reachable, and every transition has a time and a message", () => {
    const seen = {
      run: new Set<string>(),
      stage: new Set<string>(),
      group: new Set<string>(),
      member: new Set<string>(),
      gate: new Set<string>(),
    };
    const record = (d: Driver): void => {
      for (const t of transitions(d.actions)) {
        seen[t.scope].add(t.from).add(t.to);
        expect(typeof t.atMs).toBe("number");
        expect(t.message.length).toBeGreaterThan(0);
      }
    };
    // Completed, Pending (window), Skipped member (at creation), Succeeded.
    {
      const closed = windows({
        kubernetes: {
          start: "2026-03-02T12:00:00Z",
          end: "2026-03-02T13:00:00Z",
        },
      });
      const run = resolve(
        oneStage([{ name: "a" }]),
        [
          cluster("a-1", { updateGroup: "a", maintenance: closed }),
          cluster("a-2", { updateGroup: "a", kubernetesVersion: "1.31.2" }),
        ],
        {
          payload: fullUpgrade("1.31.2"),
        },
      );
      const { d } = started(run);
      d.tick();
      d.succeed("a-1");
      record(d);
      expect(run.state).toBe("Completed");
    }
    // Stopping, Stopped (run, stage, group).
    {
      const run = resolve(oneStage([{ name: "a" }]), groupOf("a", 2));
      const { d } = started(run);
      d.ok({ type: "StopRun" });
      d.succeed("a-00");
      record(d);
    }
    // Failed (member, group, stage, run).
    {
      const run = resolve(
        oneStage([{ name: "a", maxAllowedFailures: 0 }], {
          maxAllowedFailures: 0,
        }),
        groupOf("a", 2),
      );
      const { d } = started(run);
      d.fail("a-00");
      record(d);
    }
    // Skipped (run, stage, group, gate).
    {
      const run = resolve(
        oneStage([{ name: "a", beforeGates: [{ type: "Approval" }] }]),
        groupOf("a", 1),
      );
      const { d } = started(run);
      d.ok({ type: "SkipStage", stage: "stage-1" });
      record(d);
    }
    // Gate Pending → Completed.
    {
      const run = resolve(
        oneStage([{ name: "a", beforeGates: [{ type: "Approval" }] }]),
        groupOf("a", 1),
      );
      const { d } = started(run);
      d.ok({ type: "ApproveGate", gate: "group:a:before" });
      record(d);
    }
    expect([...seen.run].sort()).toEqual([
      "Completed",
      "Failed",
      "NotStarted",
      "Pending",
      "Running",
      "Skipped",
      "Stopped",
      "Stopping",
    ]);
    expect([...seen.stage].sort()).toEqual([
      "Completed",
      "Failed",
      "NotStarted",
      "Pending",
      "Running",
      "Skipped",
      "Stopped",
    ]);
    expect([...seen.group].sort()).toEqual([
      "Completed",
      "Failed",
      "NotStarted",
      "Pending",
      "Running",
      "Skipped",
      "Stopped",
    ]);
    expect([...seen.member].sort()).toEqual([
      "Failed",
      "NotStarted",
      "Pending",
      "Running",
      "Skipped",
      "Succeeded",
    ]);
    expect([...seen.gate].sort()).toEqual([
      "Completed",
      "NotStarted",
      "Pending",
      "Skipped",
    ]);
  });
});
