/**
 * `flotilla simulate` for staged update runs (docs/semantics.md#offline-planning): the real engine
 * in virtual time, driven by a scenario given as the YAML-like objects the CLI reads.
 */
import { describe, expect, it } from "vitest";
import type { SimulationOutput } from "../src/preview-types.js";
import { simulate } from "../src/simulate.js";

const UBUNTU = "AKSUbuntu-2204gen2containerd";
const pools = [
  { name: "system", imageFamily: UBUNTU, imageVersion: "202602.15.0" },
];

const clusters = [
  {
    name: "canary-1",
    updateGroup: "canary",
    kubernetesVersion: "1.30.5",
    region: "westeurope",
    nodePools: pools,
  },
  ...[1, 2, 3, 4].map((i) => ({
    name: `prod-${String(i)}`,
    updateGroup: "prod",
    kubernetesVersion: "1.30.5",
    region: "westeurope",
    nodePools: pools,
  })),
  {
    name: "prod-old",
    updateGroup: "prod",
    kubernetesVersion: "1.29.9",
    region: "westeurope",
    nodePools: pools,
  },
  { name: "lab-1", kubernetesVersion: "1.30.5" },
];

const strategy = {
  stages: [
    {
      name: "canary",
      groups: [{ name: "canary" }],
      afterGates: [{ type: "Approval", displayName: "Canary healthy" }],
    },
    {
      name: "prod",
      groups: [{ name: "prod", maxConcurrency: "2", maxAllowedFailures: "1" }],
    },
  ],
};

const baseScenario = {
  start: "2026-03-02T10:00:00Z",
  kind: "upgrade",
  upgrade: {
    type: "Full",
    kubernetesVersion: "1.31.2",
    nodeImageSelection: "Latest",
  },
  available: {
    kubernetes: [{ version: "1.31.2" }],
    nodeImages: [{ family: UBUNTU, version: "202603.01.0" }],
  },
  defaults: { readyAfterSeconds: 600 },
  clusters: {
    "prod-2": { fail: true, failAfterSeconds: 120 },
    "prod-3": { offline: [{ from: "+30m", to: "+50m" }] },
  },
  approvals: [{ gate: "stage:canary:after", at: "+20m" }],
};

