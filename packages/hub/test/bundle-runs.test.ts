// Staged runs of bundle revisions (docs/semantics.md#staged-bundle-runs): the run manager and the
// bundle manager wired as the hub wires them, over in-memory ports and a manual clock.
import { describe, expect, test } from "vitest";
import { parseUpdateStrategy, type UpdateStrategy } from "@flotilla/core";
import type { StatusPhase, StatusReport } from "@flotilla/protocol";
import pino from "pino";
import { createRunManager, type RunManager } from "../src/runs/run-manager.js";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import { RUN_LOG } from "../src/runs/run-log.js";
import type { BundleManager } from "../src/bundles/bundle-manager.js";
import {
  applyAndSettle,
  bundleSpec,
  cluster,
  holding,
  refusal,
  releasedRevisions,
  report,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

const STRATEGY = strategy({
  stages: [
    {
      name: "canary",
      memberSelector: { byLabel: "stage=canary" },
      maxAllowedFailures: 1,
    },
    {
      name: "prod",
      memberSelector: { byLabel: "stage=prod" },
      maxConcurrency: 2,
      maxAllowedFailures: 1,
    },
  ],
});

function strategy(input: unknown): UpdateStrategy {
  const parsed = parseUpdateStrategy(input);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

const FLEET = [
  cluster("canary-1", { stage: "canary" }),
  cluster("prod-1", { stage: "prod" }),
  cluster("prod-2", { stage: "prod" }),
  cluster("stray", {}),
];

interface Setup {
  readonly h: Harness;
  runs: RunManager;
  bundles: BundleManager;
  /** A counted report of `cluster` on bundle web, to both managers as the hub routes it. */
  send(
    cluster: string,
    revision: string,
    phase: StatusPhase,
    extra?: Partial<StatusReport>,
  ): Promise<void>;
  /** Runs and bundles settled. */
  settle(): Promise<void>;
  /** A new run manager and bundle manager on the same store and intents (a restarted hub). */
  restart(): Promise<void>;
}

function openRuns(h: Harness, bundles: BundleManager): RunManager {
  return createRunManager({
    store: h.store,
    intents: h.intents,
    directory: h.fleet,
    now: () => h.nowMs,
    logger: pino({ level: "silent" }),
    retryDelayMs: 5,
    bundles,
  });
}

async function setup(): Promise<Setup & AsyncDisposable> {
  const h = await startHarness(FLEET);
  const s = {
    h,
    bundles: h.manager,
    runs: openRuns(h, h.manager),
    async send(
      name: string,
      revision: string,
      phase: StatusPhase,
      extra: Partial<StatusReport> = {},
    ) {
      const r = report(h, name, revision, phase, extra);
      s.bundles.onStatus(name, r);
      s.runs.bundleReport(name, r);
      await s.settle();
    },
    async settle() {
      for (let i = 0; i < 3; i++) {
        await s.runs.idle();
        await s.bundles.idle();
      }
    },
    async restart() {
      s.runs.stop();
      s.bundles = await h.restart();
      s.runs = openRuns(h, s.bundles);
      await s.runs.start();
      s.runs.tick();
      await s.settle();
    },
    async [Symbol.asyncDispose]() {
      s.runs.stop();
      await h[Symbol.asyncDispose]();
    },
  };
  await s.runs.start();
  return s;
}

/** rev1 everywhere and Ready, then rev2 applied while the bundle is paused (released nowhere). */
async function twoRevisions(s: Setup): Promise<{ r1: string; r2: string }> {
  const r1 = await applyAndSettle(s.h);
  for (const c of holding(s.h, r1)) await s.send(c, r1, "Ready");
  await s.bundles.setPaused("web", true, "test");
  const r2 = await applyAndSettle(
    s.h,
    bundleSpec({ version: "2", paused: true }),
  );
  expect(holding(s.h, r2)).toEqual([]);
  return { r1, r2 };
}

function member(s: Setup, name: string) {
  const { run } = s.runs.get("roll");
  for (const stage of run.stages)
    for (const group of stage.groups)
      for (const m of group.members) if (m.name === name) return m;
  throw new Error(`no member ${name}`);
}

async function storedRunNames(s: Setup): Promise<string[]> {
  return (await s.h.store.list(RUN_LOG)).map((e) => e.key);
}

describe("creating a run of a bundle revision", () => {
  test("refusals store nothing", async () => {
    await using s = await setup();
    const { r2 } = await twoRevisions(s);
    const create = (bundle: string, revision: string, st = STRATEGY) =>
      s.runs.create({
        name: "roll",
        strategy: st,
        payload: { kind: "bundle", bundle, revision },
      });
    const unknown = await refusal(create("nope", ""));
    expect(unknown.code).toBe("not_found");
    expect(unknown.message).toContain('"nope"');

    const badRevision = await refusal(create("web", "0123abcd"));
    expect(badRevision.code).toBe("invalid_argument");
    expect(badRevision.problems).toEqual([
      expect.objectContaining({ path: "payload.revision", value: "0123abcd" }),
    ]);

    const none = await refusal(
      create(
        "web",
        "",
        strategy({
          stages: [{ name: "x", memberSelector: { byLabel: "stage=none" } }],
        }),
      ),
    );
    expect(none.code).toBe("invalid_argument");
    expect(none.problems?.[0]?.message).toContain(
      "selects none of the 4 targets",
    );

    expect(await storedRunNames(s)).toEqual([]);
    expect(
      (await s.h.store.get(BUNDLES, "web"))?.value.drivenBy,
    ).toBeUndefined();

    const created = await create("web", "");
    expect(created.run.payload).toEqual({
      kind: "bundle",
      bundle: "web",
      revision: r2,
    });
    const other = await refusal(
      s.runs.create({
        name: "second",
        strategy: STRATEGY,
        payload: { kind: "bundle", bundle: "web", revision: r2 },
      }),
    );
    expect(other.code).toBe("failed_precondition");
    expect(other.message).toContain('update run "roll"');
    expect(s.runs.list().map((r) => r.run.name)).toEqual(["roll"]);
  });

  test("members already Ready at the revision are Skipped AlreadyAtTarget", async () => {
    await using s = await setup();
    const r1 = await applyAndSettle(s.h);
    await s.send("prod-1", r1, "Ready");
    const { run } = await s.runs.create({
      name: "roll",
      strategy: STRATEGY,
      payload: { kind: "bundle", bundle: "web", revision: r1 },
    });
    const prod1 = run.stages[1]?.groups[0]?.members.find(
      (m) => m.name === "prod-1",
    );
    expect(prod1).toMatchObject({
      state: "Skipped",
      reason: "AlreadyAtTarget",
    });
    const prod2 = run.stages[1]?.groups[0]?.members.find(
      (m) => m.name === "prod-2",
    );
    expect(prod2?.state).toBe("NotStarted");
  });
});

describe("a run drives its bundle", () => {
  test("members get the revision in turn, succeed on Ready at it only, and the bundle returns to partitions when the run completes", async () => {
    await using s = await setup();
    const { r1, r2 } = await twoRevisions(s);
    await s.runs.create({
      name: "roll",
      strategy: STRATEGY,
      payload: { kind: "bundle", bundle: "web", revision: "" },
    });
    const stored = (await s.h.store.get(BUNDLES, "web"))?.value;
    expect(stored?.drivenBy).toMatchObject({ run: "roll", revision: r2 });
    // Resumed while driven: the partition rollout still releases nothing new.
    await s.bundles.setPaused("web", false, "test");
    await s.settle();
    expect(holding(s.h, r2)).toEqual([]);

    await s.runs.command("roll", { type: "StartRun" });
    await s.settle();
    expect(holding(s.h, r2)).toEqual(["canary-1"]);
    const intent = s.h.publisher.snapshot().get("canary-1")?.intent.bundles.web;
    const own = stored?.contents.web;
    expect(intent).toMatchObject({ revision: r2, digest: own });
    expect(intent?.key).toBeDefined();

    // Progress is kept on the member; Ready at the old revision does not count.
    await s.send("canary-1", r2, "NotReady", {
      message: "deployment web: 0/1 ready",
    });
    expect(member(s, "canary-1")).toMatchObject({
      state: "Running",
      lastReport: "NotReady: deployment web: 0/1 ready",
    });
    await s.send("canary-1", r1, "Ready");
    expect(member(s, "canary-1").state).toBe("Running");
    await s.send("canary-1", r2, "Ready");
    expect(member(s, "canary-1").state).toBe("Succeeded");
    expect(holding(s.h, r2).sort()).toEqual(["canary-1", "prod-1", "prod-2"]);

    // A third revision applied while driven is stored and released nowhere.
    const r3 = await applyAndSettle(s.h, bundleSpec({ version: "3" }));
    expect(r3).not.toBe(r2);
    expect(holding(s.h, r3)).toEqual([]);
    expect(releasedRevisions(s.h).get("stray")).toBe(r1);
    const status = await s.bundles.get("web");
    expect(status.drivenBy).toEqual({ run: "roll", revision: r2 });
    expect(status.clusters.find((c) => c.cluster === "stray")?.message).toBe(
      `Held: the bundle is driven by staged run roll (revision ${r2}), which this cluster is not a member of`,
    );

    await s.send("prod-1", r2, "Ready");
    await s.send("prod-2", r2, "Modified");
    expect(s.runs.get("roll").run.state).toBe("Completed");
    await s.settle();
    expect(
      (await s.h.store.get(BUNDLES, "web"))?.value.drivenBy,
    ).toBeUndefined();
    expect((await s.bundles.get("web")).drivenBy).toBeUndefined();
    // Back on partitions at the current revision: r3 goes out (its first batch to everyone).
    expect(holding(s.h, r3).length).toBeGreaterThan(0);
  });

  test("a member not Ready at the revision by the progress deadline fails TimedOut naming its last state; a retry makes the agent apply again", async () => {
    await using s = await setup();
    const { r2 } = await twoRevisions(s);
    await s.runs.create({
      name: "roll",
      strategy: strategy({
        stages: [
          {
            name: "all",
            memberSelector: { byLabel: "stage" },
            maxConcurrency: 1,
            maxAllowedFailures: 1,
          },
        ],
      }),
      payload: { kind: "bundle", bundle: "web", revision: r2 },
      progressDeadlineSeconds: 60,
    });
    await s.runs.command("roll", { type: "StartRun" });
    await s.settle();
    await s.send("canary-1", r2, "Failed", {
      error: "admission webhook denied",
    });
    // A failed apply is progress, not the end: the agent may still get there.
    expect(member(s, "canary-1").state).toBe("Running");
    s.h.nowMs += 61_000;
    s.runs.tick();
    await s.settle();
    expect(member(s, "canary-1")).toMatchObject({
      state: "Failed",
      reason: "TimedOut",
    });
    expect(member(s, "canary-1").message).toContain(
      "last reported: ErrApplied: admission webhook denied",
    );
    // The failed member keeps the revision.
    expect(releasedRevisions(s.h).get("canary-1")).toBe(r2);
    const before = s.h.publisher.snapshot().get("canary-1")?.intent;

    // The failure is within budget: the next member goes on.
    expect(holding(s.h, r2).sort()).toEqual(["canary-1", "prod-1"]);

    await s.runs.command("roll", {
      type: "RetryMembers",
      members: ["canary-1"],
    });
    await s.settle();
    // Back in the queue: it starts again when prod-1 frees the slot.
    expect(member(s, "canary-1").state).toBe("NotStarted");
    await s.send("prod-1", r2, "Ready");
    const after = s.h.publisher.snapshot().get("canary-1")?.intent;
    expect(member(s, "canary-1").state).toBe("Running");
    expect(after?.bundles.web?.revision).toBe(r2);
    expect(after?.bundles.web?.forceSync).toBe(
      (before?.bundles.web?.forceSync ?? 0) + 1,
    );
    expect(after?.generation).toBeGreaterThan(before?.generation ?? 0);
  });

  test("a restarted hub resumes the run and the hold", async () => {
    await using s = await setup();
    const { r1, r2 } = await twoRevisions(s);
    await s.bundles.setPaused("web", false, "test");
    await s.runs.create({
      name: "roll",
      strategy: STRATEGY,
      payload: { kind: "bundle", bundle: "web", revision: r2 },
    });
    await s.runs.command("roll", { type: "StartRun" });
    await s.settle();
    await s.restart();
    s.bundles.tick();
    await s.settle();
    // Still held: only the member the run started holds r2.
    expect(holding(s.h, r2)).toEqual(["canary-1"]);
    expect(releasedRevisions(s.h).get("stray")).toBe(r1);
    await s.send("canary-1", r2, "Ready");
    expect(member(s, "canary-1").state).toBe("Succeeded");
    expect(holding(s.h, r2).sort()).toEqual(["canary-1", "prod-1", "prod-2"]);
  });

  test("deleting the run hands the bundle back to its partition rollout", async () => {
    await using s = await setup();
    const { r2 } = await twoRevisions(s);
    await s.bundles.setPaused("web", false, "test");
    await s.runs.create({
      name: "roll",
      strategy: STRATEGY,
      payload: { kind: "bundle", bundle: "web", revision: r2 },
    });
    await s.settle();
    expect(holding(s.h, r2)).toEqual([]);
    // The bundle cannot go while the run drives it: its members would only time out.
    await expect(s.bundles.delete("web", "test")).rejects.toThrow(
      /Cannot delete bundle "web": staged run "roll" drives it \(revision ".*"\); delete the run first/,
    );
    await s.runs.delete("roll");
    await s.settle();
    expect(
      (await s.h.store.get(BUNDLES, "web"))?.value.drivenBy,
    ).toBeUndefined();
    expect(holding(s.h, r2).length).toBeGreaterThan(0);
  });
});
