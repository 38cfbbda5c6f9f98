/**
 * A scenario `approvals` entry for a ScheduledStart gate completes it early, as an operator can;
 * without one the gate opens at its weekly time (docs/plan-and-simulate.md).
 */
import { describe, expect, it } from "vitest";
import {
  scopeChanges,
  simulated,
  upgradeScenario,
  when,
} from "./simulation-fixtures.js";

// Monday 10:00 start; prod may start on Wednesday at 02:00 UTC.
const scheduled = {
  stages: [
    { name: "canary", groups: [{ name: "canary" }] },
    {
      name: "prod",
      beforeGates: [
        {
          type: "ScheduledStart",
          scheduledStartConfiguration: {
            startDay: "Wednesday",
            startTime: "02:00",
            utcOffset: "+00:00",
          },
        },
      ],
      groups: [{ name: "prod", maxConcurrency: "4" }],
    },
  ],
};

describe("ScheduledStart gates in a simulation", () => {
  it("without an approval the gate opens at its scheduled time", () => {
    const out = simulated(upgradeScenario, scheduled);
    expect(scopeChanges(out, "gate", "stage:prod:before")).toEqual([
      ["2026-03-02T10:10:00Z", "Pending"],
      ["2026-03-04T02:00:00Z", "Completed"],
    ]);
    expect(when(out, "started", "prod-1")).toBe("2026-03-04T02:00:00Z");
  });

  it("an approvals entry given after the gate is reached completes it at that time", () => {
    const out = simulated(
      {
        ...upgradeScenario,
        approvals: [{ gate: "stage:prod:before", at: "+1h" }],
      },
      scheduled,
    );
    expect(scopeChanges(out, "gate", "stage:prod:before")).toEqual([
      ["2026-03-02T10:10:00Z", "Pending"],
      ["2026-03-02T11:00:00Z", "Completed"],
    ]);
    const completed = out.timeline.find(
      (e) => e.type === "gate" && e.to === "Completed",
    );
    expect(completed?.message).toBe(
      "Completed by simulation: scenario approval at 2026-03-02T11:00:00Z",
    );
    expect(when(out, "started", "prod-1")).toBe("2026-03-02T11:00:00Z");
    expect(out).toMatchObject({
      finalState: "Completed",
      end: "2026-03-02T11:10:00Z",
    });
  });

  it("an approvals entry given before the gate is reached completes it when it is reached", () => {
    const out = simulated(
      {
        ...upgradeScenario,
        approvals: [{ gate: "stage:prod:before", at: "+1m" }],
      },
      scheduled,
    );
    expect(scopeChanges(out, "gate", "stage:prod:before")).toEqual([
      ["2026-03-02T10:10:00Z", "Pending"],
      ["2026-03-02T10:10:00Z", "Completed"],
    ]);
    expect(when(out, "started", "prod-1")).toBe("2026-03-02T10:10:00Z");
  });

  it("autoApprove approves approval gates only: a scheduled start still waits for its time", () => {
    const out = simulated({ ...upgradeScenario, autoApprove: true }, scheduled);
    expect(scopeChanges(out, "gate", "stage:prod:before")).toEqual([
      ["2026-03-02T10:10:00Z", "Pending"],
      ["2026-03-04T02:00:00Z", "Completed"],
    ]);
  });

  it("an approval for a gate that has already completed is a warning in the timeline, not silence", () => {
    const out = simulated(
      {
        ...upgradeScenario,
        approvals: [{ gate: "stage:prod:before", at: "+1d16h05m" }],
      },
      scheduled,
    );
    const warning = out.timeline.find((e) => e.type === "warning");
    expect(warning).toMatchObject({
      at: "2026-03-04T02:05:00Z",
      gate: "stage:prod:before",
    });
    expect(warning?.message).toContain("stage:prod:before is Completed");
  });
});
