/**
 * Validation of scenario `actions` (docs/plan-and-simulate.md): what can be checked against the
 * input files is an input problem with its field path; what depends on the run's state at the
 * action's time is the engine's answer in the timeline (simulate-operator-actions.test.ts).
 */
import { describe, expect, it } from "vitest";
import { parseScenario } from "../src/scenario.js";
import { problemsOf, upgradeScenario } from "./simulation-fixtures.js";

const names = new Set(["canary-1", "prod-1"]);
const parsed = (actions: unknown) =>
  parseScenario({ ...upgradeScenario, actions }, names);
const paths = (actions: unknown): [string, string, unknown][] => {
  const result = parsed(actions);
  if (result.ok) throw new Error("expected problems");
  return result.problems.map((p) => [p.path, p.message, p.value]);
};

describe("parsing scenario actions", () => {
  it("turns times into absolute instants and keeps the order written", () => {
    const result = parsed([
      { at: "+1h", action: "stop", reason: "incident" },
      { at: "2026-03-02T12:00:00Z", action: "start" },
      {
        at: "+2h",
        action: "skip",
        targets: [{ type: "Group", name: "prod" }, "Member:prod-1"],
      },
      { at: "+3h", action: "retry" },
      { at: "+3h", action: "retry", members: ["prod-1"] },
      { at: "+4h", action: "leave", cluster: "prod-1" },
    ]);
    expect(result.ok && result.value.actions).toEqual([
      {
        action: "stop",
        atMs: Date.parse("2026-03-02T11:00:00Z"),
        reason: "incident",
      },
      { action: "start", atMs: Date.parse("2026-03-02T12:00:00Z") },
      {
        action: "skip",
        atMs: Date.parse("2026-03-02T12:00:00Z"),
        targets: [
          { type: "Group", name: "prod" },
          { type: "Member", name: "prod-1" },
        ],
      },
      { action: "retry", atMs: Date.parse("2026-03-02T13:00:00Z") },
      {
        action: "retry",
        atMs: Date.parse("2026-03-02T13:00:00Z"),
        members: ["prod-1"],
      },
      {
        action: "leave",
        atMs: Date.parse("2026-03-02T14:00:00Z"),
        cluster: "prod-1",
      },
    ]);
  });

  it("an unknown action names the allowed ones", () => {
    expect(paths([{ at: "+1h", action: "pause" }])).toEqual([
      [
        "actions[0].action",
        'must be one of "stop", "start", "skip", "retry", "join", "leave"',
        "pause",
      ],
    ]);
  });

  it("a time before start, or one that is not a time, is refused", () => {
    expect(
      paths([
        { at: "2026-03-01T10:00:00Z", action: "stop" },
        { at: "in an hour", action: "start" },
      ]),
    ).toEqual([
      ["actions[0].at", "must not be before start", "2026-03-01T10:00:00Z"],
      [
        "actions[1].at",
        'must be a relative time like "+5m", "+1h30m", "+7d" or an ISO timestamp',
        "in an hour",
      ],
    ]);
  });

  it("fields that belong to another action, and missing required ones, are named", () => {
    expect(
      paths([
        { at: "+1h", action: "stop", members: ["prod-1"] },
        { at: "+1h", action: "skip" },
        { at: "+1h", action: "join" },
        { at: "+1h", action: "retry", memebrs: ["prod-1"] },
      ]),
    ).toEqual([
      [
        "actions[0].members",
        "is not a field of action stop (it takes at, action, reason)",
        ["prod-1"],
      ],
      [
        "actions[1].targets",
        "is required for skip, e.g. [{type: Group, name: prod-eu}]",
        undefined,
      ],
      [
        "actions[2].cluster",
        "is required for join: the name of a cluster in the clusters file",
        undefined,
      ],
      [
        "actions[3].memebrs",
        'unknown field; did you mean "members"?',
        undefined,
      ],
    ]);
  });

  it("skip targets must be Stage, Group or Member with a name; an after-stage wait cannot be skipped", () => {
    expect(
      paths([
        {
          at: "+1h",
          action: "skip",
          targets: [
            "Cluster:prod-1",
            { type: "AfterStageWait", name: "canary" },
            { type: "Stage" },
            "prod-1",
          ],
        },
      ]),
    ).toEqual([
      [
        "actions[0].targets[0]",
        "the type must be Stage, Group or Member",
        "Cluster:prod-1",
      ],
      [
        "actions[0].targets[1].type",
        "skipping an after-stage wait is not supported: skip the stage, or set afterStageWaitInSeconds to 0",
        "AfterStageWait",
      ],
      [
        "actions[0].targets[2].name",
        "needs the name of the stage, group or member",
        undefined,
      ],
      [
        "actions[0].targets[3]",
        'must be {type: Stage|Group|Member, name: NAME} or "Type:NAME", e.g. "Group:prod-eu"',
        "prod-1",
      ],
    ]);
  });

  it("members and clusters must be in the clusters file", () => {
    expect(
      paths([
        { at: "+1h", action: "retry", members: ["ghost"] },
        { at: "+1h", action: "skip", targets: ["Member:ghost"] },
        { at: "+1h", action: "leave", cluster: "ghost" },
      ]).map(([path, message]) => [path, message]),
    ).toEqual([
      [
        "actions[0].members[0]",
        "no cluster with this name in the clusters file",
      ],
      [
        "actions[1].targets[0]",
        "no cluster with this name in the clusters file",
      ],
      ["actions[2].cluster", "no cluster with this name in the clusters file"],
    ]);
  });

  it("a cluster cannot join twice without leaving, nor leave twice without joining", () => {
    expect(
      paths([
        { at: "+1h", action: "join", cluster: "prod-1" },
        { at: "+2h", action: "join", cluster: "prod-1" },
        { at: "+1h", action: "leave", cluster: "canary-1" },
        { at: "+3h", action: "leave", cluster: "canary-1" },
      ]),
    ).toEqual([
      [
        "actions[1].action",
        "the cluster already joined at actions[0] and has not left since",
        "join",
      ],
      [
        "actions[3].action",
        "the cluster already left at actions[2] and has not joined since",
        "leave",
      ],
    ]);
  });

  it("failAttempts and fail together contradict each other", () => {
    const result = parseScenario(
      {
        ...upgradeScenario,
        clusters: { "prod-1": { fail: true, failAttempts: 2 } },
      },
      names,
    );
    expect(!result.ok && result.problems).toEqual([
      {
        path: "clusters.prod-1.failAttempts",
        message:
          "give fail (every attempt fails) or failAttempts (the first N fail), not both",
        value: 2,
      },
    ]);
  });
});

describe("actions checked against the strategy", () => {
  it("a skipped stage or group must exist in the update strategy", () => {
    expect(
      problemsOf({
        ...upgradeScenario,
        actions: [
          {
            at: "+1h",
            action: "skip",
            targets: ["Stage:prodd", "Group:canary", "Group:eu"],
          },
        ],
      }),
    ).toEqual([
      [
        "scenario",
        "actions[0].targets[0]",
        "the strategy has no stage with this name (stages: canary, prod)",
      ],
      [
        "scenario",
        "actions[0].targets[2]",
        "the strategy has no group with this name (groups: canary, prod)",
      ],
    ]);
  });

  it("a Fleet rollout takes joins and leaves only", () => {
    expect(
      problemsOf(
        {
          start: "2026-03-02T10:00:00Z",
          kind: "update",
          actions: [
            { at: "+1h", action: "leave", cluster: "prod-1" },
            { at: "+1h", action: "stop" },
          ],
        },
        { rolloutStrategy: { maxUnavailable: 1 } },
      ),
    ).toEqual([
      [
        "scenario",
        "actions[1].action",
        "a Fleet rollout has no run to stop, start, skip or retry: only join and leave apply (use an update strategy with stages)",
      ],
    ]);
  });
});