function run(
  scenario: Record<string, unknown>,
  strategyDoc: unknown = strategy,
): SimulationOutput {
  const result = simulate({ clusters, strategy: strategyDoc, scenario });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

const at = (
  out: SimulationOutput,
  type: string,
  cluster: string,
): string | undefined =>
  out.timeline.find((e) => e.type === type && e.cluster === cluster)?.at;
const memberOf = (out: SimulationOutput, name: string) =>
  out.waves
    .flatMap((w) => w.groups.flatMap((g) => g.members))
    .find((m) => m.name === name);

describe("simulating a staged upgrade", () => {
  it("with an approval, a failing cluster and an agent offline for a while: the timeline, final states and duration", () => {
    const out = run(baseScenario);
    expect(out).toMatchObject({
      apiVersion: "flotilla.dev/v1",
      dialect: "staged",
      start: "2026-03-02T10:00:00Z",
      end: "2026-03-02T10:50:00Z",
      durationSeconds: 3000,
      finalState: "Completed",
      failureCount: 1,
      truncated: false,
      unassigned: ["lab-1"],
    });
    // The canary goes first; prod waits for the approval at +20m.
    expect(at(out, "started", "canary-1")).toBe("2026-03-02T10:00:00Z");
    expect(at(out, "succeeded", "canary-1")).toBe("2026-03-02T10:10:00Z");
    expect(
      out.timeline.filter((e) => e.type === "gate").map((e) => [e.at, e.to]),
    ).toEqual([
      ["2026-03-02T10:10:00Z", "Pending"],
      ["2026-03-02T10:20:00Z", "Completed"],
    ]);
    expect([
      at(out, "started", "prod-1"),
      at(out, "started", "prod-2"),
    ]).toEqual(["2026-03-02T10:20:00Z", "2026-03-02T10:20:00Z"]);
    // prod-2 fails after 120 s: one failure is within the budget of 1, so its slot goes to prod-3.
    expect(at(out, "failed", "prod-2")).toBe("2026-03-02T10:22:00Z");
    expect(at(out, "started", "prod-3")).toBe("2026-03-02T10:22:00Z");
    // prod-3 finishes at +32m while its agent is offline (+30m..+50m): it reports when it is back.
    expect(at(out, "offline", "prod-3")).toBe("2026-03-02T10:30:00Z");
    expect(at(out, "succeeded", "prod-3")).toBe("2026-03-02T10:50:00Z");
    expect(at(out, "started", "prod-4")).toBe("2026-03-02T10:30:00Z");
    // A member more than one minor behind is skipped at creation, never released.
    expect(memberOf(out, "prod-old")).toMatchObject({
      state: "Skipped",
      reason: "MinorVersionSkew",
    });
    expect(memberOf(out, "prod-old")?.releasedAt).toBeUndefined();
    expect(out.waves.map((w) => [w.name, w.state, w.failureCount])).toEqual([
      ["canary", "Completed", 0],
      ["prod", "Completed", 1],
    ]);
    expect(memberOf(out, "prod-2")).toMatchObject({
      state: "Failed",
      reason: "Failed",
      releasedAt: "2026-03-02T10:20:00Z",
      finishedAt: "2026-03-02T10:22:00Z",
    });
    // Timeline entries are in time order.
    const times = out.timeline.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it("autoApprove completes every approval gate as soon as it is reached", () => {
    const out = run({
      ...baseScenario,
      approvals: undefined,
      autoApprove: true,
      clusters: {},
    });
    expect(
      out.timeline.filter((e) => e.type === "gate").map((e) => [e.at, e.to]),
    ).toEqual([
      ["2026-03-02T10:10:00Z", "Pending"],
      ["2026-03-02T10:10:00Z", "Completed"],
    ]);
    expect(at(out, "started", "prod-1")).toBe("2026-03-02T10:10:00Z");
    expect(out).toMatchObject({
      finalState: "Completed",
      failureCount: 0,
      end: "2026-03-02T10:30:00Z",
      durationSeconds: 1800,
    });
  });

  it("without an approval the run waits at the gate and stops at until, reported as not finished", () => {
    const out = run({ ...baseScenario, approvals: [], until: "+1d" });
    expect(out.finalState).toBe("Pending");
    expect(out.waves.map((w) => w.state)).toEqual(["Pending", "NotStarted"]);
    expect(out.truncated).toBe(true);
  });

  it("until truncates the simulation: nothing after it is in the timeline and the run is reported as it was", () => {
    const out = run({ ...baseScenario, until: "+25m" });
    expect(out.truncated).toBe(true);
    expect(out.finalState).toBe("Running");
    expect(
      out.timeline.every(
        (e) => Date.parse(e.at) <= Date.parse("2026-03-02T10:25:00Z"),
      ),
    ).toBe(true);
    expect(memberOf(out, "prod-1")).toMatchObject({
      state: "Running",
      releasedAt: "2026-03-02T10:20:00Z",
    });
    expect(memberOf(out, "prod-1")?.finishedAt).toBeUndefined();
  });

  it("a cluster that never becomes ready fails at the progress deadline (TimedOut), and one offline past it fails Unreachable", () => {
    const out = run({
      ...baseScenario,
      approvals: undefined,
      autoApprove: true,
      progressDeadlineSeconds: 1800,
      clusters: {
        "prod-1": { neverReady: true },
        "prod-2": { offline: [{ from: "+15m", to: "+3h" }] },
      },
    });
    expect(memberOf(out, "prod-1")).toMatchObject({
      state: "Failed",
      reason: "TimedOut",
      finishedAt: "2026-03-02T10:40:00Z",
    });
    expect(memberOf(out, "prod-2")).toMatchObject({
      state: "Failed",
      reason: "Unreachable",
      finishedAt: "2026-03-02T10:40:00Z",
    });
    // Two failures exceed the prod budget of 1: the run fails.
    expect(out).toMatchObject({ finalState: "Failed", failureCount: 2 });
    expect(memberOf(out, "prod-3")?.state).toBe("NotStarted");
  });

  it("the same inputs always give the same output, field for field", () => {
    const scenario = { ...baseScenario, autoApprove: false };
    const first = JSON.stringify(run(scenario));
    for (let i = 0; i < 3; i++)
      expect(JSON.stringify(run(scenario))).toBe(first);
  });

  it("a run waiting for a maintenance window wakes at the opening in virtual time", () => {
    const windowed = [
      {
        name: "w-1",
        updateGroup: "w",
        kubernetesVersion: "1.30.5",
        maintenance: {
          kubernetes: {
            schedule: { weekly: { dayOfWeek: "Saturday" } },
            startTime: "01:00",
            durationHours: 4,
          },
        },
      },
    ];
    const result = simulate({
      clusters: windowed,
      strategy: { stages: [{ name: "s", groups: [{ name: "w" }] }] },
      scenario: {
        start: "2026-03-02T10:00:00Z",
        kind: "upgrade",
        upgrade: { type: "ControlPlaneOnly", kubernetesVersion: "1.31.2" },
      },
    });
    expect(result.ok && result.value).toMatchObject({
      finalState: "Completed",
      end: "2026-03-07T01:01:00Z",
    });
    expect(
      result.ok &&
        result.value.timeline.find((e) => e.type === "pending")?.message,
    ).toBe(
      "Maintenance window for kubernetes closed until 2026-03-07T01:00:00Z",
    );
  });

  it("invalid inputs are reported with their source and field path", () => {
    const result = simulate({
      clusters,
      strategy: {
        stages: [{ name: "s", groups: [{ name: "g", maxConcurrency: "0%" }] }],
      },
      scenario: { ...baseScenario, clusters: { ghost: {} } },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => [p.source, p.path])).toEqual([
      ["strategy", "stages[0].groups[0].maxConcurrency"],
      ["scenario", "clusters.ghost"],
    ]);
  });
});
