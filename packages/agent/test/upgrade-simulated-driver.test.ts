import {
  createSimulatedCluster,
  type UpgradeProgress,
  type UpgradeRequest,
} from "@flotilla/agent";
import { mulberry32, parseSimulatedCluster } from "@flotilla/agent/testing";
import { createManualClock } from "@flotilla/node/testing";
import { describe, expect, it } from "vitest";

const POOLS = [
  { name: "system", imageFamily: "ubuntu-22.04", imageVersion: "2025.01.01" },
  { name: "user", imageFamily: "ubuntu-22.04", imageVersion: "2025.01.01" },
];

async function simulated(raw: Record<string, unknown> = {}, seed = 1) {
  const parsed = parseSimulatedCluster({
    name: "sim-1",
    kubernetesVersion: "1.30.5",
    nodePools: POOLS,
    upgradeDuration: { fixedSeconds: 60 },
    ...raw,
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const clock = createManualClock(Date.UTC(2025, 0, 1, 0, 0));
  const cluster = createSimulatedCluster(parsed.value, {
    clock,
    random: mulberry32(seed),
  });
  await cluster.start();
  return { clock, cluster, driver: cluster.upgrades };
}

const full = (version = "1.31.2"): UpgradeRequest => ({
  run: "upgrade-1",
  type: "Full",
  target: {
    kubernetesVersion: version,
    nodeImages: POOLS.map((p) => ({
      pool: p.name,
      from: p.imageVersion,
      to: "2025.02.01",
    })),
  },
});

describe("the simulated upgrade driver", () => {
  it("takes the configured duration, reports rising progress, and current() shows the new versions", async () => {
    const { clock, driver, cluster } = await simulated();
    const progress: UpgradeProgress[] = [];
    const outcome = driver.start(full(), {
      onProgress: (p) => progress.push(p),
    });
    let settled = false;
    void outcome.then(() => (settled = true));
    await clock.advance(59_999);
    expect(settled).toBe(false);
    expect((await driver.current()).kubernetesVersion).toBe("1.30.5");
    await clock.advance(1);
    expect(await outcome).toMatchObject({ type: "Succeeded" });
    expect(progress.map((p) => p.percent)).toEqual([0, 33, 66, 100]);
    expect(progress[0]?.message).toBe("Upgrading control plane to 1.31.2");
    expect(await driver.current()).toEqual({
      kubernetesVersion: "1.31.2",
      nodePools: POOLS.map((p) => ({ ...p, imageVersion: "2025.02.01" })),
    });
    expect((await cluster.facts()).kubernetesVersion).toBe("1.31.2");
  });

  it("upgrades only the control plane for ControlPlaneOnly and pins the kubelets where they were", async () => {
    const { clock, driver } = await simulated();
    const outcome = driver.start({
      run: "r",
      type: "ControlPlaneOnly",
      target: { kubernetesVersion: "1.31.0" },
    });
    await clock.advance(60_000);
    expect(await outcome).toMatchObject({
      type: "Succeeded",
      facts: {
        kubernetesVersion: "1.31.0",
        nodePools: POOLS.map((p) => ({ ...p, kubernetesVersion: "1.30.5" })),
      },
    });
  });

  it("changes only images for NodeImageOnly", async () => {
    const { clock, driver } = await simulated();
    const outcome = driver.start({
      run: "r",
      type: "NodeImageOnly",
      target: {
        nodeImages: [{ pool: "user", from: "2025.01.01", to: "2025.03.01" }],
      },
    });
    await clock.advance(60_000);
    await outcome;
    expect(await driver.current()).toEqual({
      kubernetesVersion: "1.30.5",
      nodePools: [POOLS[0], { ...POOLS[1], imageVersion: "2025.03.01" }],
    });
  });

  it("fails a type it does not support with reason Unsupported, touching nothing", async () => {
    const { driver, clock } = await simulated({
      upgradeTypes: ["Full", "ControlPlaneOnly"],
    });
    expect(driver.supports("NodeImageOnly")).toBe(false);
    expect(driver.supports("Full")).toBe(true);
    const outcome = await driver.start({
      run: "r",
      type: "NodeImageOnly",
      target: { nodeImages: [] },
    });
    expect(outcome).toEqual({
      type: "Failed",
      reason: "Unsupported",
      message:
        'Cannot upgrade cluster "sim-1" for run "r": NodeImageOnly upgrades are not supported (supported: Full, ControlPlaneOnly)',
    });
    expect(clock.pending()).toBe(0);
  });

  it("fails upgrades to a version listed in failures.versions, leaving the versions unchanged", async () => {
    const { clock, driver } = await simulated({
      failures: { versions: ["v1.31.2"] },
    });
    const failing = driver.start(full("1.31.2"));
    await clock.advance(60_000);
    const outcome = await failing;
    expect(outcome).toMatchObject({ type: "Failed", reason: "UpgradeFailed" });
    expect(outcome.message).toContain("failures.versions lists 1.31.2");
    expect((await driver.current()).kubernetesVersion).toBe("1.30.5");
    const other = driver.start(full("1.31.3"));
    await clock.advance(60_000);
    expect(await other).toMatchObject({ type: "Succeeded" });
  });

  it("fails every upgrade at failures.upgradeRate 1 and none at 0", async () => {
    for (const [rate, type] of [
      [1, "Failed"],
      [0, "Succeeded"],
    ] as const) {
      const { clock, driver } = await simulated({
        failures: { upgradeRate: rate },
      });
      const outcome = driver.start(full());
      await clock.advance(60_000);
      expect((await outcome).type).toBe(type);
    }
  });

  it.each([
    [
      "a downgrade",
      "1.29.9",
      /newer than 1.29.9; Kubernetes does not downgrade/,
    ],
    ["a skipped minor", "1.32.0", /skips a minor version/],
  ])("refuses %s with VersionSkew", async (_, version, message) => {
    const { driver } = await simulated();
    const outcome = await driver.start(full(version));
    expect(outcome).toMatchObject({
      type: "Failed",
      reason: "VersionSkew",
      message: expect.stringMatching(message),
    });
  });

  it.each([
    ["no version", { nodeImages: [] }],
    [
      "an unknown pool",
      {
        kubernetesVersion: "1.31.2",
        nodeImages: [{ pool: "gpu", from: "a", to: "b" }],
      },
    ],
  ])("refuses a target with %s as InvalidTarget", async (_, target) => {
    const { driver } = await simulated();
    expect(
      await driver.start({ run: "r", type: "Full", target }),
    ).toMatchObject({
      type: "Failed",
      reason: "InvalidTarget",
    });
  });

  it("answers Busy while another upgrade is in flight", async () => {
    const { clock, driver } = await simulated();
    const first = driver.start(full());
    expect(await driver.start({ ...full(), run: "other" })).toMatchObject({
      type: "Failed",
      reason: "Busy",
      message: expect.stringContaining('run "upgrade-1" is upgrading it'),
    });
    await clock.advance(60_000);
    await first;
  });

  it("succeeds at once, whatever the window, when already at the target", async () => {
    const { driver, clock } = await simulated({
      maintenance: {
        kubernetes: {
          schedule: { daily: null },
          startTime: "02:00",
          durationHours: 4,
        },
      },
    });
    const outcome = await driver.start({
      run: "r",
      type: "ControlPlaneOnly",
      target: { kubernetesVersion: "1.30.5" },
    });
    expect(outcome).toMatchObject({
      type: "Succeeded",
      message: "Already at the target",
    });
    expect(clock.pending()).toBe(0);
  });

  it("stops cleanly when its signal aborts: rejects with the reason, nothing changed, no timers, not busy", async () => {
    const { clock, driver } = await simulated();
    const controller = new AbortController();
    const upgrading = driver.start(full(), { signal: controller.signal });
    await clock.advance(30_000);
    controller.abort(new Error("intent withdrawn"));
    await expect(upgrading).rejects.toThrow("intent withdrawn");
    expect((await driver.current()).kubernetesVersion).toBe("1.30.5");
    expect(clock.pending()).toBe(0);
    const again = driver.start(full());
    await clock.advance(60_000);
    expect((await again).type).toBe("Succeeded");
  });

  it("rejects an upgrade in flight when the cluster stops", async () => {
    const { clock, driver, cluster } = await simulated();
    const upgrading = driver.start(full());
    await clock.advance(1_000);
    await cluster.stop();
    await expect(upgrading).rejects.toMatchObject({ code: "unavailable" });
  });
});
