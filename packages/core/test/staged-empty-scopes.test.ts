/**
 * Empty scopes (docs/semantics.md#empty-scopes): a stage or group with no members does not block a
 * run. When the run reaches it, it is Skipped with reason NoMembers together with its gates (and an
 * empty stage's after-stage wait does not apply), and the run goes on; `plan` warns about it.
 */
import { describe, expect, it } from "vitest";
import type { Cluster } from "../src/cluster.js";
import { planStaged } from "../src/plan.js";
import { simulate } from "../src/simulate.js";
import type { UpdateStrategy } from "../src/update-strategy.js";
import {
  Driver,
  HOUR,
  T0,
  cluster,
  gate,
  group,
  groupOf,
  member,
  resolve,
  stage,
  started,
  strategy,
} from "./staged-fixtures.js";

/** State and reason of a stage or group, as one string for tables. */
function scope(s: { state: string; reason?: string }): string {
  return s.reason === undefined ? s.state : `${s.state}(${s.reason})`;
}

interface Case {
  readonly name: string;
  readonly strategy: UpdateStrategy;
  readonly clusters: readonly Cluster[];
  /** Members started by StartRun. */
  readonly first: readonly string[];
  /** Every stage and group once each started member has succeeded. */
  readonly stages: Readonly<Record<string, string>>;
  readonly groups: Readonly<Record<string, string>>;
  readonly run: string;
}

const CASES: readonly Case[] = [
  {
    name: "an empty last stage is skipped and the run completes (the issue's reproduction)",
    strategy: strategy({
      stages: [
        { name: "s1", groups: [{ name: "g1" }] },
        { name: "s2", groups: [{ name: "g2" }] },
      ],
    }),
    clusters: [cluster("a1", { updateGroup: "g1" })],
    first: ["a1"],
    stages: { s1: "Completed", s2: "Skipped(NoMembers)" },
    groups: { g1: "Completed", g2: "Skipped(NoMembers)" },
    run: "Completed",
  },
  {
    name: "an empty first stage is skipped at once and the next stage starts in the same step",
    strategy: strategy({
      stages: [
        { name: "s1", groups: [{ name: "g1" }, { name: "g2" }] },
        { name: "s2", groups: [{ name: "g3" }] },
      ],
    }),
    clusters: [cluster("c1", { updateGroup: "g3" })],
    first: ["c1"],
    stages: { s1: "Skipped(NoMembers)", s2: "Completed" },
    groups: {
      g1: "Skipped(NoMembers)",
      g2: "Skipped(NoMembers)",
      g3: "Completed",
    },
    run: "Completed",
  },
  {
    name: "a stage whose selector matches nothing (implicit group) is skipped",
    strategy: strategy({
      stages: [
        { name: "canary", memberSelector: { byLabel: "ring=canary" } },
        { name: "prod", memberSelector: { byLabel: "ring=prod" } },
      ],
    }),
    clusters: [cluster("p1", { labels: { ring: "prod" } })],
    first: ["p1"],
    stages: { canary: "Skipped(NoMembers)", prod: "Completed" },
    groups: { canary: "Skipped(NoMembers)", prod: "Completed" },
    run: "Completed",
  },
  {
    name: "an empty group beside a non-empty one is skipped; its stage completes",
    strategy: strategy({
      stages: [{ name: "s1", groups: [{ name: "g1" }, { name: "g2" }] }],
    }),
    clusters: [cluster("a1", { updateGroup: "g1" })],
    first: ["a1"],
    stages: { s1: "Completed" },
    groups: { g1: "Completed", g2: "Skipped(NoMembers)" },
    run: "Completed",
  },
  {
    name: "a run whose stages are all empty is Skipped",
    strategy: strategy({
      stages: [
        { name: "s1", groups: [{ name: "g1" }] },
        { name: "s2", groups: [{ name: "g2" }] },
      ],
    }),
    clusters: [cluster("lab", { updateGroup: "elsewhere" })],
    first: [],
    stages: { s1: "Skipped(NoMembers)", s2: "Skipped(NoMembers)" },
    groups: { g1: "Skipped(NoMembers)", g2: "Skipped(NoMembers)" },
    run: "Skipped",
  },
];

describe("empty scopes: (strategy, clusters) → states once every member has succeeded", () => {
  it.each(CASES)("$name", (c) => {
    const run = resolve(c.strategy, c.clusters);
    const { d, first } = started(run);
    expect(first).toEqual(c.first);
    d.succeed(...first);
    expect(
      Object.fromEntries(run.stages.map((s) => [s.name, scope(s)])),
    ).toEqual(c.stages);
    expect(
      Object.fromEntries(
        run.stages.flatMap((s) => s.groups.map((g) => [g.name, scope(g)])),
      ),
    ).toEqual(c.groups);
    expect(run.state).toBe(c.run);
  });
});

