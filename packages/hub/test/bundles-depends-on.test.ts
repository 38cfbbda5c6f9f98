// fleet.yaml `labels` and `dependsOn` on the hub (docs/semantics.md#dependencies-between-bundles):
// a dependent's revision reaches a cluster only once its dependencies are Ready there, the hold
// shows in status, a dependency's report runs its dependents' passes and no others, and cycles are
// refused at apply time with nothing stored.
import { describe, expect, test } from "vitest";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import {
  applyAndSettle,
  bundleSpec,
  cluster,
  clusters,
  holding,
  refusal,
  report,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

const db = (extra: Parameters<typeof bundleSpec>[0] = {}) =>
  bundleSpec({ name: "db", version: "db-1", ...extra });
const app = (
  dependsOn: unknown,
  extra: Parameters<typeof bundleSpec>[0] = {},
) =>
  bundleSpec({
    name: "app",
    version: "app-1",
    dependsOnJson: JSON.stringify(dependsOn),
    ...extra,
  });

async function ready(
  h: Harness,
  bundle: string,
  cluster: string,
  revision: string,
): Promise<void> {
  h.manager.onStatus(
    cluster,
    report(h, cluster, revision, "Ready", {}, bundle),
  );
  await h.manager.idle();
}

async function heldOf(h: Harness, bundle: string) {
  const status = await h.manager.get(bundle);
  return Object.fromEntries(
    status.clusters.map((c) => [c.cluster, [c.held, c.message]]),
  );
}

describe("dependsOn", () => {
  test("a dependent is released on a cluster only once its dependency is Ready there", async () => {
    await using h = await startHarness(clusters(2));
    const dbRev = await applyAndSettle(h, db());
    const appRev = await applyAndSettle(h, app([{ name: "db" }]));
    expect(holding(h, dbRev, "db")).toEqual(["c-00", "c-01"]);
    expect(holding(h, appRev, "app")).toEqual([]);
    expect(await heldOf(h, "app")).toEqual({
      "c-00": [
        "DependenciesNotReady",
        'waiting for dependencies: bundle "db" is WaitApplied',
      ],
      "c-01": [
        "DependenciesNotReady",
        'waiting for dependencies: bundle "db" is WaitApplied',
      ],
    });

    await ready(h, "db", "c-00", dbRev);
    expect(holding(h, appRev, "app")).toEqual(["c-00"]);
    expect((await heldOf(h, "app"))["c-01"]?.[0]).toBe("DependenciesNotReady");

    await ready(h, "db", "c-01", dbRev);
    expect(holding(h, appRev, "app")).toEqual(["c-00", "c-01"]);
    expect(await heldOf(h, "app")).toEqual({
      "c-00": [undefined, ""],
      "c-01": [undefined, ""],
    });
  });

  test("a dependency's report runs its dependents' passes, not every bundle's", async () => {
    await using h = await startHarness(clusters(2));
    const dbRev = await applyAndSettle(h, db());
    const appRev = await applyAndSettle(h, app([{ name: "db" }]));
    const otherRev = await applyAndSettle(
      h,
      bundleSpec({ name: "other", version: "o-1" }),
    );
    // A cluster joins without the fleet-change notice: only a pass of a bundle gives it that bundle.
    h.fleet.members = [...h.fleet.members, cluster("c-02")];
    await ready(h, "db", "c-00", dbRev);
    expect(holding(h, dbRev, "db")).toEqual(["c-00", "c-01", "c-02"]);
    expect(holding(h, appRev, "app")).toEqual(["c-00"]);
    expect(holding(h, otherRev, "other")).toEqual(["c-00", "c-01"]);
    h.fireInterval();
    await h.manager.idle();
    expect(holding(h, otherRev, "other")).toEqual(["c-00", "c-01", "c-02"]);
  });

  test("a selector matches bundle labels; every matching bundle must be Ready", async () => {
    await using h = await startHarness(clusters(1));
    const data = { tier: "data" };
    const dbRev = await applyAndSettle(h, db({ labels: data }));
    const cacheRev = await applyAndSettle(
      h,
      bundleSpec({ name: "cache", version: "c-1", labels: data }),
    );
    const appRev = await applyAndSettle(
      h,
      app([{ selector: { matchLabels: data } }]),
    );
    await ready(h, "db", "c-00", dbRev);
    expect(holding(h, appRev, "app")).toEqual([]);
    expect((await heldOf(h, "app"))["c-00"]).toEqual([
      "DependenciesNotReady",
      'waiting for dependencies: bundle "cache" is WaitApplied',
    ]);
    await ready(h, "cache", "c-00", cacheRev);
    expect(holding(h, appRev, "app")).toEqual(["c-00"]);
  });

  test("a dependency that does not exist, or does not target the cluster, holds it with that message", async () => {
    await using h = await startHarness([
      cluster("c-00", { env: "prod" }),
      cluster("c-01"),
    ]);
    const appRev = await applyAndSettle(h, app([{ name: "db" }]));
    expect((await heldOf(h, "app"))["c-00"]).toEqual([
      "DependenciesNotReady",
      'waiting for dependencies: bundle "db" does not exist',
    ]);
    const dbRev = await applyAndSettle(
      h,
      db({
        targetsJson: JSON.stringify([
          { clusterSelector: { matchLabels: { env: "prod" } } },
        ]),
      }),
    );
    await ready(h, "db", "c-00", dbRev);
    expect(holding(h, appRev, "app")).toEqual(["c-00"]);
    expect((await heldOf(h, "app"))["c-01"]).toEqual([
      "DependenciesNotReady",
      'waiting for dependencies: bundle "db" does not target this cluster',
    ]);
  });

  test("deleting a dependency lets its dependents wait, saying it does not exist", async () => {
    await using h = await startHarness(clusters(1));
    const dbRev = await applyAndSettle(h, db());
    await ready(h, "db", "c-00", dbRev);
    const app1 = await applyAndSettle(h, app([{ name: "db" }]));
    expect(holding(h, app1, "app")).toEqual(["c-00"]);
    await ready(h, "app", "c-00", app1);
    await h.manager.delete("db", "gone");
    await h.manager.idle();
    const app2 = await applyAndSettle(
      h,
      app([{ name: "db" }], { version: "app-2" }),
    );
    expect(holding(h, app2, "app")).toEqual([]);
    expect(holding(h, app1, "app")).toEqual(["c-00"]);
    expect((await heldOf(h, "app"))["c-00"]).toEqual([
      "DependenciesNotReady",
      'waiting for dependencies: bundle "db" does not exist',
    ]);
  });

  test("a cycle by names is refused with INVALID_ARGUMENT naming it, nothing stored", async () => {
    await using h = await startHarness(clusters(1));
    await applyAndSettle(
      h,
      bundleSpec({ name: "a", dependsOnJson: '[{"name":"b"}]' }),
    );
    await applyAndSettle(
      h,
      bundleSpec({ name: "b", dependsOnJson: '[{"name":"c"}]' }),
    );
    const error = await refusal(
      h.manager.apply(
        bundleSpec({ name: "c", dependsOnJson: '[{"name":"a"}]' }),
        "test",
      ),
    );
    expect(error.code).toBe("invalid_argument");
    expect(error.problems).toEqual([
      {
        path: "bundle.dependsOn",
        message: "forms a dependency cycle: c → a → b → c",
        value: "c → a → b → c",
      },
    ]);
    expect(await h.store.get(BUNDLES, "c")).toBeUndefined();
  });

  test("a cycle through selectors, closed by a change of labels, is refused and the stored bundle kept", async () => {
    await using h = await startHarness(clusters(1));
    await applyAndSettle(
      h,
      bundleSpec({
        name: "a",
        labels: { tier: "web" },
        dependsOnJson: JSON.stringify([
          { selector: { matchLabels: { tier: "data" } } },
        ]),
      }),
    );
    const bSpec = {
      name: "b",
      dependsOnJson: JSON.stringify([
        {
          selector: {
            matchExpressions: [
              { key: "tier", operator: "In", values: ["web"] },
            ],
          },
        },
      ]),
    };
    await applyAndSettle(h, bundleSpec({ ...bSpec, labels: { tier: "db" } }));
    const before = await h.store.get(BUNDLES, "b");
    const error = await refusal(
      h.manager.apply(bundleSpec({ ...bSpec, labels: { tier: "data" } }), "t"),
    );
    expect(error.problems[0]?.message).toBe(
      "forms a dependency cycle: b → a → b",
    );
    expect(await h.store.get(BUNDLES, "b")).toEqual(before);
  });
});

describe("bundle labels", () => {
  test("are stored and shown; changing them keeps the revision", async () => {
    await using h = await startHarness(clusters(1));
    const first = await h.manager.apply(
      bundleSpec({ labels: { tier: "web" } }),
      "t",
    );
    const second = await h.manager.apply(
      bundleSpec({ labels: { tier: "front", team: "a" } }),
      "t",
    );
    expect(second.changed).toBe(false);
    expect(second.bundle.record.revision).toBe(first.bundle.record.revision);
    expect(second.bundle.record.labels).toEqual({ tier: "front", team: "a" });
    expect((await h.store.get(BUNDLES, "web"))?.value.labels).toEqual({
      tier: "front",
      team: "a",
    });
    const [listed] = await h.manager.list();
    expect(listed?.record.labels).toEqual({ tier: "front", team: "a" });
  });

  test("bad labels and dependsOn entries are refused with their paths, nothing stored", async () => {
    await using h = await startHarness(clusters(1));
    const error = await refusal(
      h.manager.apply(
        bundleSpec({
          labels: { "no good": "x" },
          dependsOnJson: JSON.stringify([{ name: "db", selector: {} }, {}]),
        }),
        "t",
      ),
    );
    expect(error.problems.map((p) => [p.path, p.message])).toEqual([
      ["bundle.labels.no good", expect.stringContaining("label key")],
      ["bundle.dependsOn[0]", "must set name or selector, not both"],
      ["bundle.dependsOn[1]", "must set name or selector"],
    ]);
    expect(await h.store.get(BUNDLES, "web")).toBeUndefined();
  });
});
