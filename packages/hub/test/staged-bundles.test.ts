// Staged bundles (docs/semantics.md#staged-bundles): a bundle with an update strategy rolls each
// new revision out as a run the hub makes and starts. The run manager, the bundle manager and the
// run maker wired as the hub wires them, over in-memory ports and a manual clock.
import { describe, expect, test } from "vitest";
import { parseUpdateStrategy, type UpdateStrategy } from "@flotilla/core";
import type { StatusPhase } from "@flotilla/protocol";
import pino from "pino";
import type { AuditRecord } from "../src/audit/audit-log.js";
import { createRunManager, type RunManager } from "../src/runs/run-manager.js";
import {
  createStagedBundleRuns,
  STAGED_BUNDLE_METHODS,
  type StagedBundleRuns,
} from "../src/runs/staged-bundle-runs.js";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import { stagedRunName } from "../src/bundles/bundle-runs.js";
import type { BundleManager } from "../src/bundles/bundle-manager.js";
import {
  bundleSpec,
  cluster,
  holding,
  refusal,
  report,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

function strategy(input: unknown): UpdateStrategy {
  const parsed = parseUpdateStrategy(input);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

/** Canary first, behind an approval, then prod two at a time. */
const STAGES = strategy({
  stages: [
    {
      name: "canary",
      memberSelector: { byLabel: "stage=canary" },
      maxAllowedFailures: 1,
      afterGates: [{ type: "Approval" }],
    },
    {
      name: "prod",
      memberSelector: { byLabel: "stage=prod" },
      maxConcurrency: 2,
      maxAllowedFailures: 1,
    },
  ],
});

const FLEET = [
  cluster("canary-1", { stage: "canary" }),
  cluster("prod-1", { stage: "prod" }),
  cluster("prod-2", { stage: "prod" }),
];

/** A staged spec of bundle web (version `v` of its one manifest). */
function staged(v: string, name = "stages") {
  return bundleSpec({
    version: v,
    updateStrategyName: name,
    rollout: "updateStrategyName",
  });
}

interface Setup extends AsyncDisposable {
  readonly h: Harness;
  readonly bundles: BundleManager;
  readonly runs: RunManager;
  readonly maker: StagedBundleRuns;
  readonly strategies: Map<string, UpdateStrategy>;
  readonly audit: AuditRecord[];
  send(cluster: string, revision: string, phase: StatusPhase): Promise<void>;
  settle(): Promise<void>;
  /** Applies `spec` and settles; the new current revision. */
  apply(spec: ReturnType<typeof staged>): Promise<string>;
}

async function setup(): Promise<Setup> {
  const strategies = new Map([["stages", STAGES]]);
  const audit: AuditRecord[] = [];
  const wiring: { runs?: RunManager; maker?: StagedBundleRuns } = {};
  const h = await startHarness(FLEET, {
    deps: {
      stagedRuns: {
        check: (...args) => {
          wiring.maker?.check(...args);
        },
        plan: (...args) => wiring.maker!.plan(...args),
        make: (name, reason) =>
          wiring.maker?.make(name, reason) ?? Promise.resolve(),
      },
      runExists: (run) =>
        wiring.runs?.list().some((r) => r.run.name === run) ?? false,
      stopRolledBackRun: (run, revision, actor) =>
        wiring.runs?.rolledBack(run, revision, actor) ?? Promise.resolve(),
    },
  });
  const bundles = h.manager;
  const runs = createRunManager({
    store: h.store,
    intents: h.intents,
    directory: h.fleet,
    now: () => h.nowMs,
    logger: pino({ level: "silent" }),
    retryDelayMs: 5,
    bundles,
  });
  const maker = createStagedBundleRuns({
    runs,
    strategies: {
      get(name) {
        const found = strategies.get(name);
        if (found === undefined) throw new Error(`no strategy ${name}`);
        return {
          strategy: found,
          record: { name, strategyJson: "{}", createdAtMs: 0, updatedAtMs: 0 },
          revision: 1,
        };
      },
    },
    bundles: () => bundles,
    audit: {
      append: (record: AuditRecord) => {
        audit.push(record);
        return Promise.resolve();
      },
    } as never,
    now: () => h.nowMs,
    log: pino({ level: "silent" }),
    replica: () => "hub-0",
  });
  wiring.runs = runs;
  wiring.maker = maker;
  await runs.start();
  const s: Setup = {
    h,
    bundles,
    runs,
    maker,
    strategies,
    audit,
    async send(name, revision, phase) {
      const r = report(h, name, revision, phase);
      bundles.onStatus(name, r);
      runs.bundleReport(name, r);
      await s.settle();
    },
    async settle() {
      for (let i = 0; i < 3; i++) {
        await runs.idle();
        await bundles.idle();
      }
    },
    async apply(spec) {
      const { bundle } = await bundles.apply(spec, "test");
      await s.settle();
      return bundle.record.revision;
    },
    async [Symbol.asyncDispose]() {
      runs.stop();
      await h[Symbol.asyncDispose]();
    },
  };
  return s;
}

function memberOf(s: Setup, run: string, name: string) {
  for (const stage of s.runs.get(run).run.stages)
    for (const group of stage.groups)
      for (const m of group.members) if (m.name === name) return m;
  throw new Error(`no member ${name} in ${run}`);
}

describe("a staged bundle", () => {
  test("each new revision becomes a started run of the bundle's strategy; partitions never release it first", async () => {
    await using s = await setup();
    const r1 = await s.apply(staged("1"));
    const run1 = stagedRunName("web", r1);
    expect(run1).toBe(`web-${r1.slice(0, 8)}`);
    const stored = (await s.h.store.get(BUNDLES, "web"))?.value;
    expect(stored?.updateStrategyName).toBe("stages");
    expect(stored?.drivenBy).toMatchObject({ run: run1, revision: r1 });
    expect(stored?.drivenBy?.pending).toBeUndefined();
    expect(s.runs.get(run1).run).toMatchObject({
      state: "Running",
      payload: { kind: "bundle", bundle: "web", revision: r1 },
    });
    // Only the canary holds it; the prod clusters wait for the stage.
    expect(holding(s.h, r1)).toEqual(["canary-1"]);
    s.h.fireInterval();
    await s.settle();
    expect(holding(s.h, r1)).toEqual(["canary-1"]);

    await s.send("canary-1", r1, "Ready");
    expect(s.runs.get(run1).run.state).toBe("Pending");
    expect(holding(s.h, r1)).toEqual(["canary-1"]);
    await s.runs.command(run1, {
      type: "ApproveGate",
      gate: "stage:canary:after",
      actor: "ops",
    });
    await s.settle();
    expect(holding(s.h, r1).sort()).toEqual(["canary-1", "prod-1", "prod-2"]);
    await s.send("prod-1", r1, "Ready");
    await s.send("prod-2", r1, "Ready");
    expect(s.runs.get(run1).run.state).toBe("Completed");
    await s.settle();
    // Completed: back on the partitions at the same revision (for clusters that join later).
    expect(
      (await s.h.store.get(BUNDLES, "web"))?.value.drivenBy,
    ).toBeUndefined();

    expect(s.audit.map((r) => [r.method, r.targetName, r.actor])).toEqual([
      [STAGED_BUNDLE_METHODS.create, run1, "hub/hub-0"],
      [STAGED_BUNDLE_METHODS.start, run1, "hub/hub-0"],
    ]);

    // Its preview is the plan of a run of its strategy.
    const plan = s.bundles.preview("web");
    expect(plan.dialect).toBe("staged");
    expect(plan.waves.length).toBeGreaterThan(1);

    // The same content again makes no run.
    const again = await s.bundles.apply(staged("1"), "test");
    expect(again.changed).toBe(false);
    expect(s.runs.list()).toHaveLength(1);
  });

  test("a rollback while the run is in flight stops it, its members in flight Skipped RolledBack, and moves its clusters back", async () => {
    await using s = await setup();
    const r1 = await s.apply(staged("1"));
    const run1 = stagedRunName("web", r1);
    await s.send("canary-1", r1, "Ready");
    await s.runs.command(run1, {
      type: "ApproveGate",
      gate: "stage:canary:after",
      actor: "ops",
    });
    await s.settle();
    await s.send("prod-1", r1, "Ready");
    await s.send("prod-2", r1, "Ready");
    expect(s.runs.get(run1).run.state).toBe("Completed");
    await s.settle();

    const r2 = await s.apply(staged("2"));
    const run2 = stagedRunName("web", r2);
    expect(holding(s.h, r2)).toEqual(["canary-1"]);
    await s.bundles.rollback("web", {
      to: "",
      allAtOnce: false,
      cause: "Manual",
      message: "canary errors",
      actor: "ops",
    });
    await s.settle();
    expect(s.runs.get(run2).run).toMatchObject({
      state: "Stopped",
      stopMessage: `Stopped by ops: bundle web rolled back to revision ${r1}: canary errors`,
    });
    expect(memberOf(s, run2, "canary-1")).toMatchObject({
      state: "Skipped",
      reason: "RolledBack",
      message: `Rolled back: the bundle went back to revision ${r1}`,
    });
    const record = (await s.h.store.get(BUNDLES, "web"))?.value;
    expect(record?.drivenBy).toBeUndefined();
    expect(record?.revision).toBe(r1);
    expect(holding(s.h, r1).sort()).toEqual(["canary-1", "prod-1", "prod-2"]);
    // The stopped run cannot release its revision again.
    const restart = await refusal(
      s.runs.command(run2, { type: "StartRun", actor: "ops" }),
    );
    expect(restart.code).toBe("failed_precondition");
    expect(restart.message).toContain(
      `Update run "${run2}" no longer drives bundle "web": the bundle was rolled back`,
    );
  });

  test("a newer revision supersedes the run in flight: that run stops, its members in flight finish, and it cannot be started again", async () => {
    await using s = await setup();
    const r1 = await s.apply(staged("1"));
    const run1 = stagedRunName("web", r1);
    const r2 = await s.apply(staged("2"));
    const run2 = stagedRunName("web", r2);
    expect(r2).not.toBe(r1);
    // The first run stops at once: its canary is the second run's now.
    expect(s.runs.get(run1).run.state).toBe("Stopped");
    expect(memberOf(s, run1, "canary-1")).toMatchObject({
      state: "Skipped",
      reason: "Superseded",
      message: `Superseded by update run ${run2}`,
    });
    expect(s.runs.get(run2).run.state).toBe("Running");
    expect((await s.bundles.get("web")).drivenBy).toEqual({
      run: run2,
      revision: r2,
    });
    expect(holding(s.h, r2)).toEqual(["canary-1"]);
    expect(holding(s.h, r1)).toEqual([]);
    // A late report on the old revision changes neither run.
    await s.send("canary-1", r1, "Ready");
    expect(memberOf(s, run2, "canary-1").state).toBe("Running");
    await s.send("canary-1", r2, "Ready");
    expect(memberOf(s, run2, "canary-1").state).toBe("Succeeded");

    const restart = await refusal(
      s.runs.command(run1, { type: "StartRun", actor: "ops" }),
    );
    expect(restart.code).toBe("failed_precondition");
    expect(restart.message).toContain(
      `update run "${run2}" drives bundle "web"`,
    );
    const stop = s.audit.find(
      (r) => r.method === STAGED_BUNDLE_METHODS.supersede,
    );
    expect(stop).toMatchObject({
      targetName: run1,
      reason: `superseded by update run ${run2} (revision ${r2} of bundle web)`,
    });
    // The superseded run is the operator's to delete.
    await s.runs.delete(run1);
    expect(s.runs.list().map((r) => r.run.name)).toEqual([run2]);
  });

  test("a maker with a stale view of the bundle (another replica) makes no second run", async () => {
    await using s = await setup();
    const r1 = await s.apply(staged("1"));
    const run1 = stagedRunName("web", r1);
    const stale = createStagedBundleRuns({
      runs: s.runs,
      strategies: {
        get: () => ({
          strategy: STAGES,
          record: {
            name: "stages",
            strategyJson: "{}",
            createdAtMs: 0,
            updatedAtMs: 0,
          },
          revision: 1,
        }),
      },
      bundles: () => ({
        drivers: () => s.bundles.drivers(),
        letGo: (...args) => s.bundles.letGo(...args),
        // What it saw before the first run was recorded.
        stagedDriver: () => ({
          bundle: "web",
          run: run1,
          revision: r1,
          strategy: "stages",
        }),
      }),
      audit: { append: () => Promise.resolve() } as never,
      now: () => s.h.nowMs,
      log: pino({ level: "silent" }),
      replica: () => "hub-1",
    });
    const twice = await refusal(stale.make("web", "test"));
    expect(twice.code).toBe("failed_precondition");
    expect(twice.message).toContain("was made already");
    expect(s.runs.list().map((r) => [r.run.name, r.run.state])).toEqual([
      [run1, "Running"],
    ]);
  });

  test("bad strategies are refused and nothing is stored", async () => {
    await using s = await setup();
    const missing = await refusal(s.bundles.apply(staged("1", "nope"), "test"));
    expect(missing.code).toBe("invalid_argument");
    expect(missing.problems).toEqual([
      expect.objectContaining({
        path: "bundle.updateStrategyName",
        value: "nope",
        message: "is not a stored update strategy (flotilla strategy list)",
      }),
    ]);
    s.strategies.set(
      "elsewhere",
      strategy({
        stages: [{ name: "x", memberSelector: { byLabel: "stage=none" } }],
      }),
    );
    const none = await refusal(
      s.bundles.apply(staged("1", "elsewhere"), "test"),
    );
    expect(none.problems?.[0]?.message).toContain(
      "selects none of the bundle's 3 targets",
    );
    const both = await refusal(
      s.bundles.apply(
        { ...staged("1"), rolloutStrategyJson: '{"maxUnavailable":1}' },
        "test",
      ),
    );
    expect(both.problems?.[0]?.path).toBe("bundle.rolloutStrategy");
    expect(await s.h.store.get(BUNDLES, "web")).toBeUndefined();
    expect(s.runs.list()).toEqual([]);
  });

  test("a run that cannot be made yet leaves the revision held, and is made once it can", async () => {
    await using s = await setup();
    const r1 = await s.apply(staged("1"));
    const run1 = stagedRunName("web", r1);
    await s.send("canary-1", r1, "Ready");
    // The strategy disappears between the check and the run (another operator deleted it).
    const check = s.maker.check.bind(s.maker);
    s.maker.check = (...args) => {
      check(...args);
      s.strategies.delete("stages");
    };
    const answer = await s.bundles.apply(staged("2"), "test");
    await s.settle();
    const r2 = answer.bundle.record.revision;
    expect(answer.warnings.map((w) => w.code)).toContain("StagedRunNotMade");
    expect(answer.bundle.record.drivenBy).toMatchObject({
      run: stagedRunName("web", r2),
      pending: true,
    });
    s.h.fireInterval();
    await s.settle();
    expect(holding(s.h, r2)).toEqual([]);
    // The first run was not superseded: nothing was made.
    expect(s.runs.get(run1).run.state).toBe("Pending");

    s.strategies.set("stages", STAGES);
    await s.maker.makePending();
    await s.settle();
    expect(s.runs.get(stagedRunName("web", r2)).run.state).toBe("Running");
    expect(s.runs.get(run1).run.state).toBe("Stopped");
    expect(holding(s.h, r2)).toEqual(["canary-1"]);
  });

  test("deleting the run of a staged bundle leaves the revision held; a revision seen before gets a fresh name", async () => {
    await using s = await setup();
    const r1 = await s.apply(staged("1"));
    const run1 = stagedRunName("web", r1);
    await s.runs.command(run1, { type: "StopRun", actor: "ops" });
    await s.send("canary-1", r1, "Ready");
    expect(s.runs.get(run1).run.state).toBe("Stopped");
    await s.runs.delete(run1);
    await s.settle();
    s.h.fireInterval();
    await s.settle();
    // Not handed to the partitions: prod never gets r1 without a run.
    expect(holding(s.h, r1)).toEqual(["canary-1"]);
    expect((await s.bundles.get("web")).drivenBy?.run).toBe(run1);

    const r2 = await s.apply(staged("2"));
    await s.send("canary-1", r2, "Applying");
    const r1again = await s.apply(staged("1"));
    expect(r1again).toBe(r1);
    expect(s.runs.get(run1).run.state).toBe("Running");
    expect(s.runs.get(stagedRunName("web", r2)).run.state).toBe("Stopped");
    // Back again at r1 while its first run is kept: the next name.
    const r3 = await s.apply(staged("2"));
    expect(r3).toBe(r2);
    expect(s.runs.get(stagedRunName("web", r2, 2)).run.state).toBe("Running");

    // A bundle whose run was deleted can be deleted.
    await s.runs.command(stagedRunName("web", r2, 2), {
      type: "StopRun",
      actor: "ops",
    });
    await s.send("canary-1", r2, "Ready");
    for (const { run } of s.runs.list())
      if (run.state === "Stopped") await s.runs.delete(run.name);
    await s.settle();
    await s.bundles.delete("web", "test");
    expect(await s.h.store.get(BUNDLES, "web")).toBeUndefined();
  });
});