describe("an empty stage", () => {
  it("skips its gates with it, does not wait after it, and records why", () => {
    const run = resolve(
      strategy({
        stages: [
          { name: "s1", groups: [{ name: "g1" }] },
          {
            name: "empty",
            afterStageWaitInSeconds: 3600,
            beforeGates: [{ type: "Approval" }],
            afterGates: [{ type: "Approval" }],
            groups: [
              {
                name: "nobody",
                beforeGates: [{ type: "Approval" }],
                afterGates: [{ type: "Approval" }],
              },
            ],
          },
          { name: "s3", groups: [{ name: "g3" }] },
        ],
      }),
      [
        cluster("a1", { updateGroup: "g1" }),
        cluster("c1", { updateGroup: "g3" }),
      ],
    );
    const { d } = started(run, T0);
    // s1's last member finishes: the empty stage is passed at once and s3 starts at that instant.
    expect(d.ok({ type: "MemberSucceeded", member: "a1" }, T0 + HOUR)).toEqual([
      "c1",
    ]);
    expect(member(run, "c1").startedAtMs).toBe(T0 + HOUR);
    expect(stage(run, "empty")).toMatchObject({
      state: "Skipped",
      reason: "NoMembers",
      message: "Skipped: the stage has no members",
    });
    expect(stage(run, "empty").waitUntilMs).toBeUndefined();
    expect(group(run, "nobody")).toMatchObject({
      state: "Skipped",
      reason: "NoMembers",
    });
    for (const id of [
      "stage:empty:before",
      "stage:empty:after",
      "group:nobody:before",
      "group:nobody:after",
    ])
      expect(gate(run, id).state, id).toBe("Skipped");
    // No gate of the empty stage was ever Pending: nobody is asked to approve a stage that does nothing.
    expect(
      d.actions.filter(
        (a) =>
          a.type === "Transitioned" &&
          a.scope === "gate" &&
          a.to === "Pending" &&
          a.stage === "empty",
      ),
    ).toEqual([]);
  });

  it("no longer refuses StartRun", () => {
    const run = resolve(
      strategy({
        stages: [
          { name: "s1", groups: [{ name: "g1" }] },
          { name: "s2", groups: [{ name: "g2" }] },
        ],
      }),
      groupOf("g1", 1),
    );
    const d = new Driver(run);
    const result = d.send({ type: "StartRun", actor: "alice" });
    expect(result.rejected).toBeUndefined();
    expect(run.state).toBe("Running");
  });
});

describe("plan warns about empty scopes", () => {
  it("EmptyStage for a stage with no members, EmptyGroup for an empty group of a stage that has some", () => {
    const planned = planStaged(
      strategy({
        stages: [
          { name: "s1", groups: [{ name: "g1" }, { name: "spare" }] },
          { name: "s2", groups: [{ name: "g2" }, { name: "g3" }] },
        ],
      }),
      [cluster("a1", { updateGroup: "g1" })],
    );
    if (!planned.ok) throw new Error("plan refused");
    expect(
      planned.value.warnings.filter((w) => w.code.startsWith("Empty")),
    ).toEqual([
      {
        code: "EmptyGroup",
        message:
          'group "spare" in stage "s1" has no members: it will be skipped (NoMembers) with its gates',
      },
      {
        code: "EmptyStage",
        message:
          'stage "s2" has no members (groups g2, g3): the run will skip it (NoMembers) with its gates and after-stage wait, and go on',
      },
    ]);
  });
});

describe("simulate with an empty stage (the issue's reproduction)", () => {
  it("runs s1, skips s2 with reason NoMembers, completes, and warns EmptyStage", () => {
    const result = simulate({
      clusters: [{ name: "a1", updateGroup: "g1" }],
      strategy: {
        stages: [
          { name: "s1", groups: [{ name: "g1" }] },
          { name: "s2", groups: [{ name: "g2" }] },
        ],
      },
      scenario: {
        start: "2026-03-02T10:00:00Z",
        kind: "update",
        defaults: { readyAfterSeconds: 60 },
      },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const out = result.value;
    expect(out.finalState).toBe("Completed");
    expect(out.end).toBe("2026-03-02T10:01:00Z");
    expect(out.waves.map((w) => [w.name, w.state, w.reason])).toEqual([
      ["s1", "Completed", undefined],
      ["s2", "Skipped", "NoMembers"],
    ]);
    expect(out.waves[1]?.groups).toEqual([
      {
        name: "g2",
        state: "Skipped",
        reason: "NoMembers",
        failureCount: 0,
        members: [],
      },
    ]);
    expect(out.warnings.map((w) => w.code)).toEqual(["EmptyStage"]);
    expect(out.timeline.filter((e) => e.type === "rejected")).toEqual([]);
  });
});
