// Bundle controls that change who gets what without a new revision: pause and resume
// (docs/semantics.md#pausing-a-bundle).
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import {
  bundleSpec,
  clusters,
  holding,
  reportReady,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

async function applyAndSettle(
  h: Harness,
  spec = bundleSpec(),
): Promise<string> {
  const { bundle } = await h.manager.apply(spec, "test");
  await h.manager.idle();
  return bundle.record.revision;
}

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
