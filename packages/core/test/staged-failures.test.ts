/**
 * Failure budgets and deadlines (docs/semantics.md#failure-budget,
 * docs/semantics.md#offline-clusters, docs/semantics.md#int-or-percent rule 3) with the worked
 * examples of the AKS seed ("Maksymalna dozwolona liczba niepowodzeń").
 */
import { describe, expect, it } from "vitest";
import {
  HOUR,
  MINUTE,
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
  strategy,
} from "./staged-fixtures.js";

describe("AKS seed: maxAllowedFailures resolution", () => {
  it('"25%" of 5 clusters resolves to 2 (rounded up)', () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: "25%" }]),
      groupOf("a", 5),
    );
    expect(group(run, "a").maxAllowedFailures).toBe(2);
  });

  it('Example 2 (percentage tolerance): a 19-cluster stage of A (7) and B (12), all at "25%" → stage 5, A 2, B 3', () => {
    const run = resolve(
      oneStage(
        [
          { name: "a", maxAllowedFailures: "25%" },
          { name: "b", maxAllowedFailures: "25%" },
        ],
        { maxAllowedFailures: "25%" },
      ),
      [...groupOf("a", 7), ...groupOf("b", 12)],
    );
    expect([
      stage(run, "stage-1").maxAllowedFailures,
      group(run, "a").maxAllowedFailures,
      group(run, "b").maxAllowedFailures,
    ]).toEqual([5, 2, 3]);
  });

  it('"25%" of 4 → 1 and "20%" of 10 → 2 (docs/semantics.md#int-or-percent examples)', () => {
    const run = resolve(
      oneStage([
        { name: "a", maxAllowedFailures: "25%" },
        { name: "b", maxAllowedFailures: "20%" },
      ]),
      [...groupOf("a", 4), ...groupOf("b", 10)],
    );
    expect([
      group(run, "a").maxAllowedFailures,
      group(run, "b").maxAllowedFailures,
    ]).toEqual([1, 2]);
  });
});

