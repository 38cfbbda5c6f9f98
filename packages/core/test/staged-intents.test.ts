/**
 * The intents a staged run implies (staged/intents.ts): `step` returns the intent changes of its
 * actions, in order; `runIntents` gives what a stored run implies. Over random runs and event
 * sequences, the intents built from the per-step changes always agree with the run (Running
 * members hold its upgrade, Failed ones do not), republishing `runIntents` changes no intent, and
 * a hub that stored a step but crashed before publishing it ends with the same intents once it
 * republishes `runIntents` of the stored run.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  changeIntent,
  emptyIntent,
  type ClusterIntent,
  type IntentChange,
  type IntentChanges,
  type UpgradeIntent,
} from "../src/intent.js";
import {
  appendIntentChanges,
  intentChangesOf,
  runIntents,
} from "../src/staged/intents.js";
import type { Run } from "../src/staged/run.js";
import { step } from "../src/staged/step.js";
import {
  BUNDLE,
  Driver,
  T0,
  allMembers,
  cluster,
  fullUpgrade,
  member,
  oneStage,
  resolve,
  started,
} from "./staged-fixtures.js";
import {
  build,
  eventFor,
  opArb,
  scenarioArb,
  type Op,
} from "./staged-generators.js";

const UPGRADE = fullUpgrade("1.31.2");

/** Three clusters on 1.30 in one group taken one at a time. */
function threeMembers(
  options: { isUnreachable?: (c: string) => boolean } = {},
): Run {
  const clusters = ["a", "b", "c"].map((name) =>
    cluster(name, { updateGroup: "g", kubernetesVersion: "1.30.5" }),
  );
  return resolve(oneStage([{ name: "g", maxConcurrency: 1 }]), clusters, {
    payload: UPGRADE,
    ...options,
  });
}

/** Every cluster's intent, as an agent would see it. */
type Intents = Map<string, ClusterIntent>;

function publish(intents: Intents, changes: IntentChanges): void {
  for (const [cluster, list] of changes) {
    let intent = intents.get(cluster) ?? emptyIntent(cluster);
    for (const change of list) intent = changeIntent(intent, change);
    intents.set(cluster, intent);
  }
}

describe("the intent changes of a step", () => {
  it("asks a started member to upgrade to its target", () => {
    const run = threeMembers();
    const result = step(run, { type: "StartRun", actor: "alice" }, T0);
    expect([...result.intents]).toEqual([
      [
        "a",
        [
          {
            type: "SetUpgrade",
            upgrade: {
              run: "run-1",
              type: "Full",
              target: member(run, "a").target,
            },
          },
        ],
      ],
    ]);
    expect(member(run, "a").target?.kubernetesVersion).toBe("1.31.2");
  });

  it("withdraws a failed member's upgrade before the next member's starts", () => {
    const run = resolve(
      oneStage([{ name: "g", maxConcurrency: 1, maxAllowedFailures: 1 }]),
      ["a", "b"].map((name) => cluster(name, { updateGroup: "g" })),
      { payload: UPGRADE },
    );
    const { d } = started(run);
    const result = d.send({ type: "MemberFailed", member: "a", error: "x" });
    expect([...result.intents.keys()]).toEqual(["a", "b"]);
    expect(result.intents.get("a")).toEqual([
      { type: "ClearUpgrade", run: "run-1" },
    ]);
    expect(result.intents.get("b")?.map((c) => c.type)).toEqual(["SetUpgrade"]);
  });

  it("asks nothing when the command is rejected", () => {
    const run = threeMembers();
    step(run, { type: "StartRun" }, T0);
    const result = step(run, { type: "StartRun" }, T0);
    expect(result.rejected).toBeDefined();
    expect(result.intents.size).toBe(0);
  });

  it("asks nothing of a bundle run's members (bundle intents come from the bundle's rollout)", () => {
    const run = resolve(
      oneStage([{ name: "g" }]),
      [cluster("a", { updateGroup: "g" })],
      { payload: BUNDLE },
    );
    const result = step(run, { type: "StartRun" }, T0);
    expect(result.actions.some((a) => a.type === "StartMember")).toBe(true);
    expect(result.intents.size).toBe(0);
    expect(runIntents(run).size).toBe(0);
  });

  it("keeps the order of the actions when several steps are put together", () => {
    // A member started by one step and failed by the next ends without the upgrade.
    const run = threeMembers();
    const first = step(run, { type: "StartRun" }, T0);
    const second = step(
      run,
      { type: "MemberFailed", member: "a", error: "x" },
      T0,
    );
    const together = new Map<string, IntentChange[]>();
    appendIntentChanges(together, first.intents);
    appendIntentChanges(together, second.intents);
    expect(together.get("a")?.map((c) => c.type)).toEqual([
      "SetUpgrade",
      "ClearUpgrade",
    ]);
    expect(intentChangesOf(run, [...first.actions, ...second.actions])).toEqual(
      together,
    );
  });
});

