import { describe, expect, it } from "vitest";
import {
  bundleClusterToWire,
  bundleSpecToWire,
  bundleStatusToWire,
  type BundleRecord,
  type BundleStatus,
} from "@flotilla/protocol";

const RECORD: BundleRecord = {
  name: "web",
  namespace: "apps",
  manifests: [{ path: "deploy.yaml", digest: "sha256:ab", sizeBytes: 12 }],
  targetsJson: "[]",
  targetCustomizationsJson: "",
  rolloutStrategyJson: "",
  paused: false,
  revision: "r1",
  contents: { apps: "sha256:cd" },
  createdAtMs: 1,
  updatedAtMs: 2,
};

const COUNTS = {
  targets: 2,
  pending: 0,
  outOfSync: 0,
  waitApplied: 1,
  errApplied: 0,
  notReady: 0,
  modified: 0,
  ready: 1,
  unassigned: 0,
};

describe("bundle codec", () => {
  it("sends the spec with manifests as references and no empty strategy", () => {
    expect(bundleSpecToWire(RECORD)).toEqual({
      name: "web",
      namespace: "apps",
      manifests: [
        {
          path: "deploy.yaml",
          object: { digest: "sha256:ab", sizeBytes: 12 },
        },
      ],
      targetsJson: "[]",
      targetCustomizationsJson: "",
      paused: false,
    });
    expect(
      bundleSpecToWire({ ...RECORD, rolloutStrategyJson: '{"maxNew":1}' })
        .rolloutStrategyJson,
    ).toBe('{"maxNew":1}');
  });

  it("sends a target's optional fields only when set", () => {
    const bare = bundleClusterToWire({
      cluster: "eu-1",
      state: "Pending",
      message: "",
      reasons: [],
      reasonsTruncated: 0,
      unreachable: false,
    });
    expect(bare).toEqual({
      cluster: "eu-1",
      state: "BUNDLE_CLUSTER_STATE_PENDING",
      message: "",
      reasons: [],
      reasonsTruncated: 0,
      unreachable: false,
    });
    const full = bundleClusterToWire({
      cluster: "eu-2",
      state: "WaitApplied",
      partition: "canary",
      releasedRevision: "r1",
      appliedRevision: "r0",
      held: "WindowClosed",
      nextOpeningMs: 99,
      message: "waiting",
      reasons: [],
      reasonsTruncated: 0,
      unreachable: true,
      updatedAtMs: 5,
    });
    expect(full).toMatchObject({
      state: "BUNDLE_CLUSTER_STATE_WAIT_APPLIED",
      partition: "canary",
      releasedRevision: "r1",
      appliedRevision: "r0",
      held: "HOLD_REASON_WINDOW_CLOSED",
      nextOpeningMs: 99,
      updatedAtMs: 5,
    });
  });

  it("sends a full status with partition counts instead of member lists", () => {
    const status: BundleStatus = {
      summary: { record: RECORD, counts: COUNTS },
      clusters: [],
      partitions: [
        {
          name: "canary",
          clusters: ["eu-1", "eu-2"],
          maxUnavailable: 1,
          auto: false,
          unavailable: 1,
          notReadyCount: 1,
          notReady: false,
          released: 0,
          visited: true,
        },
      ],
      limits: { maxUnavailable: 1, maxUnavailablePartitions: 0, maxNew: 50 },
      unassigned: ["us-1"],
      stoppedAfter: "canary",
    };
    expect(bundleStatusToWire(status)).toEqual({
      bundle: {
        spec: bundleSpecToWire(RECORD),
        revision: "r1",
        createdAtMs: 1,
        updatedAtMs: 2,
        counts: COUNTS,
      },
      clusters: [],
      partitions: [
        {
          name: "canary",
          clusterCount: 2,
          maxUnavailable: 1,
          auto: false,
          unavailable: 1,
          notReadyCount: 1,
          notReady: false,
          gates: [],
        },
      ],
      limits: { maxUnavailable: 1, maxUnavailablePartitions: 0, maxNew: 50 },
      unassigned: ["us-1"],
      stoppedAfter: "canary",
    });
  });
});
