import {
  CONTROL_PLANE_LABEL,
  createSucDriver,
  type UpgradeOutcome,
} from "@flotilla/agent";
import { systemClock } from "@flotilla/node";
import type { UpgradeType } from "@flotilla/core";
import { waitFor, type KubeApiServer } from "@flotilla/testkit";
import { describe, expect, it } from "vitest";
import {
  crd,
  kubeServer,
  progressLog,
  setNode,
  testWindows,
} from "./support/kube-upgrade-fixtures.js";

const SERVER = { [CONTROL_PLANE_LABEL]: "true" };

async function cluster() {
  const { server, kubeConfig } = await kubeServer(
    ["system-upgrade"],
    [crd("upgrade.cattle.io", "Plan", "plans", ["v1"])],
  );
  setNode(server, "cp-1", "v1.30.5+k3s1", SERVER);
  setNode(server, "worker-1", "v1.30.5+k3s1");
  setNode(server, "worker-2", "v1.30.5+k3s1");
  const windows = testWindows();
  const driver = createSucDriver(
    { kubeConfig, clock: systemClock, windows },
    { distribution: "k3s", pollIntervalMs: 10, clusterName: "edge-1" },
  );
  return {
    server,
    driver,
    windows,
    [Symbol.asyncDispose]: () => server.close(),
  };
}

const request = (type: UpgradeType = "Full", kubernetesVersion = "1.31.2") => ({
  run: "upgrade-1.31",
  type,
  target: { kubernetesVersion },
});

function plan(server: KubeApiServer, name: string) {
  return server.object("Plan", "system-upgrade", name);
}

/** Plays the controller: the Plan resolved `version`, with its Complete condition. */
function planStatus(
  server: KubeApiServer,
  name: string,
  complete: "True" | "False",
  reason = "",
  message = "",
  version = "v1.31.2+k3s1",
): void {
  server.setStatus("Plan", "system-upgrade", name, {
    latestVersion: version,
    conditions: [{ type: "Complete", status: complete, reason, message }],
  });
}

const writes = (server: KubeApiServer) =>
  server
    .requests()
    .filter((r) => !["get", "list", "watch", "discovery"].includes(r.verb));

