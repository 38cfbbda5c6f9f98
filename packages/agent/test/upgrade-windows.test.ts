import { createSimulatedCluster } from "@flotilla/agent";
import {
  checkWindow,
  mulberry32,
  parseSimulatedCluster,
  upgradeScope,
} from "@flotilla/agent/testing";
import { createManualClock } from "@flotilla/node/testing";
import { parseMaintenance, type Maintenance } from "@flotilla/core";
import { describe, expect, it } from "vitest";

const at = (iso: string): number => Date.parse(iso);

function maintenance(raw: unknown): Maintenance {
  const parsed = parseMaintenance(raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

const nightly = maintenance({
  kubernetes: {
    schedule: { daily: null },
    startTime: "02:00",
    durationHours: 4,
  },
});

describe("checkWindow", () => {
  it("lets work start inside the window and with no window at all", () => {
    expect(
      checkWindow(nightly, "kubernetes", at("2025-01-01T03:00:00Z")),
    ).toBeUndefined();
    expect(
      checkWindow(nightly, "nodeImage", at("2025-01-01T12:00:00Z")),
    ).toBeUndefined();
    expect(
      checkWindow(undefined, "kubernetes", at("2025-01-01T12:00:00Z")),
    ).toBeUndefined();
  });

  it("holds work outside the window until the next opening", () => {
    expect(
      checkWindow(nightly, "kubernetes", at("2025-01-01T12:00:00Z")),
    ).toEqual({
      reason: "MaintenanceWindow",
      message:
        "Maintenance window for kubernetes closed until 2025-01-02T02:00:00Z",
      pendingUntilMs: at("2025-01-02T02:00:00Z"),
    });
  });

  it("names a freeze and its reason, and waits for the first opening after it", () => {
    const frozen = maintenance({
      kubernetes: {
        schedule: { daily: null },
        startTime: "02:00",
        durationHours: 4,
      },
      freezes: [
        { start: "2025-01-01", end: "2025-01-03", reason: "release week" },
      ],
    });
    expect(
      checkWindow(frozen, "kubernetes", at("2025-01-01T03:00:00Z")),
    ).toEqual({
      reason: "MaintenanceWindow",
      message:
        'Maintenance for kubernetes frozen ("release week") until 2025-01-04T02:00:00Z',
      pendingUntilMs: at("2025-01-04T02:00:00Z"),
    });
  });

  it("says so when no opening is in sight", () => {
    const forever = maintenance({
      freezes: [{ start: "2025-01-01", end: "2030-12-31" }],
    });
    const hold = checkWindow(forever, "workloads", at("2025-06-01T00:00:00Z"));
    expect(hold?.pendingUntilMs).toBeUndefined();
    expect(hold?.message).toBe(
      "Maintenance for workloads frozen; no opening in sight",
    );
  });

  it("maps upgrade types to the scope they honour (docs/semantics.md#upgrades)", () => {
    expect(upgradeScope("Full")).toBe("kubernetes");
    expect(upgradeScope("ControlPlaneOnly")).toBe("kubernetes");
    expect(upgradeScope("NodeImageOnly")).toBe("nodeImage");
  });
});

describe("the simulated driver and the owner's window", () => {
  it("refuses to start outside the window, answering Pending with the opening, and starts once it opens", async () => {
    const parsed = parseSimulatedCluster({
      name: "sim-1",
      kubernetesVersion: "1.30.5",
      upgradeDuration: { fixedSeconds: 60 },
      maintenance: {
        nodeImage: {
          schedule: { daily: null },
          startTime: "02:00",
          durationHours: 4,
        },
      },
      nodePools: [{ name: "p", imageFamily: "ubuntu", imageVersion: "1" }],
    });
    if (!parsed.ok) throw new Error("bad config");
    const clock = createManualClock(at("2025-01-01T00:00:00Z"));
    const cluster = createSimulatedCluster(parsed.value, {
      clock,
      random: mulberry32(1),
    });
    await cluster.start();
    const request = {
      run: "images",
      type: "NodeImageOnly" as const,
      target: { nodeImages: [{ pool: "p", from: "1", to: "2" }] },
    };
    expect(await cluster.upgrades.start(request)).toEqual({
      type: "Pending",
      reason: "MaintenanceWindow",
      message:
        "Maintenance window for nodeImage closed until 2025-01-01T02:00:00Z",
      pendingUntilMs: at("2025-01-01T02:00:00Z"),
    });
    expect(clock.pending()).toBe(0);
    expect((await cluster.upgrades.current()).nodePools[0]?.imageVersion).toBe(
      "1",
    );
    // A Kubernetes upgrade honours the kubernetes scope, which has no window here.
    const cp = cluster.upgrades.start({
      run: "cp",
      type: "ControlPlaneOnly",
      target: { kubernetesVersion: "1.31.0" },
    });
    await clock.advance(60_000);
    expect((await cp).type).toBe("Succeeded");
    await clock.advance(at("2025-01-01T02:00:00Z") - clock.now());
    const started = cluster.upgrades.start(request);
    await clock.advance(60_000);
    expect((await started).type).toBe("Succeeded");
  });
});
