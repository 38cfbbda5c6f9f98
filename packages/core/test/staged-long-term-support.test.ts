/**
 * Runs whose target is past standard support (docs/semantics.md#upgrades): a member whose cluster
 * is not on the AKSLongTermSupport plan fails when its turn comes, without an intent, and counts
 * against the failure budget like any failed member (docs/semantics.md#failure-budget).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SupportPlan } from "../src/cluster.js";
import { planUpgradeTargets } from "../src/preview/upgrade-plan.js";
import type { RunPayload } from "../src/staged/run.js";
import {
  Driver,
  T0,
  cluster,
  group,
  member,
  namesIn,
  oneStage,
  resolve,
  running,
  stage,
  started,
} from "./staged-fixtures.js";

/** 1.27 is past standard support; 1.27.102 is its LTS patch. */
const LTS_UPGRADE: RunPayload = {
  kind: "upgrade",
  upgrade: {
    type: "Full",
    kubernetesVersion: "1.27.102",
    nodeImageSelection: "Latest",
    requiresLongTermSupport: true,
  },
};
const available = {
  kubernetes: [{ version: "1.27.102", lts: true }, { version: "1.30.3" }],
  nodeImages: [],
};

function member127(name: string, supportPlan?: SupportPlan) {
  return cluster(name, {
    updateGroup: "g",
    kubernetesVersion: "1.27.15",
    ...(supportPlan === undefined ? {} : { supportPlan }),
  });
}

const FAILURE = (name: string): string =>
  `cluster "${name}" cannot take 1.27.102: it is past standard support and the cluster does not have long-term support enabled`;

