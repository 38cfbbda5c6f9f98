/**
 * Resolving a run (docs/semantics.md#membership, docs/semantics.md#upgrades): membership by update
 * group or label selector, implicit groups, the frozen member list, unassigned clusters, and
 * upgrade decisions taken at creation.
 */
import { describe, expect, it } from "vitest";
import { planStaged } from "../src/plan.js";
import { resolveRun } from "../src/staged/resolve.js";
import type { AvailableVersions } from "../src/versions/version.js";
import {
  BUNDLE,
  T0,
  cluster,
  fullUpgrade,
  group,
  member,
  oneStage,
  resolve,
  stage,
  started,
  strategy,
} from "./staged-fixtures.js";
import { compact } from "../src/compact.js";

const names = (members: readonly { name: string }[]): string[] =>
  members.map((m) => m.name);

describe("membership (docs/semantics.md#membership)", () => {
  it("a group without memberSelector takes the clusters whose updateGroup equals its name", () => {
    const run = resolve(oneStage([{ name: "web" }, { name: "api" }]), [
      cluster("w-2", { updateGroup: "web" }),
      cluster("a-1", { updateGroup: "api" }),
      cluster("w-1", { updateGroup: "web" }),
      cluster("x-1", { updateGroup: "other" }),
    ]);
    expect(names(group(run, "web").members)).toEqual(["w-1", "w-2"]);
    expect(names(group(run, "api").members)).toEqual(["a-1"]);
  });

  it("a group with memberSelector takes the clusters it selects, whatever their updateGroup", () => {
    const run = resolve(
      oneStage([
        { name: "frontend", memberSelector: { byLabel: "tier=frontend" } },
      ]),
      [
        cluster("c-1", {
          labels: { tier: "frontend" },
          updateGroup: "backend",
        }),
        cluster("c-2", {
          labels: { tier: "backend" },
          updateGroup: "frontend",
        }),
      ],
    );
    expect(names(group(run, "frontend").members)).toEqual(["c-1"]);
    expect(run.unassigned).toEqual(["c-2"]);
  });

  it("a stage memberSelector without groups forms one implicit group named after the stage, governed by the stage concurrency", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "canary",
            memberSelector: { byLabel: "ring=0" },
            maxConcurrency: "2",
          },
        ],
      }),
      [
        cluster("c-1", { labels: { ring: "0" } }),
        cluster("c-2", { labels: { ring: "0" } }),
        cluster("c-3", { labels: { ring: "0" } }),
        cluster("c-4", { labels: { ring: "1" } }),
      ],
    );
    expect(
      run.stages[0]?.groups.map((g) => [
        g.name,
        names(g.members),
        g.maxConcurrency,
      ]),
    ).toEqual([["canary", ["c-1", "c-2", "c-3"], 2]]);
    expect(run.unassigned).toEqual(["c-4"]);
  });

  it("a stage memberSelector with groups pre-filters the clusters the groups may take", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "prod",
            memberSelector: { byLabel: "env=prod" },
            groups: [
              { name: "eu", memberSelector: { byLabel: "geo=eu" } },
              { name: "us" },
            ],
          },
        ],
      }),
      [
        cluster("p-eu", { labels: { env: "prod", geo: "eu" } }),
        cluster("d-eu", { labels: { env: "dev", geo: "eu" } }),
        cluster("p-us", { labels: { env: "prod" }, updateGroup: "us" }),
        cluster("d-us", { labels: { env: "dev" }, updateGroup: "us" }),
      ],
    );
    expect(names(group(run, "eu").members)).toEqual(["p-eu"]);
    expect(names(group(run, "us").members)).toEqual(["p-us"]);
    expect(run.unassigned).toEqual(["d-eu", "d-us"]);
  });

  it("Decision: a cluster selected by two groups is a validation error naming both groups", () => {
    const s = strategy({
      stages: [
        {
          name: "s1",
          groups: [{ name: "eu", memberSelector: { byLabel: "geo=eu" } }],
        },
        {
          name: "s2",
          groups: [{ name: "prod", memberSelector: { byLabel: "env=prod" } }],
        },
      ],
    });
    const result = resolveRun({
      name: "r",
      strategy: s,
      clusters: [
        cluster("c-1", { labels: { geo: "eu", env: "prod" } }),
        cluster("c-2", { labels: { env: "prod" } }),
      ],
      payload: BUNDLE,
      createdAtMs: T0,
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      {
        path: "stages[1].groups[0]",
        message:
          'cluster "c-1" is selected by group "eu" (stages[0].groups[0]) and by group "prod"; a cluster may be in one group only',
      },
    ]);
  });

  it("Decision: clusters in no group are listed as unassigned, in plan output with a warning, and never updated", () => {
    const clusters = [
      cluster("a-1", { updateGroup: "a" }),
      cluster("z-9"),
      cluster("m-5", { updateGroup: "nope" }),
    ];
    const s = oneStage([{ name: "a" }]);
    const run = resolve(s, clusters);
    expect(run.unassigned).toEqual(["m-5", "z-9"]);
    expect(
      run.stages.flatMap((st) => st.groups.flatMap((g) => names(g.members))),
    ).toEqual(["a-1"]);

    const planned = planStaged(s, clusters);
    expect(planned.ok && planned.value.unassigned).toEqual(["m-5", "z-9"]);
    expect(planned.ok && planned.value.warnings.map((w) => w.code)).toContain(
      "UnassignedClusters",
    );

    const { d, first } = started(run);
    expect(first).toEqual(["a-1"]);
    d.succeed("a-1");
    expect(run.state).toBe("Completed");
    expect(
      d.actions.some((a) => a.type === "StartMember" && a.member !== "a-1"),
    ).toBe(false);
  });

  it("Decision: the member list is frozen at creation; a cluster that joins later is not part of the run", () => {
    const s = oneStage([
      { name: "web", maxConcurrency: "50%", maxAllowedFailures: "50%" },
    ]);
    const fleet = [
      cluster("w-1", { updateGroup: "web" }),
      cluster("w-2", { updateGroup: "web" }),
    ];
    const run = resolve(s, fleet);
    fleet.push(cluster("w-3", { updateGroup: "web" }));
    const web = group(run, "web");
    expect(names(web.members)).toEqual(["w-1", "w-2"]);
    // Limits are resolved from the frozen counts (2 members), not from the fleet as it is now.
    expect([web.maxConcurrency, web.maxAllowedFailures]).toEqual([1, 1]);

    const { d } = started(run);
    const late = d.send({ type: "MemberSucceeded", member: "w-3" });
    expect(late.rejected).toEqual({
      code: "not_found",
      message: 'Cluster "w-3" is not a member of run "run-1"',
    });
    expect(d.drain()).toEqual(["w-2"]);
    expect(run.state).toBe("Completed");
  });

  it("Decision: a member removed from the fleet mid-run (MemberLeft) is Skipped with reason Left and does not fail the run", () => {
    const run = resolve(oneStage([{ name: "web", maxConcurrency: 2 }]), [
      cluster("w-1", { updateGroup: "web" }),
      cluster("w-2", { updateGroup: "web" }),
      cluster("w-3", { updateGroup: "web" }),
      cluster("w-4", { updateGroup: "web" }),
    ]);
    const { d, first } = started(run);
    expect(first).toEqual(["w-1", "w-2"]);
    // One in flight leaves (its slot frees), one not yet started leaves.
    expect(d.ok({ type: "MemberLeft", member: "w-4" })).toEqual([]);
    expect(d.ok({ type: "MemberLeft", member: "w-1" })).toEqual(["w-3"]);
    expect(member(run, "w-1")).toMatchObject({
      state: "Skipped",
      reason: "Left",
      message: "Cluster left the fleet",
    });
    expect(member(run, "w-4")).toMatchObject({
      state: "Skipped",
      reason: "Left",
    });
    d.succeed("w-2", "w-3");
    expect(run.state).toBe("Completed");
    expect(run.failureCount).toBe(0);
    // A late report from the member that left is ignored.
    expect(
      d.send({ type: "MemberSucceeded", member: "w-1" }).rejected?.code,
    ).toBe("failed_precondition");
  });

  it("a run without a strategy puts every cluster in one stage and updates them one by one", () => {
    const run = resolve(undefined, [
      cluster("c-3"),
      cluster("c-1"),
      cluster("c-2"),
    ]);
    expect(
      run.stages.map((s) => [
        s.name,
        s.maxConcurrency,
        s.groups.map((g) => [g.maxConcurrency, names(g.members)]),
      ]),
    ).toEqual([["default", 1, [[1, ["c-1", "c-2", "c-3"]]]]]);
    expect(run.unassigned).toEqual([]);
    const { d, first } = started(run);
    expect(first).toEqual(["c-1"]);
    expect(d.drain()).toEqual(["c-2", "c-3"]);
    expect(run.state).toBe("Completed");
  });

  it("members go in byte order of their names (c-10 before c-2)", () => {
    const run = resolve(
      oneStage([{ name: "g" }]),
      ["c-2", "c-10", "c-1", "B-1"].map((n) =>
        cluster(n, { updateGroup: "g" }),
      ),
    );
    expect(names(group(run, "g").members)).toEqual([
      "B-1",
      "c-1",
      "c-10",
      "c-2",
    ]);
  });

  it("a stage with no members is resolved like any other (it is skipped when the run reaches it) and plan warns about it", () => {
    const s = strategy({
      stages: [
        { name: "s1", groups: [{ name: "a" }] },
        { name: "empty", groups: [{ name: "b" }] },
      ],
    });
    const fleet = [cluster("a-1", { updateGroup: "a" })];
    const run = resolve(s, fleet);
    expect(stage(run, "empty")).toMatchObject({
      state: "NotStarted",
      memberCount: 0,
    });
    const planned = planStaged(s, fleet);
    expect(planned.ok && planned.value.warnings.map((w) => w.code)).toEqual([
      "EmptyStage",
    ]);
  });
});

