import { describe, expect, it } from "vitest";
import {
  progressLine,
  renderSimulation,
  stateCounts,
} from "../src/render/simulation-table.js";
import { plainOptions, stagedSimulation } from "./fixtures.js";

const members = (
  states: Record<string, number>,
): { name: string; state: string }[] =>
  Object.entries(states).flatMap(([state, n]) =>
    Array.from({ length: n }, (_, i) => ({
      name: `${state}-${String(i)}`,
      state,
    })),
  );

describe("progressLine", () => {
  it("shows a bar, succeeded of total, then the other states worst first", () => {
    const line = progressLine(
      members({ NotStarted: 17, Skipped: 2, Succeeded: 40, Failed: 1 }),
      "Succeeded",
      plainOptions(),
    );
    expect(line).toBe(
      `[${"█".repeat(13)}${"░".repeat(7)}] 40/60 Succeeded · 1 Failed · 2 Skipped · 17 NotStarted`,
    );
  });

  it("counts Ready as done in a Fleet rollout", () => {
    expect(
      progressLine(members({ Ready: 3, NotReady: 1 }), "Ready", plainOptions()),
    ).toMatch(/ 3\/4 Ready · 1 NotReady$/);
  });
});

describe("stateCounts", () => {
  it("puts unknown states after the known ones", () => {
    expect(stateCounts(members({ Weird: 1, Pending: 2 }), "Succeeded")).toEqual(
      [
        ["Pending", 2],
        ["Weird", 1],
      ],
    );
  });
});

describe("renderSimulation", () => {
  const text = renderSimulation(stagedSimulation, {
    ...plainOptions(),
    timeline: true,
  });

  it("prints the timeline with offsets and folds same-instant starts", () => {
    expect(text).toContain("  +0m     started    canary   c-001, c-002\n");
    expect(text).toContain(
      "  +1h07m  failed     staging  Upgrade failed: s-001\n",
    );
  });

  it("prints a progress line per wave with its state", () => {
    const wide = renderSimulation(stagedSimulation, {
      ...plainOptions(120),
      timeline: false,
    });
    expect(wide).toMatch(
      / {2}stage canary {3}Completed {2}\[█{20}\] 2\/2 Succeeded\n/,
    );
    expect(wide).toMatch(
      / {2}stage staging {2}Failed {5}\[█{5}░{15}\] 1\/4 Succeeded · 1 Failed · 1 Skipped · 1 NotStarted\n/,
    );
  });

  it("narrows the bars of every wave alike to fit the width, down to 8 cells", () => {
    const narrow = renderSimulation(stagedSimulation, {
      ...plainOptions(70),
      timeline: false,
    });
    const bars = [...narrow.matchAll(/\[([█░]+)\]/g)].map((m) => m[1]?.length);
    expect(bars).toEqual([8, 8]);
  });

  it("lists members that did not succeed with their reasons", () => {
    expect(text).toContain("Failed (1): s-001 (UpgradeFailed)");
    expect(text).toContain("Skipped (1): s-003 (MinorVersionSkew)");
  });

  it("leaves out a reason that only repeats the state", () => {
    const sim = structuredClone(stagedSimulation) as typeof stagedSimulation & {
      waves: { groups: { members: { reason?: string }[] }[] }[];
    };
    const failed = sim.waves[1]?.groups[0]?.members[0];
    if (failed !== undefined) failed.reason = "Failed";
    expect(
      renderSimulation(sim, { ...plainOptions(), timeline: false }),
    ).toContain("Failed (1): s-001\n");
    expect(text).toContain("Skipped (1): s-003 (MinorVersionSkew)");
  });

  it("ends with the final state, the failure count and the duration in words", () => {
    expect(text).toContain("Final state: Failed · 1 failure\n");
    expect(text).toContain(
      "Total: 6h 42m (simulated) · 2026-03-02T09:00:00.000Z → 2026-03-02T15:42:00.000Z\n",
    );
  });

  it("hides the timeline when asked", () => {
    const without = renderSimulation(stagedSimulation, {
      ...plainOptions(),
      timeline: false,
    });
    expect(without).not.toContain("Timeline:");
    expect(without).toContain("Progress:");
  });

  it("says when the rollout did not finish within the simulation", () => {
    const cut = renderSimulation(
      { ...stagedSimulation, truncated: true, durationSeconds: 14 * 86_400 },
      { ...plainOptions(), timeline: false },
    );
    expect(cut).toContain("Total: 14d (simulated; the rollout did not finish)");
  });
});