describe("system-upgrade-controller driver", () => {
  it("applies a server and an agent Plan pinned to the target release for a Full upgrade", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    const outcome = driver.start(request());
    const agent = await waitFor(() => plan(server, "agent-plan"));
    expect(plan(server, "server-plan")?.spec).toEqual({
      concurrency: 1,
      cordon: true,
      serviceAccountName: "system-upgrade",
      nodeSelector: {
        matchExpressions: [
          { key: CONTROL_PLANE_LABEL, operator: "In", values: ["true"] },
        ],
      },
      upgrade: { image: "rancher/k3s-upgrade" },
      version: "v1.31.2+k3s1",
    });
    expect(agent.spec).toMatchObject({
      nodeSelector: {
        matchExpressions: [
          { key: CONTROL_PLANE_LABEL, operator: "DoesNotExist" },
        ],
      },
      prepare: {
        image: "rancher/k3s-upgrade",
        args: ["prepare", "server-plan"],
      },
      version: "v1.31.2+k3s1",
    });
    for (const name of ["cp-1", "worker-1", "worker-2"])
      setNode(server, name, "v1.31.2+k3s1");
    planStatus(server, "server-plan", "True");
    planStatus(server, "agent-plan", "True");
    const done = await outcome;
    expect(done).toMatchObject({
      type: "Succeeded",
      facts: { kubernetesVersion: "1.31.2" },
    });
  });

  it("reports upgraded nodes over all nodes and waits for every Plan to be Complete", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    const log = progressLog();
    let result: UpgradeOutcome | undefined;
    void driver
      .start(request(), { onProgress: log.onProgress })
      .then((o) => (result = o));
    await waitFor(() => log.reports.at(-1)?.message.startsWith("0 of 3"));
    setNode(server, "cp-1", "v1.31.2+k3s1");
    await waitFor(() => log.reports.at(-1)?.percent === 33);
    setNode(server, "worker-1", "v1.31.2+k3s1");
    await waitFor(() => log.reports.at(-1)?.percent === 66);
    setNode(server, "worker-2", "v1.31.2+k3s1");
    await waitFor(() =>
      log.reports.at(-1)?.message.includes('Plan "server-plan" to be Complete'),
    );
    expect(result).toBeUndefined();
    // A Complete from the previous release does not count.
    planStatus(server, "server-plan", "True", "", "", "v1.30.5+k3s1");
    planStatus(server, "agent-plan", "True");
    await waitFor(() => plan(server, "server-plan")?.status !== undefined);
    expect(result).toBeUndefined();
    planStatus(server, "server-plan", "True");
    await waitFor(() => result);
    expect(result?.type).toBe("Succeeded");
    const percents = [...new Set(log.reports.map((r) => r.percent))];
    expect(percents).toEqual([0, 33, 66, 99]);
  });

  it("upgrades only the server Plan's nodes for ControlPlaneOnly", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    const outcome = driver.start(request("ControlPlaneOnly"));
    await waitFor(() => plan(server, "server-plan"));
    setNode(server, "cp-1", "v1.31.2+k3s1");
    planStatus(server, "server-plan", "True");
    const done = await outcome;
    expect(done.type).toBe("Succeeded");
    expect(plan(server, "agent-plan")).toBeUndefined();
    if (done.type === "Succeeded")
      expect(done.facts.nodePools).toContainEqual(
        expect.objectContaining({ name: "agent", kubernetesVersion: "1.30.5" }),
      );
  });

  it("answers Busy to a second run, and a start after an abort follows the same Plans", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    const abort = new AbortController();
    const first = driver.start(request(), { signal: abort.signal });
    await waitFor(() => plan(server, "agent-plan"));
    expect(await driver.start({ ...request(), run: "other" })).toMatchObject({
      type: "Failed",
      reason: "Busy",
      message: expect.stringContaining(
        'run "upgrade-1.31" is upgrading it',
      ) as string,
    });
    abort.abort(new Error("agent stopping"));
    await expect(first).rejects.toThrow("agent stopping");
    const generation = (
      plan(server, "server-plan")?.metadata as { generation: number }
    ).generation;
    const applied = writes(server).length;
    const again = driver.start(request());
    await waitFor(() => writes(server).length === applied + 2);
    for (const name of ["cp-1", "worker-1", "worker-2"])
      setNode(server, name, "v1.31.2+k3s1");
    planStatus(server, "server-plan", "True");
    planStatus(server, "agent-plan", "True");
    expect((await again).type).toBe("Succeeded");
    // Re-applying the same Plan changed nothing: the controller was not asked to start over.
    expect(
      (plan(server, "server-plan")?.metadata as { generation: number })
        .generation,
    ).toBe(generation);
  });

  it("ends Failed with the Plan's reason when a job fails", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    const outcome = driver.start(request());
    await waitFor(() => plan(server, "agent-plan"));
    planStatus(
      server,
      "server-plan",
      "False",
      "JobFailed",
      "Job system-upgrade/apply-server-plan failed on Node cp-1: BackoffLimitExceeded",
    );
    expect(await outcome).toEqual({
      type: "Failed",
      reason: "UpgradeFailed",
      message: expect.stringContaining(
        'Plan "server-plan" failed: Job system-upgrade/apply-server-plan failed on Node cp-1',
      ) as string,
    });
  });

  it("ends Failed when the nodes do not reach the target before the timeout", async () => {
    await using k = await kubeServer(
      ["system-upgrade"],
      [crd("upgrade.cattle.io", "Plan", "plans", ["v1"])],
    );
    const { server, kubeConfig } = k;
    setNode(server, "cp-1", "v1.30.5+rke2r1", SERVER);
    const driver = createSucDriver(
      { kubeConfig, clock: systemClock, windows: testWindows() },
      { distribution: "rke2", pollIntervalMs: 10, timeoutMs: 50 },
    );
    const done = await driver.start(request("ControlPlaneOnly"));
    expect(done).toMatchObject({ type: "Failed", reason: "UpgradeFailed" });
    expect(done.type === "Failed" && done.message).toMatch(
      /timed out after 50ms \(0 of 1 node\(s\) at 1.31.2/,
    );
    expect(plan(server, "server-plan")?.spec).toMatchObject({
      upgrade: { image: "rancher/rke2-upgrade" },
      version: "v1.31.2+rke2r1",
    });
  });

  it("refuses NodeImageOnly, bad targets and version skew without writing anything", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    expect(driver.supports("NodeImageOnly")).toBe(false);
    expect(
      await driver.start({
        run: "images",
        type: "NodeImageOnly",
        target: {
          nodeImages: [{ pool: "agent", from: "2024.1", to: "2025.1" }],
        },
      }),
    ).toMatchObject({
      type: "Failed",
      reason: "Unsupported",
      message: expect.stringContaining(
        "NodeImageOnly upgrades are not supported by the system-upgrade-controller driver",
      ) as string,
    });
    expect(await driver.start(request("Full", "1.31"))).toMatchObject({
      reason: "InvalidTarget",
    });
    expect(await driver.start(request("Full", "1.32.0"))).toMatchObject({
      reason: "VersionSkew",
    });
    expect(await driver.start(request("Full", "1.29.9"))).toMatchObject({
      reason: "VersionSkew",
    });
    expect(writes(server)).toEqual([]);
  });

  it("answers Pending with the next opening when the window is closed, and Succeeded when already at the target", async () => {
    await using c = await cluster();
    const { server, driver, windows } = c;
    windows.set({
      freezes: [
        { start: "2000-01-01", end: "2999-12-31", reason: "peak season" },
      ],
    });
    expect(await driver.start(request())).toMatchObject({
      type: "Pending",
      reason: "MaintenanceWindow",
      message: expect.stringContaining('("peak season")') as string,
    });
    expect(await driver.start(request("Full", "1.30.5"))).toMatchObject({
      type: "Succeeded",
      message: "Already at the target",
    });
    expect(writes(server)).toEqual([]);
  });

  it("reads the control plane version from server nodes and pools by role", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    setNode(server, "worker-2", "v1.29.8+k3s1");
    expect(await driver.current()).toEqual({
      kubernetesVersion: "1.30.5",
      nodePools: [
        {
          name: "server",
          imageFamily: "Ubuntu 24.04 LTS",
          imageVersion: "6.8.0-45-generic",
        },
        {
          name: "agent",
          imageFamily: "Ubuntu 24.04 LTS",
          imageVersion: "6.8.0-45-generic",
          kubernetesVersion: "1.29.8",
        },
      ],
    });
  });
});

describe("system-upgrade-controller driver: the version catalogue", () => {
  it("offers the release each channel Plan resolved, without the distribution suffix", async () => {
    await using c = await cluster();
    const { server, driver } = c;
    const facts = await driver.current();
    expect(await driver.catalogue?.(facts)).toBeUndefined();
    server.put({
      apiVersion: "upgrade.cattle.io/v1",
      kind: "Plan",
      metadata: { name: "stable-channel", namespace: "system-upgrade" },
      spec: {
        channel: "https://update.k3s.io/v1-release/channels/stable",
        upgrade: { image: "rancher/k3s-upgrade" },
      },
    });
    // Not resolved yet: a channel, but no version.
    expect((await driver.catalogue?.(facts))?.kubernetes).toEqual([]);
    server.setStatus("Plan", "system-upgrade", "stable-channel", {
      latestVersion: "v1.31.4+k3s1",
    });
    expect(await driver.catalogue?.(facts)).toEqual({
      kubernetes: [{ version: "1.31.4" }],
      nodePools: facts.nodePools.map((p) => ({
        pool: p.name,
        imageVersions: [],
      })),
    });
  });
});
