// Bundle rollouts through the manager: Fleet's batch rule, one-at-a-time updates under
// maxUnavailable, partition gating, unreachable agents, paused bundles, retargeting and deletion.
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import {
  applyAndSettle,
  bundleSpec,
  cluster,
  clusters,
  contentKeys,
  holding,
  report,
  reportReady,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

async function stateOf(h: Harness, name: string) {
  const status = await h.manager.get("web");
  return status.clusters.find((c) => c.cluster === name);
}

describe("partitioned rollout", () => {
  test("25 clusters, maxUnavailable 5: all 25 deploy at once, then updates go while fewer than 5 are unavailable", async () => {
    await using h = await startHarness(clusters(25));
    const strategy = { maxUnavailable: 5 };
    const r1 = await applyAndSettle(h, bundleSpec({ strategy }));
    // Fleet's batch: a first deployment ignores maxUnavailable inside the batch.
    expect(holding(h, r1)).toHaveLength(25);
    await reportReady(h, holding(h, r1), r1);
    expect((await h.manager.get("web")).summary.counts.ready).toBe(25);

    const r2 = await applyAndSettle(h, bundleSpec({ strategy, version: "2" }));
    expect(r2).not.toBe(r1);
    // One at a time while fewer than 5 are unavailable: 5 go, in name order.
    expect(holding(h, r2)).toEqual(["c-00", "c-01", "c-02", "c-03", "c-04"]);
    const status = await h.manager.get("web");
    expect(status.summary.counts).toMatchObject({
      waitApplied: 5,
      outOfSync: 20,
    });
    expect(status.clusters.find((c) => c.cluster === "c-05")).toMatchObject({
      state: "OutOfSync",
      held: "MaxUnavailable",
      releasedRevision: r1,
      appliedRevision: r1,
    });

    // Applied is not Ready: still unavailable, nothing more goes.
    for (const c of ["c-00", "c-01"])
      h.manager.onStatus(c, report(h, c, r2, "Applied"));
    await h.manager.idle();
    expect(holding(h, r2)).toHaveLength(5);

    // Two become Ready: exactly two more are released.
    await reportReady(h, ["c-00", "c-01"], r2);
    expect(holding(h, r2)).toEqual([
      "c-00",
      "c-01",
      "c-02",
      "c-03",
      "c-04",
      "c-05",
      "c-06",
    ]);

    // A Ready at the old revision never counts for the new one.
    await reportReady(h, ["c-02"], r1);
    expect(holding(h, r2)).toHaveLength(7);
    expect((await stateOf(h, "c-02"))?.state).toBe("WaitApplied");

    // Everyone reports Ready as released: the rollout completes.
    for (let round = 0; round < 10 && holding(h, r2).length < 25; round++) {
      await reportReady(h, holding(h, r2), r2);
    }
    expect(holding(h, r2)).toHaveLength(25);
    await reportReady(h, holding(h, r2), r2);
    expect((await h.manager.get("web")).summary.counts.ready).toBe(25);
  });

  test("a failed apply counts as unavailable and shows the agent's error", async () => {
    await using h = await startHarness(clusters(3));
    const strategy = { maxUnavailable: 1 };
    const r1 = await applyAndSettle(h, bundleSpec({ strategy }));
    await reportReady(h, holding(h, r1), r1);
    const r2 = await applyAndSettle(h, bundleSpec({ strategy, version: "2" }));
    expect(holding(h, r2)).toEqual(["c-00"]);
    h.manager.onStatus(
      "c-00",
      report(h, "c-00", r2, "Failed", { error: "admission webhook denied" }),
    );
    await h.manager.idle();
    expect(holding(h, r2)).toEqual(["c-00"]);
    expect(await stateOf(h, "c-00")).toMatchObject({
      state: "ErrApplied",
      message: "admission webhook denied",
    });
  });

  test("manual partitions: the next partition starts only when the previous one is Ready", async () => {
    await using h = await startHarness([
      cluster("canary-1", { stage: "canary" }),
      cluster("prod-1", { stage: "prod" }),
      cluster("prod-2", { stage: "prod" }),
      cluster("stray", {}),
    ]);
    const strategy = {
      maxUnavailable: 0,
      maxUnavailablePartitions: 0,
      partitions: [
        {
          name: "canary",
          clusterSelector: { matchLabels: { stage: "canary" } },
        },
        { name: "prod", clusterSelector: { matchLabels: { stage: "prod" } } },
      ],
    };
    const r1 = await applyAndSettle(h, bundleSpec({ strategy }));
    expect(holding(h, r1)).toEqual(["canary-1"]);
    const status = await h.manager.get("web");
    expect(
      status.partitions.map((p) => [p.name, p.clusters.length, p.notReady]),
    ).toEqual([
      ["canary", 1, true],
      ["prod", 2, true],
    ]);
    expect(status.stoppedAfter).toBe("canary");
    expect(status.unassigned).toEqual(["stray"]);
    expect(status.summary.counts).toMatchObject({
      targets: 4,
      unassigned: 1,
      pending: 3,
    });
    expect(status.clusters.find((c) => c.cluster === "prod-1")).toMatchObject({
      state: "Pending",
      partition: "prod",
      held: "PartitionsNotReady",
    });

    h.manager.onStatus("canary-1", report(h, "canary-1", r1, "NotReady"));
    await h.manager.idle();
    expect(holding(h, r1)).toEqual(["canary-1"]);

    await reportReady(h, ["canary-1"], r1);
    expect(holding(h, r1)).toEqual(["canary-1", "prod-1", "prod-2"]);
    // Clusters in no partition are not deployed (docs/semantics.md#partition-forming), but are
    // listed.
    expect(h.publisher.snapshot().get("stray")).toBeUndefined();
  });

  test("an unreachable agent counts as unavailable until it is back", async () => {
    await using h = await startHarness(clusters(3));
    const strategy = { maxUnavailable: 1 };
    const r1 = await applyAndSettle(h, bundleSpec({ strategy }));
    await reportReady(h, holding(h, r1), r1);
    h.fleet.unreachable.add("c-01");
    h.manager.onFleetChanged();
    await h.manager.idle();

    const r2 = await applyAndSettle(h, bundleSpec({ strategy, version: "2" }));
    // c-01 is unavailable already, so it may be switched; no healthy cluster is touched.
    expect(holding(h, r2)).toEqual(["c-01"]);
    expect(await stateOf(h, "c-00")).toMatchObject({
      held: "MaxUnavailable",
      unreachable: false,
    });
    expect(await stateOf(h, "c-01")).toMatchObject({ unreachable: true });

    h.fleet.unreachable.delete("c-01");
    await reportReady(h, ["c-01"], r2);
    expect(holding(h, r2)).toEqual(["c-00", "c-01"]);
  });

  test("a paused bundle releases nothing until it is resumed", async () => {
    await using h = await startHarness(clusters(2));
    const r1 = await applyAndSettle(h, bundleSpec({ paused: true }));
    h.fireInterval();
    await h.manager.idle();
    expect(holding(h, r1)).toEqual([]);
    expect(await stateOf(h, "c-00")).toMatchObject({
      state: "Pending",
      held: "Paused",
      message: "bundle is paused",
    });
    await applyAndSettle(h, bundleSpec({ paused: false }));
    expect(holding(h, r1)).toEqual(["c-00", "c-01"]);
  });

  test("the interval runs passes: a cluster that joined receives the current revision", async () => {
    await using h = await startHarness(clusters(1));
    const r1 = await applyAndSettle(h);
    h.fleet.members = [...h.fleet.members, cluster("late")];
    await h.manager.idle();
    expect(holding(h, r1)).toEqual(["c-00"]);
    h.fireInterval();
    await h.manager.idle();
    expect(holding(h, r1)).toEqual(["c-00", "late"]);
  });

  test("a cluster that is no longer targeted loses the bundle from its intent", async () => {
    await using h = await startHarness([
      cluster("a", { env: "prod" }),
      cluster("b", { env: "prod" }),
    ]);
    const r1 = await applyAndSettle(
      h,
      bundleSpec({ targets: [{ clusterSelector: "env=prod" }] }),
    );
    expect(holding(h, r1)).toEqual(["a", "b"]);
    h.fleet.relabel("b", { env: "dev" });
    h.manager.onFleetChanged();
    await h.manager.idle();
    expect(holding(h, r1)).toEqual(["a"]);
    expect(h.publisher.snapshot().get("b")?.intent.bundles).toEqual({});
  });
});

describe("delete", () => {
  test("removes the bundle from every cluster's intent, then the record", async () => {
    await using h = await startHarness(clusters(3));
    const r1 = await applyAndSettle(h);
    await reportReady(h, holding(h, r1), r1);
    const generations = [...h.publisher.snapshot().values()].map(
      (p) => p.intent.generation,
    );
    await h.manager.delete("web", "retire");
    await h.manager.idle();
    for (const [i, stored] of [...h.publisher.snapshot().values()].entries()) {
      expect(stored.intent.bundles).toEqual({});
      expect(stored.intent.generation).toBe((generations[i] ?? 0) + 1);
    }
    expect(await h.store.list(BUNDLES)).toEqual([]);
    const error: unknown = await h.manager.get("web").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlotillaError);
    expect((error as FlotillaError).code).toBe("not_found");
    await expect(h.manager.delete("web", "again")).rejects.toMatchObject({
      code: "not_found",
    });
  });
});