describe("failure budgets (docs/semantics.md#failure-budget)", () => {
  it('Decision: Completed with 0% success: a group of 4 with maxAllowedFailures "4" whose four members all fail ends Completed, failureCount 4', () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: "4" }]),
      groupOf("a", 4),
    );
    expect(stage(run, "stage-1")).toMatchObject({
      maxAllowedFailures: null,
      failFast: false,
    });
    const { d } = started(run);
    for (const name of ["a-00", "a-01", "a-02", "a-03"]) {
      expect(running(run)).toEqual([name]);
      d.fail(name);
    }
    expect(group(run, "a")).toMatchObject({
      state: "Completed",
      failureCount: 4,
    });
    expect(stage(run, "stage-1")).toMatchObject({
      state: "Completed",
      failureCount: 4,
    });
    expect(run).toMatchObject({
      state: "Completed",
      failureCount: 4,
      message: "Completed with 4 failed member(s)",
    });
    expect(
      ["a-00", "a-01", "a-02", "a-03"].map((n) => member(run, n).state),
    ).toEqual(["Failed", "Failed", "Failed", "Failed"]);
  });

  it("Decision: fail-fast by default: with no budget at any level the first failure stops the run (Stopping until in-flight members finish, then Failed)", () => {
    const run = resolve(
      oneStage([{ name: "a", maxConcurrency: 3 }, { name: "b" }]),
      [...groupOf("a", 5), ...groupOf("b", 3)],
    );
    expect(stage(run, "stage-1")).toMatchObject({
      failFast: true,
      maxAllowedFailures: 0,
    });
    const { d, first } = started(run);
    expect(first).toEqual(["a-00", "b-00", "a-01", "a-02"]);
    expect(d.fail("a-00")).toEqual([]);
    expect(run.state).toBe("Stopping");
    expect(stage(run, "stage-1").state).toBe("Failed");
    expect(stage(run, "stage-1").message).toContain("fail-fast");
    expect(d.succeed("a-01", "b-00")).toEqual([]);
    expect(run.state).toBe("Stopping");
    expect(d.succeed("a-02")).toEqual([]);
    expect(run.state).toBe("Failed");
    expect(run.message).toContain('Failure budget exceeded in stage "stage-1"');
    expect(run.finishedAtMs).toBe(d.now);
    expect(member(run, "a-03").state).toBe("NotStarted");
  });

  it('Decision: when some level sets a budget, unset levels impose none: a group budget of "1" and an unset stage tolerate failures across groups', () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: "1" }, { name: "b" }]),
      [...groupOf("a", 2), ...groupOf("b", 3)],
    );
    expect([
      stage(run, "stage-1").maxAllowedFailures,
      group(run, "b").maxAllowedFailures,
    ]).toEqual([null, null]);
    const { d } = started(run);
    // Group b sets nothing: its failures count but never fail it, nor the stage.
    d.fail("b-00");
    d.fail("b-01");
    d.fail("a-00");
    d.fail("b-02");
    d.succeed("a-01");
    expect(run).toMatchObject({ state: "Completed", failureCount: 4 });
    expect([
      group(run, "a").failureCount,
      group(run, "b").failureCount,
      stage(run, "stage-1").failureCount,
    ]).toEqual([1, 3, 4]);
  });

  it("a group fails only when its failureCount strictly exceeds its budget (count == budget keeps it going)", () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: "2" }]),
      groupOf("a", 4),
    );
    const { d } = started(run);
    d.fail("a-00");
    expect(d.fail("a-01")).toEqual(["a-02"]);
    expect(group(run, "a").state).toBe("Running");
    d.fail("a-02");
    expect(group(run, "a")).toMatchObject({
      state: "Failed",
      failureCount: 3,
      message: "failureCount 3 exceeds maxAllowedFailures 2",
    });
    expect(run.state).toBe("Failed");
    expect(member(run, "a-03").state).toBe("NotStarted");
  });

  it("AKS seed Example 1 (fixed limits): group A tolerates 2, B 3; the stage fails when its total exceeds 5", () => {
    const s = oneStage(
      [
        { name: "a", maxAllowedFailures: "2", maxConcurrency: 3 },
        { name: "b", maxAllowedFailures: "3", maxConcurrency: 4 },
      ],
      { maxAllowedFailures: "5" },
    );
    const within = resolve(s, [...groupOf("a", 3), ...groupOf("b", 4)]);
    const one = started(within);
    one.d.fail("a-00", "a-01", "b-00", "b-01", "b-02");
    one.d.succeed("a-02", "b-03");
    expect(within).toMatchObject({ state: "Completed", failureCount: 5 });

    const over = resolve(s, [...groupOf("a", 3), ...groupOf("b", 6)]);
    const two = started(over);
    two.d.fail("a-00", "a-01", "b-00", "b-01", "b-02");
    expect(over.state).toBe("Running");
    two.d.fail("b-03");
    // B is at 4 > 3 and the stage at 6 > 5: both fail.
    expect(group(over, "b").state).toBe("Failed");
    expect(stage(over, "stage-1")).toMatchObject({
      state: "Failed",
      message: "failureCount 6 exceeds maxAllowedFailures 5",
    });
  });

  it("the stage budget is the overall ceiling even when each group is within its own", () => {
    const run = resolve(
      oneStage(
        [
          { name: "a", maxAllowedFailures: "5" },
          { name: "b", maxAllowedFailures: "5" },
        ],
        { maxAllowedFailures: "1" },
      ),
      [...groupOf("a", 3), ...groupOf("b", 3)],
    );
    const { d } = started(run);
    d.fail("a-00");
    expect(run.state).toBe("Running");
    d.fail("b-00");
    expect(stage(run, "stage-1").state).toBe("Failed");
    expect(run.state).toBe("Stopping");
    // Neither group is over its own budget: they end Failed because the run halted, never Stopped
    // (only an operator's stop does that), and their message says why.
    d.succeed("a-01");
    expect([group(run, "a").state, group(run, "b").state]).toEqual([
      "Failed",
      "Failed",
    ]);
    expect(group(run, "a").message).toBe(
      'Halted: Failure budget exceeded in stage "stage-1": failureCount 2 exceeds maxAllowedFailures 1',
    );
    expect(run.state).toBe("Failed");
  });

  it("a group over its own budget fails the run whatever the stage allows", () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: "0" }, { name: "b" }], {
        maxAllowedFailures: "10",
      }),
      [...groupOf("a", 2), ...groupOf("b", 2)],
    );
    const { d } = started(run);
    d.fail("a-00");
    expect(group(run, "a").state).toBe("Failed");
    expect(run.state).toBe("Stopping");
    expect(run.message).toContain('group "a"');
    d.succeed("b-00");
    expect(run.state).toBe("Failed");
    expect(member(run, "b-01").state).toBe("NotStarted");
  });

  it("failureCount can exceed the budget: members in flight when it is exceeded finish and are counted, and nothing new starts anywhere", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "s1",
            maxAllowedFailures: "1",
            groups: [
              { name: "a", maxConcurrency: 3 },
              { name: "b", maxConcurrency: 2 },
            ],
          },
          { name: "s2", groups: [{ name: "c" }] },
        ],
      }),
      [...groupOf("a", 6), ...groupOf("b", 4), ...groupOf("c", 1)],
    );
    const { d, first } = started(run);
    expect(first).toEqual(["a-00", "b-00", "a-01", "b-01", "a-02"]);
    // One failure is within the stage budget of 1: its slot is refilled.
    expect(d.fail("a-00")).toEqual(["a-03"]);
    expect(d.fail("a-01")).toEqual([]);
    expect(run.state).toBe("Stopping");
    // Every later outcome, success or failure, starts nothing, in this group or any other.
    expect(d.fail("a-02")).toEqual([]);
    expect(d.fail("b-00")).toEqual([]);
    expect(d.succeed("b-01")).toEqual([]);
    expect(run.state).toBe("Stopping");
    expect(d.fail("a-03")).toEqual([]);
    expect(run.state).toBe("Failed");
    expect(run.failureCount).toBe(5);
    expect(stage(run, "s1")).toMatchObject({
      state: "Failed",
      failureCount: 5,
      maxAllowedFailures: 1,
    });
    expect(d.actions.filter((a) => a.type === "StartMember")).toHaveLength(6);
    expect(stage(run, "s2").state).toBe("NotStarted");
  });

  it("failureCount is kept per member (attempts), group, stage and run", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "s1",
            groups: [
              { name: "a", maxAllowedFailures: 3 },
              { name: "b", maxAllowedFailures: 3 },
            ],
          },
          { name: "s2", groups: [{ name: "c", maxAllowedFailures: 1 }] },
        ],
      }),
      [...groupOf("a", 2), ...groupOf("b", 2), ...groupOf("c", 2)],
    );
    const { d } = started(run);
    d.fail("a-00");
    d.ok({ type: "RetryMembers", members: ["a-00"], actor: "ops" });
    d.fail("b-00", "b-01", "a-01", "a-00");
    d.fail("c-00");
    d.succeed("c-01");
    expect(member(run, "a-00").failureCount).toBe(2);
    expect([
      group(run, "a").failureCount,
      group(run, "b").failureCount,
      group(run, "c").failureCount,
    ]).toEqual([2, 2, 1]);
    expect([
      stage(run, "s1").failureCount,
      stage(run, "s2").failureCount,
      run.failureCount,
    ]).toEqual([4, 1, 5]);
    expect(run.state).toBe("Completed");
  });
});

