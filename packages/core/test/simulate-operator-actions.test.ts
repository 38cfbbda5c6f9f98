/**
 * Operator actions in a scenario (docs/plan-and-simulate.md): each one is fed to the engine's own
 * command at its virtual time, and the run is in the state the engine leaves it in; an action that
 * does not apply at its time is a `rejected` timeline entry with the engine's answer.
 *
 * Without actions: canary-1 runs 10:00–10:10, prod-1/prod-2 10:10–10:20, prod-3/prod-4 10:20–10:30.
 */
import { describe, expect, it } from "vitest";
import {
  fleet,
  memberOf,
  scopeChanges,
  simulated,
  upgradeScenario,
  when,
} from "./simulation-fixtures.js";

const withActions = (
  actions: unknown[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({ ...upgradeScenario, ...extra, actions });

describe("stop and start", () => {
  it("stop lets the in-flight members finish (Stopping, then Stopped); start resumes with the next member", () => {
    const out = simulated(
      withActions([
        { at: "+15m", action: "stop", reason: "pager alert" },
        { at: "+2h", action: "start", reason: "alert resolved" },
      ]),
    );
    expect(scopeChanges(out, "run")).toEqual([
      ["2026-03-02T10:00:00Z", "Running"],
      ["2026-03-02T10:15:00Z", "Stopping"],
      ["2026-03-02T10:20:00Z", "Stopped"],
      ["2026-03-02T12:00:00Z", "Running"],
      ["2026-03-02T12:10:00Z", "Completed"],
    ]);
    const stopping = out.timeline.find(
      (e) => e.type === "run" && e.to === "Stopping",
    );
    expect(stopping?.message).toBe("Stop requested by simulation: pager alert");
    expect(when(out, "succeeded", "prod-2")).toBe("2026-03-02T10:20:00Z");
    expect(when(out, "started", "prod-3")).toBe("2026-03-02T12:00:00Z");
    expect(out).toMatchObject({
      finalState: "Completed",
      end: "2026-03-02T12:10:00Z",
      truncated: false,
    });
  });

  it("a stopped run that nobody starts again ends Stopped, and the simulation is finished", () => {
    const out = simulated(withActions([{ at: "+15m", action: "stop" }]));
    expect(out).toMatchObject({
      finalState: "Stopped",
      end: "2026-03-02T10:20:00Z",
      truncated: false,
    });
    expect(memberOf(out, "prod-3")?.state).toBe("NotStarted");
  });

  it("start while the run is still Stopping is refused by the engine and shown as rejected", () => {
    const out = simulated(
      withActions([
        { at: "+15m", action: "stop" },
        { at: "+17m", action: "start" },
      ]),
    );
    expect(out.timeline.filter((e) => e.type === "rejected")).toEqual([
      {
        at: "2026-03-02T10:17:00Z",
        type: "rejected",
        message:
          'start: Cannot start run "simulation": it is Stopping; start it again once it is Stopped',
      },
    ]);
    expect(out.finalState).toBe("Stopped");
  });
});

describe("restarting a Failed run and retrying members", () => {
  // The canary stage sets no budget: its first failure fails the run (fail-fast).
  const flaky = {
    clusters: { "canary-1": { failAttempts: 1, failAfterSeconds: 600 } },
  };

  it("retry puts the failed member back and start resumes the Failed run; the second attempt succeeds", () => {
    const out = simulated(
      withActions(
        [
          {
            at: "+1h",
            action: "retry",
            members: ["canary-1"],
            reason: "node drained",
          },
          { at: "+1h", action: "start" },
        ],
        flaky,
      ),
    );
    expect(scopeChanges(out, "run")).toEqual([
      ["2026-03-02T10:00:00Z", "Running"],
      ["2026-03-02T10:10:00Z", "Failed"],
      ["2026-03-02T11:00:00Z", "Running"],
      ["2026-03-02T11:30:00Z", "Completed"],
    ]);
    const requeued = out.timeline.find(
      (e) => e.type === "queued" && e.cluster === "canary-1",
    );
    expect(requeued).toMatchObject({
      at: "2026-03-02T11:00:00Z",
      from: "Failed",
      to: "NotStarted",
      message: "Retry requested by simulation: node drained",
    });
    expect(memberOf(out, "canary-1")).toMatchObject({
      state: "Succeeded",
      releasedAt: "2026-03-02T11:00:00Z",
      finishedAt: "2026-03-02T11:10:00Z",
    });
    expect(out.failureCount).toBe(0);
  });

  it("start alone restarts a Failed run: it resumes with the next unprocessed member, the failed one stays Failed", () => {
    const out = simulated(withActions([{ at: "+1h", action: "start" }], flaky));
    expect(scopeChanges(out, "run").slice(0, 3)).toEqual([
      ["2026-03-02T10:00:00Z", "Running"],
      ["2026-03-02T10:10:00Z", "Failed"],
      ["2026-03-02T11:00:00Z", "Running"],
    ]);
    expect(when(out, "started", "prod-1")).toBe("2026-03-02T11:00:00Z");
    expect(memberOf(out, "canary-1")?.state).toBe("Failed");
    expect(out.failureCount).toBe(1);
  });

  it("retry of a member that is not Failed at that time is rejected: nothing to retry", () => {
    const out = simulated(
      withActions([{ at: "+5m", action: "retry", members: ["prod-1"] }]),
    );
    expect(out.timeline.filter((e) => e.type === "rejected")).toEqual([
      {
        at: "2026-03-02T10:05:00Z",
        type: "rejected",
        message:
          'retry: Cannot retry member "prod-1": it is NotStarted, not Failed',
      },
    ]);
    expect(out.finalState).toBe("Completed");
  });

  it("retry without members when the current stage has no failed member is rejected", () => {
    const out = simulated(withActions([{ at: "+5m", action: "retry" }]));
    expect(out.timeline.find((e) => e.type === "rejected")?.message).toBe(
      'retry: Cannot retry: run "simulation" has no failed members in its current stage',
    );
  });
});

describe("skip", () => {
  it("skipping a group that has not started skips its members and the run completes without them", () => {
    const out = simulated(
      withActions([
        {
          at: "+5m",
          action: "skip",
          targets: [{ type: "Group", name: "prod" }],
          reason: "freeze in prod",
        },
      ]),
    );
    expect(memberOf(out, "prod-1")).toMatchObject({
      state: "Skipped",
      reason: "SkippedByOperator",
      message: "Skipped by simulation: freeze in prod",
    });
    expect(scopeChanges(out, "group", "prod")).toContainEqual([
      "2026-03-02T10:05:00Z",
      "Skipped",
    ]);
    expect(out).toMatchObject({
      finalState: "Completed",
      end: "2026-03-02T10:10:00Z",
    });
  });

  it("takes the az CLI form Type:NAME for a member and a stage", () => {
    const out = simulated(
      withActions([
        {
          at: "+5m",
          action: "skip",
          targets: ["Member:prod-3", "Stage:canary"],
        },
      ]),
    );
    expect(memberOf(out, "prod-3")?.state).toBe("Skipped");
    // canary-1 was in flight: it finishes and counts, then the stage is Skipped.
    expect(memberOf(out, "canary-1")?.state).toBe("Succeeded");
    expect(out.waves.map((w) => [w.name, w.state])).toEqual([
      ["canary", "Skipped"],
      ["prod", "Completed"],
    ]);
    // prod-3 is skipped, so prod-4 takes the first slot that frees.
    expect(when(out, "started", "prod-4")).toBe("2026-03-02T10:20:00Z");
  });

  it("skipping a member that is Running is refused, and the member finishes", () => {
    const out = simulated(
      withActions([
        { at: "+5m", action: "skip", targets: ["Member:canary-1"] },
      ]),
    );
    expect(out.timeline.find((e) => e.type === "rejected")?.message).toBe(
      'skip: Cannot skip member "canary-1": it is Running; wait for it to finish or for its deadline',
    );
    expect(memberOf(out, "canary-1")?.state).toBe("Succeeded");
  });
});

describe("clusters joining and leaving a staged run", () => {
  const withNewcomer = [
    ...fleet,
    { ...fleet[1], name: "prod-5", updateGroup: "prod" },
  ];

  it("a member that leaves before its turn is Skipped with reason Left; the run goes on", () => {
    const out = simulated(
      withActions([{ at: "+5m", action: "leave", cluster: "prod-3" }]),
    );
    expect(memberOf(out, "prod-3")).toMatchObject({
      state: "Skipped",
      reason: "Left",
    });
    expect(out.timeline.find((e) => e.type === "left")).toMatchObject({
      at: "2026-03-02T10:05:00Z",
      cluster: "prod-3",
    });
    expect(when(out, "started", "prod-4")).toBe("2026-03-02T10:20:00Z");
    expect(out.finalState).toBe("Completed");
  });

  it("a cluster that joins after the run was created is not part of it (members are frozen at creation)", () => {
    const out = simulated(
      withActions([{ at: "+5m", action: "join", cluster: "prod-5" }]),
      undefined,
      withNewcomer,
    );
    expect(out.timeline.find((e) => e.type === "joined")).toEqual({
      at: "2026-03-02T10:05:00Z",
      type: "joined",
      cluster: "prod-5",
      message:
        "Cluster joined the fleet; not part of this run (its members were frozen when it was created)",
    });
    expect(memberOf(out, "prod-5")).toBeUndefined();
    expect(out.unassigned).toEqual([]);
    expect(out).toMatchObject({
      finalState: "Completed",
      end: "2026-03-02T10:30:00Z",
    });
  });

  it("a cluster in the file that joins later is absent at creation even when it would have been a member", () => {
    const without = simulated(upgradeScenario, undefined, withNewcomer);
    expect(memberOf(without, "prod-5")?.state).toBe("Succeeded");
    const joined = simulated(
      withActions([{ at: "+1d", action: "join", cluster: "prod-5" }]),
      undefined,
      withNewcomer,
    );
    expect(memberOf(joined, "prod-5")).toBeUndefined();
  });
});
