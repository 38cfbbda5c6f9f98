/**
 * Property tests of the staged engine: over random strategies, fleets and event
 * sequences, in-flight members never exceed the stage or group concurrency, nothing starts after a
 * budget is exceeded (until an operator starts the run again), rejected commands change nothing,
 * and runs are deterministic: independent of cluster input order, replayable from their event log,
 * and unchanged by a JSON round trip (what the hub persists).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planStaged } from "../src/plan.js";
import type { RunAction } from "../src/staged/events.js";
import { cloneRun, type Run } from "../src/staged/run.js";
import { step } from "../src/staged/step.js";
import {
  DAY,
  Driver,
  allMembers,
  resolve,
  running,
} from "./staged-fixtures.js";
import {
  build,
  eventFor,
  opArb,
  scenarioArb,
  type Op,
} from "./staged-generators.js";

const DONE = new Set(["Succeeded", "Failed", "Skipped"]);

/**
 * States must agree across levels after every step (docs/semantics.md#order-and-concurrency
 * roll-up, 5.5).
 */
function checkConsistency(run: Run, nowMs: number, rejected: boolean): void {
  // A rejected command changes nothing, not even the wake time.
  if (run.wakeAtMs !== undefined && !rejected)
    expect(run.wakeAtMs).toBeGreaterThan(nowMs);
  run.stages.forEach((stage, si) => {
    const members = stage.groups.flatMap((g) => g.members);
    if (si < run.currentStage) {
      expect(
        ["Completed", "Skipped"],
        `stage ${stage.name} before the current one`,
      ).toContain(stage.state);
    }
    if (si > run.currentStage)
      expect(
        members.some((m) => m.state === "Running"),
        `stage ${stage.name} after the current one`,
      ).toBe(false);
    if (stage.state === "Completed" || stage.state === "Skipped") {
      for (const m of members)
        expect(
          DONE.has(m.state),
          `member ${m.name} of ${stage.state} stage ${stage.name} is ${m.state}`,
        ).toBe(true);
      for (const g of stage.groups)
        expect(
          ["Completed", "Skipped", "Failed"],
          `group ${g.name} of ${stage.state} stage`,
        ).toContain(g.state);
      for (const gate of [
        ...stage.beforeGates,
        ...stage.afterGates,
        ...stage.groups.flatMap((g) => [...g.beforeGates, ...g.afterGates]),
      ]) {
        if (stage.state === "Completed")
          expect(
            ["Completed", "Skipped"],
            `gate ${gate.id} of a Completed stage`,
          ).toContain(gate.state);
        else
          expect(
            ["Pending", "NotStarted"],
            `gate ${gate.id} of a Skipped stage`,
          ).not.toContain(gate.state);
      }
    }
    if (stage.state === "Pending")
      expect(
        stage.inFlight,
        `Pending stage ${stage.name} has members in flight`,
      ).toBe(0);
    for (const g of stage.groups) {
      if (g.state === "Pending" || g.state === "NotStarted")
        expect(
          g.inFlight,
          `${g.state} group ${g.name} has members in flight`,
        ).toBe(0);
      for (const m of g.members) {
        if (m.state === "Pending")
          expect(
            m.reason !== undefined && m.message !== "",
            `Pending member ${m.name} says why`,
          ).toBe(true);
      }
      for (const gate of [...g.beforeGates, ...g.afterGates])
        if (gate.state === "Completed") expect(gate.completedBy).toBeDefined();
      if (g.state === "Completed" || g.state === "Skipped") {
        for (const m of g.members)
          expect(
            DONE.has(m.state),
            `member ${m.name} of ${g.state} group ${g.name} is ${m.state}`,
          ).toBe(true);
      }
    }
  });
  if (run.state === "Completed" || run.state === "Skipped") {
    expect(run.currentStage).toBe(run.stages.length);
    for (const m of allMembers(run))
      expect(
        DONE.has(m.member.state),
        `member ${m.member.name} of a ${run.state} run`,
      ).toBe(true);
  }
  if (run.state === "Skipped")
    expect(run.stages.every((st) => st.state === "Skipped")).toBe(true);
  if (run.state === "Pending")
    expect(run.stages[run.currentStage]?.state).toBe("Pending");
  if (run.state === "Running")
    expect(["Running", "Pending"]).toContain(
      run.stages[run.currentStage]?.state,
    );
  if (
    run.state === "Stopped" ||
    run.state === "Failed" ||
    run.state === "Completed" ||
    run.state === "Skipped"
  )
    expect(running(run)).toEqual([]);
}