describe("progress deadline and unreachable agents (docs/semantics.md#failure-budget, docs/semantics.md#offline-clusters)", () => {
  it("a member that has not succeeded within progressDeadlineSeconds is Failed with reason TimedOut, at the deadline", () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: 1 }]),
      groupOf("a", 2),
      { progressDeadlineSeconds: 600 },
    );
    const { d } = started(run);
    expect(member(run, "a-00").deadlineAtMs).toBe(T0 + 600 * SECOND);
    expect(run.wakeAtMs).toBe(T0 + 600 * SECOND);
    expect(d.tick(T0 + 600 * SECOND - 1)).toEqual([]);
    expect(member(run, "a-00").state).toBe("Running");
    expect(d.tick(T0 + 600 * SECOND)).toEqual(["a-01"]);
    expect(member(run, "a-00")).toMatchObject({
      state: "Failed",
      reason: "TimedOut",
      message: "Did not succeed within the progress deadline of 600s",
    });
    expect(group(run, "a").failureCount).toBe(1);
  });

  it("the default progress deadline is one hour", () => {
    const run = resolve(oneStage([{ name: "a" }]), groupOf("a", 1));
    started(run);
    expect(run.wakeAtMs).toBe(T0 + HOUR);
  });

  it("a late success after the deadline is refused: the member stays Failed", () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: 1 }]),
      groupOf("a", 1),
      { progressDeadlineSeconds: 60 },
    );
    const { d } = started(run);
    d.tick(T0 + MINUTE);
    const late = d.send(
      { type: "MemberSucceeded", member: "a-00" },
      T0 + 2 * MINUTE,
    );
    expect(late.rejected?.message).toBe(
      'Ignoring MemberSucceeded for member "a-00": it is Failed, not Running',
    );
    expect(member(run, "a-00").state).toBe("Failed");
  });

  it("an in-flight member whose agent is unreachable at the deadline is Failed with reason Unreachable", () => {
    const run = resolve(
      oneStage([{ name: "a", maxAllowedFailures: 5 }]),
      groupOf("a", 2),
      { progressDeadlineSeconds: 900 },
    );
    const { d } = started(run);
    d.ok({ type: "MemberUnreachable", member: "a-00" }, T0 + MINUTE);
    expect(member(run, "a-00").state).toBe("Running");
    d.tick(T0 + 900 * SECOND);
    expect(member(run, "a-00")).toMatchObject({
      state: "Failed",
      reason: "Unreachable",
    });
    expect(member(run, "a-00").message).toContain(
      "unreachable past the progress deadline of 900s",
    );
  });

  it("an agent that is unreachable for a while but back before the deadline does not fail its member", () => {
    const run = resolve(oneStage([{ name: "a" }]), groupOf("a", 1), {
      progressDeadlineSeconds: 900,
    });
    const { d } = started(run);
    d.ok({ type: "MemberUnreachable", member: "a-00" }, T0 + MINUTE);
    d.ok({ type: "MemberReachable", member: "a-00" }, T0 + 5 * MINUTE);
    d.succeed("a-00");
    expect(run.state).toBe("Completed");
  });

  it("a member not yet started whose agent is unreachable is Pending with reason Unreachable; the group moves on and starts it once it is reachable", () => {
    const run = resolve(oneStage([{ name: "a" }]), groupOf("a", 3));
    const { d } = started(run);
    expect(running(run)).toEqual(["a-00"]);
    d.ok({ type: "MemberUnreachable", member: "a-01" });
    expect(d.succeed("a-00")).toEqual(["a-02"]);
    expect(member(run, "a-01")).toMatchObject({
      state: "Pending",
      reason: "Unreachable",
      message: "Agent unreachable: waiting for it to reconnect",
    });
    d.succeed("a-02");
    // Only the unreachable member remains: the group, stage and run are Pending.
    expect([
      group(run, "a").state,
      stage(run, "stage-1").state,
      run.state,
    ]).toEqual(["Pending", "Pending", "Pending"]);
    expect(group(run, "a").message).toContain("a-01: Agent unreachable");
    expect(run.wakeAtMs).toBeUndefined();
    expect(
      d.ok({ type: "MemberReachable", member: "a-01" }, T0 + HOUR),
    ).toEqual(["a-01"]);
    d.succeed("a-01");
    expect(run.state).toBe("Completed");
  });
});

describe("reports that arrive after the progress deadline", () => {
  it("a success reported after the deadline, before any Tick, still ends the member TimedOut", () => {
    const run = resolve(
      oneStage([{ name: "g", maxAllowedFailures: "1" }]),
      groupOf("g", 2),
      { progressDeadlineSeconds: 600 },
    );
    const { d } = started(run);
    d.ok({ type: "MemberSucceeded", member: "g-00" }, T0 + 601_000);
    expect(member(run, "g-00")).toMatchObject({
      state: "Failed",
      reason: "TimedOut",
    });
    expect(run.failureCount).toBe(1);
  });

  it("a success reported exactly at the deadline counts (the member succeeded within it)", () => {
    const run = resolve(
      oneStage([{ name: "g", maxAllowedFailures: "1" }]),
      groupOf("g", 2),
      { progressDeadlineSeconds: 600 },
    );
    const { d } = started(run);
    d.ok({ type: "MemberSucceeded", member: "g-00" }, T0 + 600_000);
    expect(member(run, "g-00").state).toBe("Succeeded");
  });
});