describe("long-term-support runs", () => {
  it("members without long-term support stay NotStarted at creation, then fail at their turn without an intent; the LTS members upgrade", () => {
    const run = resolve(
      oneStage([{ name: "g", maxConcurrency: 1, maxAllowedFailures: "2" }]),
      [
        member127("a-lts", "AKSLongTermSupport"),
        member127("b-official", "KubernetesOfficial"),
        member127("c-none"),
        member127("d-lts", "AKSLongTermSupport"),
      ],
      { payload: LTS_UPGRADE, available },
    );
    expect(namesIn(run, "NotStarted")).toEqual([
      "a-lts",
      "b-official",
      "c-none",
      "d-lts",
    ]);
    const { d, first } = started(run);
    expect(first).toEqual(["a-lts"]);
    // a-lts succeeds: b-official and c-none fail at their turn, d-lts starts.
    expect(d.succeed("a-lts")).toEqual(["d-lts"]);
    expect(member(run, "b-official")).toMatchObject({
      state: "Failed",
      reason: "NoLongTermSupport",
      message: FAILURE("b-official"),
      failureCount: 1,
    });
    expect(member(run, "b-official").target).toBeUndefined();
    expect(member(run, "c-none")).toMatchObject({
      state: "Failed",
      reason: "NoLongTermSupport",
    });
    expect(group(run, "g").failureCount).toBe(2);
    d.succeed("d-lts");
    expect(run).toMatchObject({ state: "Completed", failureCount: 2 });
    const intents = d.actions.flatMap((a) =>
      a.type === "StartMember" ? [a.member] : [],
    );
    expect(intents).toEqual(["a-lts", "d-lts"]);
  });

  it("with a failure budget of 0 the first member without long-term support fails the stage: in-flight members finish, the rest never start", () => {
    const run = resolve(
      oneStage([{ name: "g", maxConcurrency: 2 }], {
        maxAllowedFailures: "0",
      }),
      [
        member127("a-lts", "AKSLongTermSupport"),
        member127("b-none"),
        member127("c-lts", "AKSLongTermSupport"),
      ],
      { payload: LTS_UPGRADE, available },
    );
    const { d, first } = started(run);
    // a-lts takes a slot; b-none fails at its turn and spends the budget: c-lts is not started.
    expect(first).toEqual(["a-lts"]);
    expect(member(run, "b-none").state).toBe("Failed");
    expect(stage(run, "stage-1").state).toBe("Failed");
    expect(run.state).toBe("Stopping");
    expect(d.succeed("a-lts")).toEqual([]);
    expect(run.state).toBe("Failed");
    expect(run.message).toContain("Failure budget exceeded");
    expect(member(run, "c-lts").state).toBe("NotStarted");
  });

  it("a member that would not be upgraded anyway is Skipped with that reason, not failed", () => {
    const run = resolve(
      oneStage([{ name: "g" }]),
      [
        cluster("at-target", {
          updateGroup: "g",
          kubernetesVersion: "1.27.102",
        }),
        cluster("newer", { updateGroup: "g", kubernetesVersion: "1.28.1" }),
      ],
      { payload: LTS_UPGRADE, available },
    );
    expect(member(run, "at-target")).toMatchObject({
      state: "Skipped",
      reason: "AlreadyAtTarget",
    });
    expect(member(run, "newer")).toMatchObject({
      state: "Skipped",
      reason: "AheadOfTarget",
    });
  });

  it("a retried member fails again while its cluster still lacks long-term support", () => {
    const run = resolve(
      oneStage([{ name: "g", maxConcurrency: 1, maxAllowedFailures: "5" }]),
      [member127("a-none"), member127("b-lts", "AKSLongTermSupport")],
      { payload: LTS_UPGRADE, available },
    );
    const { d, first } = started(run);
    expect(first).toEqual(["b-lts"]);
    expect(member(run, "a-none").state).toBe("Failed");
    d.ok({ type: "RetryMembers", members: ["a-none"], actor: "bob" });
    expect(member(run, "a-none").state).not.toBe("Failed");
    expect(d.succeed("b-lts")).toEqual([]);
    expect(member(run, "a-none")).toMatchObject({
      state: "Failed",
      reason: "NoLongTermSupport",
      failureCount: 2,
    });
  });

  it("a support plan reported after creation is the one read at the member's turn, either way", () => {
    const run = resolve(
      oneStage([{ name: "g", maxConcurrency: 1, maxAllowedFailures: "5" }]),
      [member127("a-lts", "AKSLongTermSupport"), member127("b-none")],
      { payload: LTS_UPGRADE, available },
    );
    const { d, first } = started(run);
    expect(first).toEqual(["a-lts"]);
    d.ok({
      type: "MemberSupportPlanChanged",
      member: "b-none",
      supportPlan: "AKSLongTermSupport",
    });
    expect(d.succeed("a-lts")).toEqual(["b-none"]);
    const dropped = resolve(
      oneStage([{ name: "g", maxAllowedFailures: "1" }]),
      [member127("d-lts", "AKSLongTermSupport")],
      { payload: LTS_UPGRADE, available },
    );
    const third = new Driver(dropped);
    third.ok({ type: "MemberSupportPlanChanged", member: "d-lts" });
    expect(third.start()).toEqual([]);
    expect(member(dropped, "d-lts")).toMatchObject({
      state: "Failed",
      reason: "NoLongTermSupport",
    });
    expect(
      third.send({ type: "MemberSupportPlanChanged", member: "ghost" })
        .rejected,
    ).toBeDefined();
  });

  it("property: the plan shown before the start and the run agree; exactly the clusters without long-term support fail, and only LTS clusters get intents", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom<SupportPlan | undefined>(
            "AKSLongTermSupport",
            "KubernetesOfficial",
            undefined,
          ),
          { minLength: 1, maxLength: 12 },
        ),
        fc.integer({ min: 1, max: 4 }),
        (plans, concurrency) => {
          const clusters = plans.map((plan, i) =>
            member127(`m-${String(i).padStart(2, "0")}`, plan),
          );
          const run = resolve(
            oneStage([
              {
                name: "g",
                maxConcurrency: concurrency,
                maxAllowedFailures: "100%",
              },
            ]),
            clusters,
            { payload: LTS_UPGRADE, available, createdAtMs: T0 },
          );
          const planned = planUpgradeTargets(run)?.members ?? [];
          const { d } = started(run);
          d.drain();
          expect(run.state).toBe("Completed");
          const intents = d.actions.flatMap((a) =>
            a.type === "StartMember" ? [a.member] : [],
          );
          const lts = clusters
            .filter((c) => c.supportPlan === "AKSLongTermSupport")
            .map((c) => c.name);
          expect([...intents].sort()).toEqual(lts);
          const failed = namesIn(run, "Failed");
          expect(failed).toEqual(
            clusters.map((c) => c.name).filter((n) => !lts.includes(n)),
          );
          expect(
            planned.filter((m) => m.action === "fail").map((m) => m.name),
          ).toEqual(failed);
          for (const name of failed)
            expect(member(run, name).reason).toBe("NoLongTermSupport");
          expect(run.failureCount).toBe(failed.length);
          expect(running(run)).toEqual([]);
        },
      ),
    );
  });
});