/**
 * Runs a scenario: StartRun, then every op. After each step the driver checks in-flight limits,
 * counters and transition messages; here we also check budgets and rejections.
 */
function play(run: Run, ops: readonly Op[]): Driver {
  const d = new Driver(run);
  d.send({ type: "StartRun", actor: "prop" });
  for (const op of ops) {
    const { event, atMs } = eventFor(run, op, d.now);
    const before = cloneRun(run);
    const result = d.send(event, atMs);
    const starts = result.actions.filter((a) => a.type === "StartMember");
    checkConsistency(run, d.now, result.rejected !== undefined);
    if (result.rejected !== undefined) {
      expect(cloneRun(run)).toEqual(before);
      expect(result.actions).toEqual([]);
    }
    // Once a budget is exceeded nothing new starts, anywhere, until an operator starts the run again;
    // this includes the step that exceeds it, however many reports it carried.
    if (before.budgetExceeded && event.type !== "StartRun")
      expect(starts).toEqual([]);
    if (run.budgetExceeded) expect(starts).toEqual([]);
    // Stopped is only ever an operator's doing: nothing turns Stopped unless a stop was requested.
    for (const a of result.actions)
      if (a.type === "Transitioned" && a.to === "Stopped")
        expect(run.stopRequested, `${a.scope} ${a.name} Stopped`).toBe(true);
    // Failure propagates up: while a budget is exceeded, a group over its own budget has a Failed stage.
    if (run.budgetExceeded) {
      for (const st of run.stages)
        for (const g of st.groups)
          if (
            g.state === "Failed" &&
            g.maxAllowedFailures !== null &&
            g.failureCount > g.maxAllowedFailures &&
            !st.skipRequested
          )
            expect(st.state, `stage of failed group ${g.name}`).toBe("Failed");
      const current = run.stages[run.currentStage];
      if (run.state === "Failed" && current?.skipRequested === false)
        expect(current.state).toBe("Failed");
    }
    // Stopping, Stopped and Failed runs start nothing either.
    if (
      run.state === "Stopping" ||
      run.state === "Stopped" ||
      run.state === "Failed"
    )
      expect(starts).toEqual([]);
  }
  return d;
}

const PROPERTY_RUNS = 400;

