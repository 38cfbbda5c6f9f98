// Revision history and rollback of a bundle (docs/semantics.md#rolling-back-a-bundle).
import { describe, expect, test } from "vitest";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import { referencedContentNames } from "../src/bundles/content-references.js";
import type { BundleManager } from "../src/bundles/bundle-manager.js";
import {
  applyAndSettle,
  bundleSpec,
  clusters,
  holding,
  refusal,
  report,
  reportReady,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

const manual = (to = "", allAtOnce = false) => ({
  to,
  allAtOnce,
  cause: "Manual" as const,
  message: "bad config",
  actor: "alice",
});

/** Applies `version` and reports every cluster Ready at it until all hold it. */
async function rollOut(h: Harness, version: string): Promise<string> {
  const revision = await applyAndSettle(
    h,
    bundleSpec({ version, strategy: { maxUnavailable: 2 } }),
  );
  // Two more rounds than needed: the last clusters released report Ready too.
  for (let i = 0; i < h.fleet.members.length / 2 + 2; i++)
    await reportReady(h, holding(h, revision), revision);
  return revision;
}

async function stored(h: Harness) {
  const entry = await h.store.get(BUNDLES, "web");
  if (entry === undefined) throw new Error("no record");
  return entry.value;
}

async function reportAll(
  manager: BundleManager,
  h: Harness,
  names: readonly string[],
  revision: string,
  phase: "Ready" | "Failed",
): Promise<void> {
  for (const n of names) manager.onStatus(n, report(h, n, revision, phase));
  await manager.idle();
}

describe("revision history", () => {
  test("a new revision pushes the previous one into the history, newest first, deduplicated, the oldest dropped past the limit", async () => {
    await using h = await startHarness(clusters(1), { revisionHistory: 2 });
    const r1 = await applyAndSettle(h, bundleSpec({ version: "1" }));
    h.nowMs += 1_000;
    const r2 = await applyAndSettle(h, bundleSpec({ version: "2" }));
    expect((await stored(h)).history?.map((e) => e.revision)).toEqual([r1]);
    h.nowMs += 1_000;
    const r3 = await applyAndSettle(h, bundleSpec({ version: "3" }));
    h.nowMs += 1_000;
    // r1 again: it leaves the history (it is current), r3 goes in.
    await applyAndSettle(h, bundleSpec({ version: "1" }));
    const record = await stored(h);
    expect(record.revision).toBe(r1);
    expect(record.history?.map((e) => e.revision)).toEqual([r3, r2]);
    expect(record.storedAtMs).toBe(h.nowMs);
    h.nowMs += 1_000;
    await applyAndSettle(h, bundleSpec({ version: "4" }));
    expect((await stored(h)).history?.map((e) => e.revision)).toEqual([r1, r3]);
    // Each entry keeps what makes it current again.
    const entry = (await stored(h)).history?.[0];
    expect(entry).toMatchObject({ revision: r1, defaultNamespace: "web" });
    expect(Object.keys(entry?.contents ?? {})).not.toEqual([]);
    expect(entry?.manifests.map((m) => m.path)).toEqual(["app.json"]);
  });

  test("a history limit of 0 keeps no earlier revision, and rollback is refused", async () => {
    await using h = await startHarness(clusters(1), { revisionHistory: 0 });
    await applyAndSettle(h, bundleSpec({ version: "1" }));
    await applyAndSettle(h, bundleSpec({ version: "2" }));
    expect((await stored(h)).history).toBeUndefined();
    const error = await refusal(h.manager.rollback("web", manual()));
    expect(error.code).toBe("failed_precondition");
    expect(error.message).toContain("keeps no earlier revision");
  });

  test("a record written before history parses as one with no earlier revision", () => {
    const old = {
      name: "web",
      namespace: "web",
      manifests: [],
      targetsJson: "",
      targetCustomizationsJson: "",
      rolloutStrategyJson: "",
      paused: false,
      revision: "abc",
      contents: {},
      createdAtMs: 1,
      updatedAtMs: 2,
    };
    expect(BUNDLES.decode(old)).toEqual(old);
  });

  test("a revision is good once a pass sees every target Ready at it", async () => {
    await using h = await startHarness(clusters(3));
    const r1 = await applyAndSettle(h, bundleSpec({ version: "1" }));
    expect((await stored(h)).readyAtMs).toBeUndefined();
    await reportReady(h, ["c-00", "c-01"], r1);
    expect((await stored(h)).readyAtMs).toBeUndefined();
    h.nowMs += 5_000;
    await reportReady(h, ["c-02"], r1);
    expect((await stored(h)).readyAtMs).toBe(h.nowMs);
    await applyAndSettle(h, bundleSpec({ version: "2" }));
    const status = await h.manager.get("web");
    expect(
      status.revisions?.map((r) => [r.current, r.readyAtMs !== undefined]),
    ).toEqual([
      [true, false],
      [false, true],
    ]);
  });

  test("the content collector keeps the content of earlier revisions", async () => {
    await using h = await startHarness(clusters(1));
    await applyAndSettle(h, bundleSpec({ version: "1" }));
    const first = await stored(h);
    await applyAndSettle(h, bundleSpec({ version: "2" }));
    const record = await stored(h);
    const names = referencedContentNames([record], [], (d) => d);
    for (const digest of Object.values(first.contents))
      expect(names).toContain(digest);
    for (const m of first.manifests) expect(names).toContain(m.digest);
    const without = referencedContentNames(
      [{ ...record, history: undefined }],
      [],
      (d) => d,
    );
    for (const digest of Object.values(first.contents))
      expect(without).not.toContain(digest);
  });
});

describe("rollback", () => {
  test("moves the holders of the bad revision back to the good one, paced by maxUnavailable", async () => {
    await using h = await startHarness(clusters(6));
    const r1 = await rollOut(h, "1");
    expect((await stored(h)).readyAtMs).toBeDefined();
    const r2 = await rollOut(h, "2");
    expect(holding(h, r2)).toHaveLength(6);
    // A revision after the good one that never became good: the default target skips it.
    const r3 = await applyAndSettle(
      h,
      bundleSpec({ version: "3", strategy: { maxUnavailable: 2 } }),
    );
    await reportAll(h.manager, h, holding(h, r3), r3, "Failed");
    expect(holding(h, r3)).toHaveLength(2);

    const result = await h.manager.rollback("web", manual());
    expect(result.bundle.record.revision).toBe(r2);
    const record = await stored(h);
    expect(record).toMatchObject({
      revision: r2,
      rolledBack: {
        from: r3,
        to: r2,
        cause: "Manual",
        message: "bad config",
        actor: "alice",
        clusters: ["c-00", "c-01"],
      },
    });
    expect(record.history?.[0]?.revision).toBe(r3);
    expect(record.history?.map((e) => e.revision)).not.toContain(r2);
    await h.manager.idle();
    // The failed clusters do not count as unavailable: both are moved at once (limit 2).
    expect(holding(h, r2)).toHaveLength(6);
    await reportReady(h, ["c-00", "c-01"], r2);
    const status = await h.manager.get("web");
    expect(status.rollbackProgress).toEqual({ back: 2, touched: 2 });

    // Now roll back to r1 explicitly, by a prefix: six holders, two at a time.
    await h.manager.rollback("web", manual(r1.slice(0, 6)));
    await h.manager.idle();
    expect(holding(h, r1)).toEqual(["c-00", "c-01"]);
    await reportReady(h, holding(h, r1), r1);
    expect(holding(h, r1)).toHaveLength(4);
    await reportReady(h, holding(h, r1), r1);
    expect(holding(h, r1)).toHaveLength(6);
    await reportReady(h, holding(h, r1), r1);
    expect((await h.manager.get("web")).rollbackProgress).toEqual({
      back: 6,
      touched: 6,
    });
    // The bad revision is not released again by later passes.
    h.fireInterval();
    await h.manager.idle();
    expect(holding(h, r2)).toEqual([]);
  });

  test("--all-at-once releases every holder in one pass", async () => {
    await using h = await startHarness(clusters(5));
    const r1 = await rollOut(h, "1");
    await rollOut(h, "2");
    await h.manager.rollback("web", manual("", true));
    await h.manager.idle();
    expect(holding(h, r1)).toHaveLength(5);
    expect((await stored(h)).rolledBack?.allAtOnce).toBe(true);
  });

  test("leaves clusters that never got the bad revision alone", async () => {
    await using h = await startHarness(clusters(4));
    const r1 = await rollOut(h, "1");
    // r2 reaches two clusters; they never become Ready, so the others stay at r1.
    const r2 = await applyAndSettle(
      h,
      bundleSpec({ version: "2", strategy: { maxUnavailable: 2 } }),
    );
    expect(holding(h, r2)).toEqual(["c-00", "c-01"]);
    const before = h.publisher.snapshot();
    await h.manager.rollback("web", manual());
    await h.manager.idle();
    const after = h.publisher.snapshot();
    for (const c of ["c-02", "c-03"])
      expect(after.get(c)?.intent.generation).toBe(
        before.get(c)?.intent.generation,
      );
    expect(holding(h, r1)).toHaveLength(4);
  });

  test("is refused, with nothing stored, for an unknown bundle, a bundle with no earlier revision, a revision not kept or the current revision", async () => {
    await using h = await startHarness(clusters(1));
    expect((await refusal(h.manager.rollback("nope", manual()))).code).toBe(
      "not_found",
    );
    const r1 = await applyAndSettle(h, bundleSpec({ version: "1" }));
    const once = await refusal(h.manager.rollback("web", manual()));
    expect(once.code).toBe("failed_precondition");
    const r2 = await applyAndSettle(h, bundleSpec({ version: "2" }));
    const entry = await h.store.get(BUNDLES, "web");

    const missing = await refusal(
      h.manager.rollback("web", manual("ffffffffff")),
    );
    expect(missing.code).toBe("invalid_argument");
    expect(missing.problems[0]).toMatchObject({
      path: "toRevision",
      value: "ffffffffff",
    });
    expect(missing.message).toContain(`revisions kept: ${r2} (current), ${r1}`);

    const current = await refusal(h.manager.rollback("web", manual(r2)));
    expect(current.message).toContain("is the current revision");

    // Nothing was stored by any refusal.
    expect((await h.store.get(BUNDLES, "web"))?.revision).toBe(entry?.revision);
  });

  test("a new apply clears the rollback and releases the bad revision again; a sync of the same revision does not", async () => {
    await using h = await startHarness(clusters(2));
    const r1 = await rollOut(h, "1");
    const r2 = await rollOut(h, "2");
    await h.manager.rollback("web", manual("", true));
    await h.manager.idle();
    await reportReady(h, holding(h, r1), r1);

    const synced = await h.manager.apply(
      bundleSpec({ version: "2", strategy: { maxUnavailable: 2 } }),
      "GitRepo repo at commit abc",
      { skipRolledBack: true },
    );
    expect(synced.changed).toBe(false);
    expect(synced.bundle.record.revision).toBe(r1);
    expect(synced.warnings.map((w) => w.code)).toContain("RolledBackRevision");
    await h.manager.idle();
    expect(holding(h, r2)).toEqual([]);
    expect((await stored(h)).rolledBack?.from).toBe(r2);

    const applied = await applyAndSettle(
      h,
      bundleSpec({ version: "2", strategy: { maxUnavailable: 2 } }),
    );
    expect(applied).toBe(r2);
    expect((await stored(h)).rolledBack).toBeUndefined();
    expect(holding(h, r2)).toHaveLength(2);
  });

  test("of a bundle a staged run drives stops the run first, then takes the bundle from it", async () => {
    const stopped: [string, string, string][] = [];
    await using h = await startHarness(clusters(2), {
      deps: {
        stopRolledBackRun: (run, revision, actor) => {
          stopped.push([run, revision, actor.reason]);
          return Promise.resolve();
        },
      },
    });
    const r1 = await applyAndSettle(h, bundleSpec({ version: "1" }));
    const r2 = await applyAndSettle(h, bundleSpec({ version: "2" }));
    await h.manager.drive("web", "roll", r2, undefined);
    await h.manager.rollback("web", manual());
    expect(stopped).toEqual([
      ["roll", r1, `bundle web rolled back to revision ${r1}: bad config`],
    ]);
    const record = await stored(h);
    expect(record.drivenBy).toBeUndefined();
    expect(record.revision).toBe(r1);
    expect(record.rolledBack).toMatchObject({ from: r2, to: r1 });
  });

  test("of a bundle a staged run drives is refused, with nothing stored, when the run cannot be stopped", async () => {
    await using h = await startHarness(clusters(2));
    await applyAndSettle(h, bundleSpec({ version: "1" }));
    const r2 = await applyAndSettle(h, bundleSpec({ version: "2" }));
    await h.manager.drive("web", "roll", r2, undefined);
    const entry = await h.store.get(BUNDLES, "web");
    const error = await refusal(h.manager.rollback("web", manual()));
    expect(error.code).toBe("failed_precondition");
    expect(error.message).toContain('update run "roll" drives it');
    expect((await h.store.get(BUNDLES, "web"))?.revision).toBe(entry?.revision);
  });
});
