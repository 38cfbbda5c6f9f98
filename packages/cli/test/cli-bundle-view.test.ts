/**
 * `flotilla bundle get|list` against a fake hub: counts, partitions in rollout order with limits,
 * each cluster's state, revisions, hold reason and first resource reason.
 */
import type { wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { NOW_MS } from "./fixtures.js";

describe("flotilla bundle get and list", () => {
  const status: wire.GetBundleResponse = {
    bundle: {
      spec: {
        name: "web",
        namespace: "web",
        paused: false,
        rolloutStrategyJson: "{}",
      },
      revision:
        "sha256:aaaabbbbccccddddeeeeffff0000111122223333444455556666777788889999",
      createdAtMs: NOW_MS - 3_600_000,
      updatedAtMs: NOW_MS - 600_000,
      counts: { targets: 3, ready: 1, notReady: 1, pending: 1 },
    },
    clusters: [
      {
        cluster: "canary-1",
        state: "BUNDLE_CLUSTER_STATE_READY",
        partition: "canary",
        releasedRevision: "sha256:aaaabbbbccccdddd",
        appliedRevision: "sha256:aaaabbbbccccdddd",
      },
      {
        cluster: "prod-1",
        state: "BUNDLE_CLUSTER_STATE_NOT_READY",
        partition: "prod",
        releasedRevision: "sha256:aaaabbbbccccdddd",
        appliedRevision: "sha256:aaaabbbbccccdddd",
        reasons: [
          {
            kind: "Deployment",
            namespace: "web",
            name: "web",
            state: "NotReady",
            message: "1/3 replicas",
          },
        ],
        reasonsTruncated: 2,
      },
      {
        cluster: "prod-2",
        state: "BUNDLE_CLUSTER_STATE_PENDING",
        partition: "prod",
        held: "HOLD_REASON_WINDOW_CLOSED",
        nextOpeningMs: NOW_MS + 2 * 3_600_000,
      },
    ],
    partitions: [
      {
        name: "canary",
        clusterCount: 1,
        maxUnavailable: 0,
        unavailable: 0,
        notReadyCount: 0,
        notReady: false,
      },
      {
        name: "prod",
        clusterCount: 2,
        maxUnavailable: 0,
        unavailable: 1,
        notReadyCount: 2,
        notReady: true,
      },
    ],
    limits: { maxUnavailable: 3, maxUnavailablePartitions: 0, maxNew: 50 },
    unassigned: ["lab-1"],
  };

  it("shows counts, partitions in order with limits, and each cluster's state and hold", async () => {
    await using hub = await startFakeHub({
      unary: { GetBundle: () => status },
    });
    const { code, out, err } = await cliAgainst(hub, ["bundle", "get", "web"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const lines = out.split("\n");
    expect(lines[0]).toBe("Bundle web · revision aaaabbbbcccc · partitioned");
    expect(lines[1]).toBe("  3 targets · 1 Ready · 1 NotReady · 1 Pending");
    expect(out).toMatch(
      /\n {2}canary +1 +0 +0 +Ready\n {2}prod +2 +0 +1 +NotReady\n/,
    );
    expect(out).toContain(
      "  Limits: maxUnavailable 3 · maxUnavailablePartitions 0 · maxNew 50\n",
    );
    expect(out).toMatch(
      /\nprod-1 +prod +NotReady +aaaabbbbcccc +aaaabbbbcccc +- +Deployment web\/web NotReady: 1\/3 replicas \(\+2 more\)\n/,
    );
    expect(out).toMatch(
      /\nprod-2 +prod +Pending +- +- +WindowClosed \(opens in 2h\)\n/,
    );
    expect(out).toContain("Unassigned (1, not deployed): lab-1\n");
  });

  it("says which staged run drives the bundle, and each member's place and state in it", async () => {
    const driven: wire.GetBundleResponse = {
      ...status,
      updateRun: "roll",
      updateRunRevision: "sha256:1111222233334444",
      clusters: [
        {
          cluster: "canary-1",
          state: "BUNDLE_CLUSTER_STATE_READY",
          releasedRevision: "sha256:1111222233334444",
          appliedRevision: "sha256:1111222233334444",
          runStage: "canary",
          runGroup: "canary",
          runMemberState: "MEMBER_STATE_SUCCEEDED",
        },
        {
          cluster: "lab-1",
          state: "BUNDLE_CLUSTER_STATE_OUT_OF_SYNC",
          releasedRevision: "sha256:aaaabbbbccccdddd",
          appliedRevision: "sha256:aaaabbbbccccdddd",
          message: "Held: the bundle is driven by staged run roll",
        },
      ],
    };
    await using hub = await startFakeHub({
      unary: { GetBundle: () => driven },
    });
    const { code, out } = await cliAgainst(hub, ["bundle", "get", "web"]);
    expect(code).toBe(0);
    expect(out.split("\n")[0]).toBe(
      "Bundle web · revision aaaabbbbcccc · driven by staged run roll, revision 111122223333",
    );
    expect(out).toMatch(
      /\ncanary-1 +- +Ready +111122223333 +111122223333 +- +canary\/canary Succeeded\n/,
    );
    expect(out).toMatch(
      /\nlab-1 +- +OutOfSync +aaaabbbbcccc +aaaabbbbcccc +- +- +Held: the bundle is driven by staged run roll\n/,
    );
  });

  it("lists bundles with revision, rollout and readiness", async () => {
    await using hub = await startFakeHub({
      unary: {
        ListBundles: () => ({
          bundles: [status.bundle ?? {}],
          nextPageToken: "",
        }),
      },
    });
    const { code, out } = await cliAgainst(hub, ["bundle", "list"]);
    expect(code).toBe(0);
    expect(out.split("\n")[1]).toMatch(
      /^web +aaaabbbbcccc +partitioned +3 +1 +10m ago$/,
    );
  });
});