describe("staged run properties", () => {
  it("in flight never exceeds the stage or any group's effective concurrency, and no member starts after a budget is exceeded", () => {
    fc.assert(
      fc.property(
        scenarioArb,
        fc.array(opArb, { maxLength: 60 }),
        (scenario, ops) => {
          const { strategy: s, clusters } = build(scenario);
          const run = resolve(s, clusters, { progressDeadlineSeconds: 1800 });
          // The Driver checks the limits after every step; this also checks the limits were reachable.
          const d = play(run, ops);
          for (const stage of run.stages) {
            for (const group of stage.groups)
              expect(group.maxConcurrency).toBeLessThanOrEqual(
                Math.min(
                  stage.maxConcurrency,
                  Math.max(group.members.length, 1),
                ),
              );
          }
          expect(d.log.length).toBe(ops.length + 1);
        },
      ),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it("a run driven to the end with every member succeeding completes, whatever the windows, gates, limits and empty scopes", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { strategy: s, clusters } = build(scenario);
        const run = resolve(s, clusters);
        const d = new Driver(run);
        d.start();
        for (
          let guard = 0;
          guard < 500 && run.state !== "Completed" && run.state !== "Skipped";
          guard++
        ) {
          const next = running(run)[0];
          const gate = run.stages
            .flatMap((st) => [
              ...st.beforeGates,
              ...st.afterGates,
              ...st.groups.flatMap((g) => [...g.beforeGates, ...g.afterGates]),
            ])
            .find((g) => g.state === "Pending");
          if (next !== undefined) d.succeed(next);
          else if (gate !== undefined)
            d.ok({ type: "CompleteGate", gate: gate.id, actor: "prop" });
          else d.tick(run.wakeAtMs ?? d.now + DAY);
        }
        // Only a run with no member at all has nothing to complete.
        expect(run.state).toBe(
          run.stages.every((st) => st.memberCount === 0)
            ? "Skipped"
            : "Completed",
        );
        expect(
          allMembers(run).every((m) => m.member.state === "Succeeded"),
        ).toBe(true);
        for (const st of run.stages) {
          if (st.memberCount === 0)
            expect([st.state, st.reason], `stage ${st.name}`).toEqual([
              "Skipped",
              "NoMembers",
            ]);
          for (const g of st.groups)
            if (g.members.length === 0)
              expect([g.state, g.reason], `group ${g.name}`).toEqual([
                "Skipped",
                "NoMembers",
              ]);
        }
      }),
      { numRuns: PROPERTY_RUNS / 2 },
    );
  });

  it("the same clusters in any input order give the same plan, the same run and the same actions", () => {
    fc.assert(
      fc.property(
        scenarioArb,
        fc.array(opArb, { maxLength: 40 }),
        fc.nat(),
        (scenario, ops, seed) => {
          const { strategy: s, clusters } = build(scenario);
          const shuffled = [...clusters].sort(
            (a, b) =>
              (hash(a.name, seed) - hash(b.name, seed)) | 0 ||
              (a.name < b.name ? -1 : 1),
          );
          expect(planStaged(s, shuffled)).toEqual(planStaged(s, clusters));
          const a = play(resolve(s, clusters), ops);
          const b = play(resolve(s, shuffled), ops);
          expect(b.run).toEqual(a.run);
          expect(b.actions).toEqual(a.actions);
        },
      ),
      { numRuns: PROPERTY_RUNS / 2 },
    );
  });

  it("replaying the recorded (event, nowMs) sequence on a fresh run gives a deep-equal run and the same actions", () => {
    fc.assert(
      fc.property(
        scenarioArb,
        fc.array(opArb, { maxLength: 60 }),
        (scenario, ops) => {
          const { strategy: s, clusters } = build(scenario);
          const original = play(resolve(s, clusters), ops);
          const fresh = resolve(s, clusters);
          const actions: RunAction[] = [];
          for (const { event, nowMs } of original.log)
            actions.push(...step(fresh, event, nowMs).actions);
          expect(fresh).toEqual(original.run);
          expect(actions).toEqual(original.actions);
        },
      ),
      { numRuns: PROPERTY_RUNS / 2 },
    );
  });

  it("a run persisted as JSON and read back mid-way continues exactly like the original", () => {
    fc.assert(
      fc.property(
        scenarioArb,
        fc.array(opArb, { maxLength: 60 }),
        fc.nat(),
        (scenario, ops, cut) => {
          const { strategy: s, clusters } = build(scenario);
          const original = play(resolve(s, clusters), ops);
          const at = cut % (original.log.length + 1);
          let run = resolve(s, clusters);
          original.log.forEach(({ event, nowMs }, i) => {
            if (i === at) run = cloneRun(run);
            step(run, event, nowMs);
          });
          expect(run).toEqual(original.run);
        },
      ),
      { numRuns: PROPERTY_RUNS / 2 },
    );
  });
});

/** A deterministic pseudo-random permutation key. */
function hash(text: string, seed: number): number {
  let h = seed | 0;
  for (let i = 0; i < text.length; i++)
    h = Math.imul(h ^ text.charCodeAt(i), 2654435761);
  return h;
}

it("the property generator reaches budgets, gates, windows, empty stages, batches of reports and every run state", () => {
  // Guards against a generator that silently stops exercising the interesting paths.
  const states = new Set<string>();
  let exceeded = 0;
  let emptySkipped = 0;
  let batches = 0;
  fc.assert(
    fc.property(
      scenarioArb,
      fc.array(opArb, { maxLength: 60 }),
      (scenario, ops) => {
        const { strategy: s, clusters } = build(scenario);
        const run = resolve(s, clusters, { progressDeadlineSeconds: 1800 });
        const d = play(run, ops);
        for (const a of d.actions)
          if (a.type === "Transitioned" && a.scope === "run") states.add(a.to);
        if (run.failureCount > 0 && run.budgetExceeded) exceeded++;
        if (run.stages.some((st) => st.reason === "NoMembers")) emptySkipped++;
        for (const { event } of d.log)
          if (event.type === "MembersReported" && event.reports.length > 1)
            batches++;
      },
    ),
    { numRuns: 200, seed: 42 },
  );
  expect(exceeded).toBeGreaterThan(0);
  expect(emptySkipped).toBeGreaterThan(0);
  expect(batches).toBeGreaterThan(0);
  expect([...states].sort()).toEqual([
    "Completed",
    "Failed",
    "Pending",
    "Running",
    "Skipped",
    "Stopped",
    "Stopping",
  ]);
});
