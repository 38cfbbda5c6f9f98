/**
 * Property tests of operator actions in simulations: whatever actions a scenario takes, at
 * whatever times, the simulator only ever asks the engine, so the engine's guarantees hold in the
 * timeline: no group has more members in flight than its concurrency, nothing starts while the run
 * is stopping, stopped or failed, every member's final state is the last state the timeline gave
 * it, and the same scenario always gives the same output.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SimulationOutput } from "../src/preview-types.js";
import { simulated, upgradeScenario } from "./simulation-fixtures.js";

const MEMBERS = ["canary-1", "prod-1", "prod-2", "prod-3", "prod-4"];
const CONCURRENCY: Readonly<Record<string, number>> = { canary: 1, prod: 2 };

const at = fc.integer({ min: 0, max: 240 }).map((m) => `+${String(m)}m`);
const member = fc.constantFrom(...MEMBERS);
const action = fc.oneof(
  fc.record({ at, action: fc.constantFrom("stop", "start") }),
  fc.record({
    at,
    action: fc.constant("skip"),
    targets: fc.array(
      fc.oneof(
        member.map((m) => `Member:${m}`),
        fc.constantFrom(
          "Group:canary",
          "Group:prod",
          "Stage:canary",
          "Stage:prod",
        ),
      ),
      { minLength: 1, maxLength: 2 },
    ),
  }),
  fc.record({ at, action: fc.constant("retry") }),
  fc.record({
    at,
    action: fc.constant("retry"),
    members: fc.uniqueArray(member, { minLength: 1, maxLength: 2 }),
  }),
);
const scenario = fc
  .record({
    actions: fc.array(action, { maxLength: 8 }),
    // Each member leaves at most once.
    leaves: fc.uniqueArray(fc.record({ cluster: member, at }), {
      maxLength: 2,
      selector: (l) => l.cluster,
    }),
    failing: fc.subarray(MEMBERS),
    failAttempts: fc.integer({ min: 1, max: 2 }),
  })
  .map(({ actions, leaves, failing, failAttempts }) => ({
    ...upgradeScenario,
    clusters: Object.fromEntries(
      failing.map((m) => [m, { failAttempts, failAfterSeconds: 300 }]),
    ),
    actions: [
      ...actions,
      ...leaves.map((l) => ({ at: l.at, action: "leave", cluster: l.cluster })),
    ],
    until: "+2d",
  }));

function checkTimeline(out: SimulationOutput): void {
  const state = new Map<string, string>();
  const groupOf = new Map<string, string>();
  let runState = "NotStarted";
  for (const e of out.timeline) {
    if (e.type === "run" && e.to !== undefined) runState = e.to;
    if (e.cluster === undefined || e.to === undefined || e.from === undefined)
      continue;
    if (e.to === "Running")
      // The engine starts nobody while the run winds down or rests.
      expect(["Stopping", "Stopped", "Failed"]).not.toContain(runState);
    state.set(e.cluster, e.to);
    if (e.group !== undefined) groupOf.set(e.cluster, e.group);
    for (const [group, limit] of Object.entries(CONCURRENCY)) {
      const inFlight = [...state].filter(
        ([name, s]) => s === "Running" && groupOf.get(name) === group,
      ).length;
      expect(inFlight).toBeLessThanOrEqual(limit);
    }
  }
  for (const wave of out.waves)
    for (const group of wave.groups)
      for (const m of group.members) {
        const last = state.get(m.name);
        if (last !== undefined) expect(m.state).toBe(last);
      }
}

describe("operator actions at random times", () => {
  it("keep the engine's concurrency and stop guarantees, and the final states match the timeline", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        checkTimeline(simulated(s));
      }),
      { numRuns: 150 },
    );
  });

  it("give the same output for the same scenario, field for field", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        expect(JSON.stringify(simulated(s))).toBe(JSON.stringify(simulated(s)));
      }),
      { numRuns: 50 },
    );
  });
});
