// Fleet's own shapes through BundleManager.apply and the live passes: negative numbers are
// accepted with a warning and resolve as docs/semantics.md#negative-values says; unnamed partitions get their
// shown names; a partition naming a group the hub does not have is a warning.
import { describe, expect, test } from "vitest";
import { type ClusterGroup } from "@flotilla/core";
import { parseSelectorStruct } from "@flotilla/core/testing";
import {
  bundleSpec,
  cluster,
  clusters,
  holding,
  reportReady,
  startHarness,
} from "./bundles-fixtures.js";

function group(name: string, selector: unknown): ClusterGroup {
  const parsed = parseSelectorStruct(selector, "selector");
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return { name, labels: {}, selector: parsed.value };
}

describe("negative Fleet numbers", () => {
  test("are stored with a warning naming each field and value, and maxUnavailable -3 releases one update at a time", async () => {
    await using h = await startHarness(clusters(4));
    const strategy = { maxUnavailable: -3, autoPartitionThreshold: -1 };
    const applied = await h.manager.apply(bundleSpec({ strategy }), "r");
    expect(
      applied.warnings
        .filter((w) => w.code === "NegativeValue")
        .map((w) => w.message),
    ).toEqual([
      "maxUnavailable -3 is negative: it resolves to 0, as in Fleet (a negative integer counts as 0)",
      "autoPartitionThreshold -1 is negative: automatic partitioning is off, as in Fleet (as with 0)",
    ]);
    await h.manager.idle();
    const r1 = applied.bundle.record.revision;
    await reportReady(h, holding(h, r1), r1);

    const next = await h.manager.apply(
      bundleSpec({ strategy, version: "2" }),
      "r",
    );
    await h.manager.idle();
    const r2 = next.bundle.record.revision;
    const status = await h.manager.get("web");
    expect(status.limits.maxUnavailable).toBe(0);
    expect(status.partitions.map((p) => [p.name, p.maxUnavailable])).toEqual([
      ["All", 0],
    ]);
    // A limit of 0 lets one cluster through at a time (docs/semantics.md#limit-zero).
    expect(holding(h, r2)).toEqual(["c-00"]);
  });

  test('resolve "-10%" to 1 for the partition and the bundle', async () => {
    await using h = await startHarness(clusters(4));
    const applied = await h.manager.apply(
      bundleSpec({ strategy: { maxUnavailable: "-10%" } }),
      "r",
    );
    expect(applied.warnings.map((w) => w.code)).toContain("NegativeValue");
    const status = await h.manager.get("web");
    expect(status.limits.maxUnavailable).toBe(1);
    expect(status.partitions[0]?.maxUnavailable).toBe(1);
  });
});

describe("unnamed partitions", () => {
  test("are applied and shown as partition-<index> in the bundle status", async () => {
    await using h = await startHarness([
      ...clusters(2, () => ({ ring: "a" })),
      cluster("z-00", { ring: "b" }),
    ]);
    await h.manager.apply(
      bundleSpec({
        strategy: {
          maxUnavailable: 0,
          partitions: [
            { clusterSelector: { matchLabels: { ring: "a" } } },
            { clusterSelector: { matchLabels: { ring: "b" } } },
          ],
        },
      }),
      "r",
    );
    await h.manager.idle();
    const status = await h.manager.get("web");
    expect(status.partitions.map((p) => [p.name, p.clusters])).toEqual([
      ["partition-0", ["c-00", "c-01"]],
      ["partition-1", ["z-00"]],
    ]);
    expect(status.clusters.map((c) => [c.cluster, c.partition])).toEqual([
      ["c-00", "partition-0"],
      ["c-01", "partition-0"],
      ["z-00", "partition-1"],
    ]);
  });
});

describe("undeclared cluster groups", () => {
  test("a partition naming a group the hub does not have is a warning of apply, gone once the group exists", async () => {
    await using h = await startHarness(clusters(2, () => ({ ring: "a" })));
    const spec = bundleSpec({
      strategy: {
        maxUnavailable: 1,
        partitions: [{ name: "canary", clusterGroup: "canaries" }],
      },
    });
    const before = await h.manager.apply(spec, "r");
    expect(
      before.warnings.filter((w) => w.code === "UndeclaredClusterGroup"),
    ).toEqual([
      {
        code: "UndeclaredClusterGroup",
        message:
          'partitions[0] ("canary"): clusterGroup "canaries" is not a declared cluster group, so the partition matches no cluster',
      },
    ]);
    h.fleet.clusterGroups = [group("canaries", { matchLabels: { ring: "a" } })];
    const after = await h.manager.apply(spec, "r");
    expect(after.warnings.map((w) => w.code)).not.toContain(
      "UndeclaredClusterGroup",
    );
    await h.manager.idle();
    const status = await h.manager.get("web");
    expect(status.partitions[0]?.clusters).toEqual(["c-00", "c-01"]);
  });
});