describe("content keys", () => {
  test("every release carries the key of its content, which only that content's key opens", async () => {
    await using h = await startHarness(clusters(3));
    const r1 = await applyAndSettle(h);
    for (const stored of h.publisher.snapshot().values()) {
      const web = stored.intent.bundles.web;
      expect(web?.revision).toBe(r1);
      expect(web?.key).toBe(contentKeys.keyOf(web?.digest ?? ""));
    }
  });

  test("an intent written before content was sealed gets its key on the next pass, at the same revision", async () => {
    await using h = await startHarness(clusters(2));
    const r1 = await applyAndSettle(h);
    // As an earlier version wrote it: the same revision and digest, no key.
    const held = h.publisher.snapshot().get("c-00")?.intent.bundles.web;
    const { intent: keyless } = await h.intents.change("c-00", [
      { type: "RemoveBundle", bundle: "web" },
    ]);
    await h.publisher.publish({
      ...keyless,
      generation: keyless.generation + 1,
      bundles: {
        web: { revision: r1, digest: held?.digest ?? "" },
      },
    });
    const restarted = await h.restart();
    restarted.tick();
    await restarted.idle();
    const after = h.publisher.snapshot().get("c-00")?.intent;
    expect(after?.generation).toBe(keyless.generation + 2);
    expect(after?.bundles.web).toEqual({ ...held, revision: r1 });
  });
});