const UBUNTU = "AKSUbuntu-2204gen2containerd";
const available: AvailableVersions = {
  kubernetes: [{ version: "1.30.5" }, { version: "1.31.2" }],
  nodeImages: [
    { family: UBUNTU, version: "202602.15.0" },
    {
      family: UBUNTU,
      version: "202603.01.0",
      regions: ["westeurope", "eastus"],
    },
    { family: UBUNTU, version: "202603.08.0", regions: ["westeurope"] },
  ],
};
const pool = (imageVersion: string, kubernetesVersion?: string) => ({
  name: "system",
  imageFamily: UBUNTU,
  imageVersion,
  ...compact({ kubernetesVersion }),
});

describe("upgrades through runs (docs/semantics.md#upgrades)", () => {
  it("members already at the target or more than one minor behind are Skipped at creation with reasons, and never started", () => {
    const run = resolve(
      oneStage([{ name: "g", maxConcurrency: 5 }]),
      [
        cluster("at-target", {
          updateGroup: "g",
          kubernetesVersion: "1.31.2",
          region: "westeurope",
          nodePools: [pool("202603.08.0", "1.31.2")],
        }),
        cluster("skewed", {
          updateGroup: "g",
          kubernetesVersion: "1.29.9",
          region: "westeurope",
          nodePools: [pool("202602.15.0")],
        }),
        cluster("upgradable", {
          updateGroup: "g",
          kubernetesVersion: "1.30.5",
          region: "westeurope",
          nodePools: [pool("202602.15.0")],
        }),
      ],
      { payload: fullUpgrade("1.31.2"), available },
    );
    expect(member(run, "at-target")).toMatchObject({
      state: "Skipped",
      reason: "AlreadyAtTarget",
      finishedAtMs: T0,
    });
    expect(member(run, "at-target").message).toContain("already on 1.31.2");
    expect(member(run, "skewed")).toMatchObject({
      state: "Skipped",
      reason: "MinorVersionSkew",
    });
    expect(member(run, "skewed").message).toContain("one minor at a time");
    expect(group(run, "g").remaining).toBe(1);

    const { d, first } = started(run);
    expect(first).toEqual(["upgradable"]);
    const start = d.actions.find((a) => a.type === "StartMember");
    expect(start).toMatchObject({
      target: {
        kubernetesVersion: "1.31.2",
        nodeImages: [
          { pool: "system", from: "202602.15.0", to: "202603.08.0" },
        ],
      },
    });
    d.succeed("upgradable");
    expect(run.state).toBe("Completed");
  });

  it("a member whose target is not yet offered in its region is Pending (TargetNotAvailable) and starts once AvailableVersionsChanged offers it", () => {
    const regional: AvailableVersions = {
      kubernetes: [
        { version: "1.30.5" },
        { version: "1.31.2", regions: ["westeurope"] },
      ],
      nodeImages: available.nodeImages,
    };
    const run = resolve(
      oneStage([{ name: "g", maxConcurrency: 2 }]),
      [
        cluster("eu", {
          updateGroup: "g",
          kubernetesVersion: "1.30.5",
          region: "westeurope",
          nodePools: [pool("202602.15.0")],
        }),
        cluster("us", {
          updateGroup: "g",
          kubernetesVersion: "1.30.5",
          region: "eastus",
          nodePools: [pool("202602.15.0")],
        }),
      ],
      { payload: fullUpgrade("1.31.2"), available: regional },
    );
    const { d, first } = started(run);
    expect(first).toEqual(["eu"]);
    expect(member(run, "us")).toMatchObject({
      state: "Pending",
      reason: "TargetNotAvailable",
    });
    expect(member(run, "us").message).toContain("not yet available");
    d.succeed("eu");
    expect(run.state).toBe("Pending");
    expect(d.ok({ type: "AvailableVersionsChanged", available })).toEqual([
      "us",
    ]);
    d.succeed("us");
    expect(run.state).toBe("Completed");
  });

  it("a group whose members are all Skipped at creation ends Skipped, and a run of only such members is Skipped", () => {
    const run = resolve(
      oneStage([{ name: "g" }]),
      [cluster("c-1", { updateGroup: "g", kubernetesVersion: "1.31.2" })],
      {
        payload: {
          kind: "upgrade",
          upgrade: {
            type: "ControlPlaneOnly",
            kubernetesVersion: "1.31.2",
            nodeImageSelection: "Latest",
          },
        },
      },
    );
    started(run);
    expect(group(run, "g").state).toBe("Skipped");
    expect(run.state).toBe("Skipped");
  });

  it("Consistent node images are chosen at creation: the newest version offered in every member's region, the same for all members", () => {
    const clusters = [
      cluster("eu", {
        updateGroup: "g",
        kubernetesVersion: "1.30.5",
        region: "westeurope",
        nodePools: [pool("202602.15.0")],
      }),
      cluster("us", {
        updateGroup: "g",
        kubernetesVersion: "1.30.5",
        region: "eastus",
        nodePools: [pool("202602.15.0")],
      }),
    ];
    const run = resolve(
      oneStage([{ name: "g", maxConcurrency: 2 }]),
      clusters,
      { payload: fullUpgrade("1.31.2", "Consistent"), available },
    );
    expect(run.consistentNodeImages).toEqual({ [UBUNTU]: "202603.01.0" });
    const { first, d } = started(run);
    expect(first).toEqual(["eu", "us"]);
    const targets = d.actions.flatMap((a) =>
      a.type === "StartMember" ? [a.target.nodeImages?.map((i) => i.to)] : [],
    );
    expect(targets).toEqual([["202603.01.0"], ["202603.01.0"]]);
  });

  it("Consistent node images are chosen from the run's members only, not from clusters the strategy leaves unassigned", () => {
    const clusters = [
      cluster("eu", {
        updateGroup: "g",
        kubernetesVersion: "1.30.5",
        region: "westeurope",
        nodePools: [pool("202602.15.0")],
      }),
      cluster("us", {
        updateGroup: "g",
        kubernetesVersion: "1.30.5",
        region: "eastus",
        nodePools: [pool("202602.15.0")],
      }),
      // Not a member: its region lacks the newer images, but it is not part of the run.
      cluster("jp", {
        kubernetesVersion: "1.30.5",
        region: "japaneast",
        nodePools: [pool("202602.15.0")],
      }),
    ];
    const run = resolve(oneStage([{ name: "g" }]), clusters, {
      payload: fullUpgrade("1.31.2", "Consistent"),
      available,
    });
    expect(run.unassigned).toEqual(["jp"]);
    expect(run.consistentNodeImages).toEqual({ [UBUNTU]: "202603.01.0" });
  });

  it("Full and ControlPlaneOnly honour the kubernetes window scope, NodeImageOnly the nodeImage scope, bundles the workloads scope", () => {
    const c = [cluster("c-1", { updateGroup: "g" })];
    expect(
      resolve(oneStage([{ name: "g" }]), c, { payload: fullUpgrade() })
        .windowScope,
    ).toBe("kubernetes");
    expect(
      resolve(oneStage([{ name: "g" }]), c, {
        payload: {
          kind: "upgrade",
          upgrade: { type: "NodeImageOnly", nodeImageSelection: "Latest" },
        },
      }).windowScope,
    ).toBe("nodeImage");
    expect(resolve(oneStage([{ name: "g" }]), c).windowScope).toBe("workloads");
  });
});
