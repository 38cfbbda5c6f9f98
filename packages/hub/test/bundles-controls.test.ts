// Bundle controls that change who gets what without a new revision: pause and resume
// (docs/semantics.md#pausing-a-bundle).
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import {
  applyAndSettle,
  bundleSpec,
  clusters,
  holding,
  reportReady,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

describe("pause and resume", () => {
  test("a paused bundle keeps its revision, releases no new one, and clusters at the old one stay", async () => {
    await using h = await startHarness(clusters(3));
    const r1 = await applyAndSettle(h);
    await reportReady(h, holding(h, r1), r1);

    const paused = await h.manager.setPaused("web", true, "freeze");
    expect(paused.changed).toBe(true);
    expect(paused.bundle.record).toMatchObject({ paused: true, revision: r1 });
    const stored = await h.store.get(BUNDLES, "web");
    expect(stored?.value).toMatchObject({ paused: true, revision: r1 });

    // A new revision applied while paused: the fleet.yaml's paused is the spec, so it must say so.
    const r2 = await applyAndSettle(
      h,
      bundleSpec({ version: "2", paused: true }),
    );
    h.fireInterval();
    await h.manager.idle();
    expect(holding(h, r2)).toEqual([]);
    expect(holding(h, r1)).toEqual(["c-00", "c-01", "c-02"]);
    const status = await h.manager.get("web");
    expect(status.summary.record.paused).toBe(true);
    expect(status.clusters[0]).toMatchObject({
      state: "OutOfSync",
      held: "Paused",
      releasedRevision: r1,
    });

    const again = await h.manager.setPaused("web", true, "twice");
    expect(again.changed).toBe(false);

    const resumed = await h.manager.setPaused("web", false, "go");
    expect(resumed).toMatchObject({ changed: true });
    expect(resumed.bundle.record).toMatchObject({
      paused: false,
      revision: r2,
    });
    await h.manager.idle();
    expect(holding(h, r2)).not.toEqual([]);
  });

  test("pausing does not make a new revision, and apply without paused resumes (the fleet.yaml is the spec)", async () => {
    await using h = await startHarness(clusters(1));
    const r1 = await applyAndSettle(h);
    await h.manager.setPaused("web", true, "hold");
    const { bundle, changed } = await h.manager.apply(bundleSpec(), "re-apply");
    expect(changed).toBe(false);
    expect(bundle.record).toMatchObject({ paused: false, revision: r1 });
  });

  test("pausing a bundle that does not exist is NOT_FOUND and stores nothing", async () => {
    await using h = await startHarness(clusters(1));
    const error = await h.manager
      .setPaused("nope", true, "x")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlotillaError);
    expect((error as FlotillaError).code).toBe("not_found");
    expect(await h.store.get(BUNDLES, "nope")).toBeUndefined();
  });

  test("pause changes the stored record, so a write by another hub replica is kept", async () => {
    await using h = await startHarness(clusters(1));
    await applyAndSettle(h);
    const entry = await h.store.get(BUNDLES, "web");
    if (entry === undefined) throw new Error("not stored");
    const strategy = JSON.stringify({ maxUnavailable: 3 });
    await h.store.put(
      BUNDLES,
      "web",
      { ...entry.value, rolloutStrategyJson: strategy },
      { expectedRevision: entry.revision },
    );
    await h.manager.setPaused("web", true, "hold");
    const stored = await h.store.get(BUNDLES, "web");
    expect(stored?.value).toMatchObject({
      paused: true,
      rolloutStrategyJson: strategy,
    });
  });
});

function forceSyncs(h: Harness): Map<string, number | undefined> {
  return new Map(
    [...h.publisher.snapshot()].map(([c, d]) => [
      c,
      d.intent.bundles["web"]?.forceSync,
    ]),
  );
}

describe("redeploy", () => {
  test("every target holding the bundle gets a grown forceSync at the same revision; --cluster only that one", async () => {
    await using h = await startHarness(clusters(2));
    const r1 = await applyAndSettle(h);
    const before = h.publisher.snapshot().get("c-00")?.intent.generation ?? 0;
    const all = await h.manager.redeploy("web", [], "restart");
    expect(all.changed).toBe(true);
    expect(all.bundle.record.revision).toBe(r1);
    await h.manager.idle();
    expect(forceSyncs(h)).toEqual(
      new Map([
        ["c-00", 1],
        ["c-01", 1],
      ]),
    );
    expect(holding(h, r1)).toEqual(["c-00", "c-01"]);
    expect(h.publisher.snapshot().get("c-00")?.intent.generation).toBe(
      before + 1,
    );

    await h.manager.redeploy("web", ["c-01"], "one");
    await h.manager.idle();
    expect(forceSyncs(h)).toEqual(
      new Map([
        ["c-00", 1],
        ["c-01", 2],
      ]),
    );
    // A report at the new generation counts for the same revision.
    await reportReady(h, ["c-00", "c-01"], r1);
    expect((await h.manager.get("web")).summary.counts.ready).toBe(2);

    // An apply of the same content keeps the counters (a redeploy is not content).
    const { changed } = await h.manager.apply(bundleSpec(), "again");
    expect(changed).toBe(false);
    await h.manager.idle();
    expect(forceSyncs(h).get("c-01")).toBe(2);
    const stored = await h.store.get(BUNDLES, "web");
    expect(stored?.value).toMatchObject({
      forceSyncGeneration: 1,
      forceSyncClusters: { "c-01": 1 },
    });
  });

  test("a cluster that is not a target, or does not hold the bundle, is INVALID_ARGUMENT and nothing is stored", async () => {
    await using h = await startHarness(clusters(1));
    await applyAndSettle(h, bundleSpec({ paused: true }));
    const entry = await h.store.get(BUNDLES, "web");
    const error = await h.manager
      .redeploy("web", ["c-00", "elsewhere", "Bad_Name", "c-00"], "x")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlotillaError);
    expect((error as FlotillaError).problems).toEqual([
      {
        path: "clusters[0]",
        message: "does not hold the bundle yet: nothing to redeploy",
        value: "c-00",
      },
      {
        path: "clusters[1]",
        message: "is not a target of the bundle",
        value: "elsewhere",
      },
      expect.objectContaining({ path: "clusters[2]", value: "Bad_Name" }),
      { path: "clusters[3]", message: "is named twice", value: "c-00" },
    ]);
    expect((await h.store.get(BUNDLES, "web"))?.revision).toBe(entry?.revision);
  });
});
