/**
 * Concurrent admin updates against the real hub process on real NATS JetStream: an update without
 * an expected revision (0) applies to whatever is stored, however many callers race, and an update
 * with a stale expected revision is refused with FAILED_PRECONDITION, as admin.proto promises.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callUnary } from "@flotilla/protocol";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;
const CALLERS = 20;
const keys = Array.from({ length: CALLERS }, (_, i) => `k${String(i)}`);

beforeAll(async () => {
  e2e = await startE2E();
  await e2e.startAgents(
    "fleet",
    fleetFile([clusters("c-", 1, { env: "dev" })]),
  );
  await e2e.connected(1);
});

afterAll(async () => {
  await e2e.stop();
});

const strategyJson = (stage: string): string =>
  JSON.stringify({
    stages: [{ name: stage, memberSelector: { byLabel: "env=dev" } }],
  });

describe("concurrent admin updates without an expected revision", () => {
  it(`lands all ${String(CALLERS)} concurrent LabelCluster calls, each with its own label`, async () => {
    const [name] = (
      await callUnary(e2e.admin, "listClusters", { pageSize: 10 })
    ).clusters.map((c) => c.name);
    if (name === undefined) throw new Error("no cluster");
    const results = await Promise.allSettled(
      keys.map((key) =>
        callUnary(e2e.admin, "labelCluster", {
          name,
          setLabels: { [key]: "yes" },
          expectedRevision: 0,
          reason: "e2e",
        }),
      ),
    );
    expect(
      results.flatMap((r) =>
        r.status === "rejected" ? [String(r.reason)] : [],
      ),
    ).toEqual([]);
    const { cluster } = await callUnary(e2e.admin, "getCluster", { name });
    for (const key of keys) expect(cluster?.labels[key]).toBe("yes");
    expect(cluster?.labels["env"]).toBe("dev");
  });

  it("refuses LabelCluster with a stale non-zero expected revision", async () => {
    const [first] = (
      await callUnary(e2e.admin, "listClusters", { pageSize: 10 })
    ).clusters;
    if (first === undefined) throw new Error("no cluster");
    await callUnary(e2e.admin, "labelCluster", {
      name: first.name,
      setLabels: { fresh: "1" },
      reason: "e2e",
    });
    await expect(
      callUnary(e2e.admin, "labelCluster", {
        name: first.name,
        setLabels: { stale: "1" },
        expectedRevision: first.revision,
        reason: "e2e",
      }),
    ).rejects.toMatchObject({ code: "failed_precondition" });
    const { cluster } = await callUnary(e2e.admin, "getCluster", {
      name: first.name,
    });
    expect(cluster?.labels["stale"]).toBeUndefined();
  });

  it(`lands all ${String(CALLERS)} concurrent UpdateClusterGroup calls; a stale revision is refused`, async () => {
    const created = await callUnary(e2e.admin, "createClusterGroup", {
      group: { name: "g", selector: "env=dev" },
      reason: "e2e",
    });
    const results = await Promise.allSettled(
      keys.map((key) =>
        callUnary(e2e.admin, "updateClusterGroup", {
          group: { name: "g", selector: "env=dev", labels: { [key]: "yes" } },
          expectedRevision: 0,
          reason: "e2e",
        }),
      ),
    );
    expect(
      results.flatMap((r) =>
        r.status === "rejected" ? [String(r.reason)] : [],
      ),
    ).toEqual([]);
    const { group } = await callUnary(e2e.admin, "getClusterGroup", {
      name: "g",
    });
    expect(keys).toContain(Object.keys(group?.labels ?? {})[0]);
    await expect(
      callUnary(e2e.admin, "updateClusterGroup", {
        group: { name: "g", selector: "env=dev" },
        expectedRevision: created.group?.revision ?? 0,
        reason: "e2e",
      }),
    ).rejects.toMatchObject({ code: "failed_precondition" });
  });

  it(`lands all ${String(CALLERS)} concurrent UpdateUpdateStrategy calls; a stale revision is refused`, async () => {
    const created = await callUnary(e2e.admin, "createUpdateStrategy", {
      name: "s",
      strategyJson: strategyJson("first"),
      reason: "e2e",
    });
    const results = await Promise.allSettled(
      keys.map((key) =>
        callUnary(e2e.admin, "updateUpdateStrategy", {
          name: "s",
          strategyJson: strategyJson(key),
          expectedRevision: 0,
          reason: "e2e",
        }),
      ),
    );
    expect(
      results.flatMap((r) =>
        r.status === "rejected" ? [String(r.reason)] : [],
      ),
    ).toEqual([]);
    await expect(
      callUnary(e2e.admin, "updateUpdateStrategy", {
        name: "s",
        strategyJson: strategyJson("late"),
        expectedRevision: created.strategy?.revision ?? 0,
        reason: "e2e",
      }),
    ).rejects.toMatchObject({ code: "failed_precondition" });
  });
});
