import { describe, expect, it } from "vitest";
import {
  parseUpdateStrategy,
  resolveRun,
  step,
  type Run,
} from "@flotilla/core";
import {
  loadProtocol,
  runFromWire,
  runSummaryToWire,
  runToWire,
  transitionFromWire,
  transitionToWire,
  type wire,
} from "@flotilla/protocol";
import {
  clusters,
  expectedView,
  MINUTE,
  runInProgress,
  T0,
  valueOf,
} from "./fixtures.js";

/** Encodes and decodes a run status with real protobuf, as a GetUpdateRun answer. */
function overTheWire(status: wire.RunStatus): wire.RunStatus__Output {
  const method = loadProtocol().adminService.GetUpdateRun;
  const decoded = method.responseDeserialize(
    method.responseSerialize({ run: status }),
  );
  if (decoded.run === null) throw new Error("run lost on the wire");
  return decoded.run;
}

describe("run status codec", () => {
  it("carries a core run through protobuf and back to core's names", () => {
    const run = runInProgress();
    const back = valueOf(runFromWire(overTheWire(runToWire(run, 7))));
    expect(back).toEqual(expectedView(run, 7));
  });

  it("carries the auto-upgrade profile a run was made from, in status and summary", () => {
    const origin = {
      profile: "images",
      channel: "NodeImage",
      target: "AKSUbuntu-2204gen2 202603.08.0",
      createdBy: "hub",
    } as const;
    const run: Run = { ...runInProgress(), origin };
    const back = valueOf(runFromWire(overTheWire(runToWire(run, 7))));
    expect(back.origin).toEqual(origin);
    expect(runSummaryToWire(run).origin).toEqual(origin);
    expect(
      valueOf(runFromWire(overTheWire(runToWire(runInProgress())))).origin,
    ).toBeUndefined();
  });

  it("keeps the states, limits, gates and timestamps of every level", () => {
    const run = runInProgress();
    const status = overTheWire(runToWire(run));
    // Both canaries are done: the run waits on the canary stage's approval.
    expect(status.state).toBe("RUN_STATE_PENDING");
    const [canary, prod] = status.stages;
    expect(canary?.afterGates[0]).toMatchObject({
      id: "stage:canary:after",
      type: "GATE_TYPE_APPROVAL",
      state: "GATE_STATE_PENDING",
      displayName: "Canary looks good",
    });
    expect(prod?.beforeGates[0]?.schedule).toEqual({
      startDay: "DAY_OF_WEEK_TUESDAY",
      startMinutes: 570,
      utcOffsetMinutes: 60,
    });
    expect(prod?.maxAllowedFailures).toBe(1);
    const members = canary?.groups[0]?.members ?? [];
    expect(members.map((m) => [m.name, m.state, m.failureCount])).toEqual([
      ["canary-1", "MEMBER_STATE_SUCCEEDED", 0],
      ["canary-2", "MEMBER_STATE_FAILED", 1],
    ]);
    expect(members[0]?.target?.nodeImages).toEqual([
      { pool: "system", from: "2026.01.1", to: "2026.02.3" },
      { pool: "win", from: "2026.01.1", to: "2026.02.1" },
    ]);
    expect(members[0]?.startedAtMs).toBe(T0 + MINUTE);
    expect(status.consistentNodeImages).toEqual({
      "ubuntu-22.04": "2026.02.3",
      "windows-2022": "2026.02.1",
    });
  });

  it("tells 'no budget of its own' (absent) from a budget of 0", () => {
    const run = runInProgress();
    const status = overTheWire(runToWire(run));
    const prodEu = status.stages[1]?.groups[0];
    expect(prodEu).not.toHaveProperty("maxAllowedFailures");
    expect(status.stages[2]?.maxAllowedFailures).toBe(0);
    const view = valueOf(runFromWire(status));
    expect(view.stages[1]?.groups[0]?.maxAllowedFailures).toBeNull();
    expect(view.stages[2]).toMatchObject({
      failFast: true,
      maxAllowedFailures: 0,
    });
    expect(view.unassigned).toEqual(["edge-1"]);
  });

  it("produces plain JSON data", () => {
    const status = runToWire(runInProgress(), 3);
    expect(JSON.parse(JSON.stringify(status))).toEqual(status);
  });

  it("round-trips a stopped run", () => {
    let run: Run = runInProgress();
    run = step(run, { type: "StopRun", actor: "bob" }, T0 + 7 * MINUTE).run;
    expect(run.state).toBe("Stopped");
    const back = valueOf(runFromWire(overTheWire(runToWire(run, 9))));
    expect(back).toEqual(expectedView(run, 9));
  });

  it("carries why a stage and its group were skipped without an operator (NoMembers)", () => {
    let run = valueOf(
      resolveRun({
        name: "with-empty-stage",
        strategy: valueOf(
          parseUpdateStrategy({
            stages: [
              { name: "nobody", groups: [{ name: "spare" }] },
              { name: "all", memberSelector: { byLabel: "" } },
            ],
          }),
        ),
        clusters: clusters(),
        payload: { kind: "bundle", bundle: "web", revision: "rev-2" },
        createdAtMs: T0,
      }),
    );
    run = step(run, { type: "StartRun" }, T0 + MINUTE).run;
    const status = overTheWire(runToWire(run, 4));
    expect(status.stages[0]).toMatchObject({
      state: "SCOPE_STATE_SKIPPED",
      reason: "NoMembers",
    });
    expect(status.stages[0]?.groups[0]?.reason).toBe("NoMembers");
    expect(status.stages[1]).not.toHaveProperty("reason");
    expect(valueOf(runFromWire(status))).toEqual(expectedView(run, 4));
  });

  it("carries a stage's sortingLabelKey, and its members in the order it set", () => {
    const run = valueOf(
      resolveRun({
        name: "by-order",
        strategy: valueOf(
          parseUpdateStrategy({
            stages: [
              {
                name: "all",
                memberSelector: { byLabel: "" },
                sortingLabelKey: "order",
              },
            ],
          }),
        ),
        clusters: [
          { name: "a", labels: { order: "2" }, groups: [], nodePools: [] },
          { name: "b", labels: { order: "1" }, groups: [], nodePools: [] },
        ],
        payload: { kind: "bundle", bundle: "web", revision: "rev-2" },
        createdAtMs: T0,
      }),
    );
    const status = overTheWire(runToWire(run, 2));
    expect(status.stages[0]?.sortingLabelKey).toBe("order");
    expect(status.stages[0]?.groups[0]?.members.map((m) => m.name)).toEqual([
      "b",
      "a",
    ]);
    expect(valueOf(runFromWire(status))).toEqual(expectedView(run, 2));
  });

  it("round-trips a running bundle run, whose targets carry a revision", () => {
    let run = valueOf(
      resolveRun({
        name: "web-rev-2",
        clusters: clusters(),
        payload: { kind: "bundle", bundle: "web", revision: "rev-2" },
        createdAtMs: T0,
      }),
    );
    run = step(run, { type: "StartRun" }, T0 + MINUTE).run;
    const status = overTheWire(runToWire(run));
    expect(status.payload?.bundle).toEqual({
      bundle: "web",
      revision: "rev-2",
    });
    const back = valueOf(runFromWire(status));
    expect(back).toEqual(expectedView(run, 0));
    const running = back.stages[0]?.groups[0]?.members.filter(
      (m) => m.state === "Running",
    );
    expect(running?.map((m) => m.target)).toEqual([{ revision: "rev-2" }]);
  });

  it("reports unknown enum values from a newer hub with their paths", () => {
    const status = overTheWire(runToWire(runInProgress()));
    const broken = {
      ...status,
      state: 42,
      stages: status.stages.map((s, i) =>
        i === 1 ? { ...s, state: "SCOPE_STATE_UNSPECIFIED" } : s,
      ),
    } as unknown as wire.RunStatus__Output;
    const result = runFromWire(broken);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => p.path)).toEqual([
      "run.state",
      "run.stages[1].state",
    ]);
  });

  it("summarises a run with member counts and the current stage", () => {
    const summary = runSummaryToWire(runInProgress(), {
      revision: 4,
      strategyName: "rings",
    });
    expect(summary).toMatchObject({
      name: "upgrade-1-31",
      state: "RUN_STATE_PENDING",
      currentStage: "canary",
      strategyName: "rings",
      revision: 4,
      members: {
        total: 7,
        succeeded: 1,
        failed: 1,
        notStarted: 5,
        running: 0,
      },
    });
  });

  it("carries transitions and a summary through a watch change", () => {
    const run = runInProgress();
    const { actions } = step(
      run,
      { type: "StopRun", actor: "bob" },
      T0 + 7 * MINUTE,
    );
    const transitions = actions.filter((a) => a.type === "Transitioned");
    expect(transitions.length).toBeGreaterThan(0);
    const method = loadProtocol().adminService.WatchUpdateRun;
    const decoded = method.responseDeserialize(
      method.responseSerialize({
        change: {
          summary: runSummaryToWire(run),
          transitions: transitions.map(transitionToWire),
        },
      }),
    );
    expect(decoded.event).toBe("change");
    const back = (decoded.change?.transitions ?? []).map((t) =>
      valueOf(transitionFromWire(t)),
    );
    expect(back).toEqual(transitions);
    expect(decoded.change?.summary?.state).toBe("RUN_STATE_STOPPED");
  });
});