describe("the intents a stored run implies", () => {
  it("gives Running members the upgrade and withdraws it from Failed ones, and leaves the others alone", () => {
    const run = resolve(
      oneStage([{ name: "g", maxConcurrency: 1, maxAllowedFailures: 2 }]),
      ["a", "b", "c", "d"].map((name) => cluster(name, { updateGroup: "g" })),
      { payload: UPGRADE },
    );
    const { d } = started(run);
    d.succeed("a");
    d.fail("b");
    expect(member(run, "c").state).toBe("Running");
    expect([...runIntents(run)]).toEqual([
      ["b", [{ type: "ClearUpgrade", run: "run-1" }]],
      [
        "c",
        [
          {
            type: "SetUpgrade",
            upgrade: {
              run: "run-1",
              type: "Full",
              target: member(run, "c").target,
            },
          },
        ],
      ],
    ]);
  });
});

describe("reachability when a run is created", () => {
  it("holds the members whose agents are unreachable, and takes the others", () => {
    const run = threeMembers({ isUnreachable: (c) => c === "a" });
    expect(allMembers(run).map((m) => m.member.unreachable)).toEqual([
      true,
      false,
      false,
    ]);
    const { first } = started(run);
    expect(first).toEqual(["b"]);
    expect(member(run, "a").state).toBe("Pending");
  });

  it("counts every agent reachable when nobody says otherwise", () => {
    const run = threeMembers();
    expect(allMembers(run).every((m) => !m.member.unreachable)).toBe(true);
  });
});

/** A random upgrade run, driven by random operations; every step's result is kept. */
function drive(
  scenario: Parameters<typeof build>[0],
  ops: readonly Op[],
): { d: Driver; steps: IntentChanges[] } {
  const { strategy: s, clusters } = build(scenario);
  const run = resolve(s, clusters, {
    payload: UPGRADE,
    progressDeadlineSeconds: 1800,
  });
  const d = new Driver(run);
  const steps = [d.send({ type: "StartRun", actor: "prop" }).intents];
  for (const op of ops) {
    const { event, atMs } = eventFor(run, op, d.now);
    steps.push(d.send(event, atMs).intents);
  }
  return { d, steps };
}

/** The upgrade of `run` a member's intent holds, if any. */
function heldUpgrade(
  intents: Intents,
  run: Run,
  name: string,
): UpgradeIntent | undefined {
  const upgrade = intents.get(name)?.upgrade;
  return upgrade?.run === run.name ? upgrade : undefined;
}

describe("intent properties", () => {
  it("intents built from every step's changes agree with the run, and republishing what the run implies changes none", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        scenarioArb,
        fc.array(opArb, { maxLength: 60 }),
        (scenario, ops) => {
          const { strategy: s, clusters } = build(scenario);
          const run = resolve(s, clusters, {
            payload: UPGRADE,
            progressDeadlineSeconds: 1800,
          });
          const d = new Driver(run);
          const intents: Intents = new Map();
          const check = (changes: IntentChanges): void => {
            for (const list of changes.values())
              for (const change of list) seen.add(change.type);
            publish(intents, changes);
            const before = new Map(intents);
            publish(intents, runIntents(run));
            expect(intents).toEqual(before);
            for (const { member: m } of allMembers(run)) {
              const held = heldUpgrade(intents, run, m.name);
              if (m.state === "Running")
                expect(held?.target, `Running member ${m.name}`).toEqual(
                  m.target,
                );
              if (m.state === "Failed")
                expect(held, `Failed member ${m.name}`).toBeUndefined();
            }
          };
          check(d.send({ type: "StartRun", actor: "prop" }).intents);
          for (const op of ops) {
            const { event, atMs } = eventFor(run, op, d.now);
            check(d.send(event, atMs).intents);
          }
        },
      ),
      { numRuns: 200 },
    );
    // The generator must reach both kinds of change, or the property says little.
    expect([...seen].sort()).toEqual(["ClearUpgrade", "SetUpgrade"]);
  });

  it("a step stored but never published is made up for by republishing what the stored run implies", () => {
    fc.assert(
      fc.property(
        scenarioArb,
        fc.array(opArb, { maxLength: 60 }),
        fc.nat(),
        (scenario, ops, cut) => {
          const { d, steps } = drive(scenario, ops);
          const published: Intents = new Map();
          for (const changes of steps) publish(published, changes);
          // Replays the same steps; the hub crashes after storing step `at` and republishes.
          const { strategy: s, clusters } = build(scenario);
          const fresh = resolve(s, clusters, {
            payload: UPGRADE,
            progressDeadlineSeconds: 1800,
          });
          const at = cut % d.log.length;
          const recovered: Intents = new Map();
          d.log.forEach(({ event, nowMs }, i) => {
            const result = step(fresh, event, nowMs);
            publish(recovered, i === at ? runIntents(fresh) : result.intents);
          });
          expect(fresh).toEqual(d.run);
          expect(recovered).toEqual(published);
        },
      ),
      { numRuns: 200 },
    );
  });
});
