/**
 * Bundle status → AdminService wire messages (admin.proto "Bundles"). Manifests go out as object
 * references, never as content.
 */
import type {
  BundleClusterState,
  HoldReason,
  PartitionStatus,
} from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import type { BundleRecord } from "./bundle-record.js";
import type {
  BundleClusterView,
  BundleCounts,
  BundleStatus,
  BundleSummary,
} from "./bundle-status.js";

const STATE: Record<BundleClusterState, wire.BundleClusterState__Output> = {
  Pending: "BUNDLE_CLUSTER_STATE_PENDING",
  OutOfSync: "BUNDLE_CLUSTER_STATE_OUT_OF_SYNC",
  WaitApplied: "BUNDLE_CLUSTER_STATE_WAIT_APPLIED",
  ErrApplied: "BUNDLE_CLUSTER_STATE_ERR_APPLIED",
  NotReady: "BUNDLE_CLUSTER_STATE_NOT_READY",
  Modified: "BUNDLE_CLUSTER_STATE_MODIFIED",
  Ready: "BUNDLE_CLUSTER_STATE_READY",
};

const HOLD: Record<HoldReason, wire.HoldReason__Output> = {
  Paused: "HOLD_REASON_PAUSED",
  WindowClosed: "HOLD_REASON_WINDOW_CLOSED",
  MaxUnavailable: "HOLD_REASON_MAX_UNAVAILABLE",
  MaxNew: "HOLD_REASON_MAX_NEW",
  PartitionsNotReady: "HOLD_REASON_PARTITIONS_NOT_READY",
};

/** The spec as stored: Fleet fields as their JSON text, manifests as references. */
export function bundleSpecToWire(record: BundleRecord): wire.BundleSpec {
  return {
    name: record.name,
    namespace: record.namespace,
    manifests: record.manifests.map((m) => ({
      path: m.path,
      object: { digest: m.digest, sizeBytes: m.sizeBytes },
    })),
    targetsJson: record.targetsJson,
    targetCustomizationsJson: record.targetCustomizationsJson,
    ...(record.rolloutStrategyJson === ""
      ? {}
      : { rolloutStrategyJson: record.rolloutStrategyJson }),
    paused: record.paused,
  };
}

function countsToWire(c: BundleCounts): wire.BundleCounts {
  return { ...c };
}

export function bundleToWire(summary: BundleSummary): wire.Bundle {
  const { record } = summary;
  return {
    spec: bundleSpecToWire(record),
    revision: record.revision,
    createdAtMs: record.createdAtMs,
    updatedAtMs: record.updatedAtMs,
    counts: countsToWire(summary.counts),
  };
}

export function bundleClusterToWire(
  c: BundleClusterView,
): wire.BundleClusterStatus {
  return {
    cluster: c.cluster,
    state: STATE[c.state],
    ...(c.partition === undefined ? {} : { partition: c.partition }),
    ...(c.releasedRevision === undefined
      ? {}
      : { releasedRevision: c.releasedRevision }),
    ...(c.appliedRevision === undefined
      ? {}
      : { appliedRevision: c.appliedRevision }),
    ...(c.held === undefined ? {} : { held: HOLD[c.held] }),
    ...(c.nextOpeningMs === undefined
      ? {}
      : { nextOpeningMs: c.nextOpeningMs }),
    message: c.message,
    reasons: c.reasons.map((r) => ({ ...r })),
    reasonsTruncated: c.reasonsTruncated,
    unreachable: c.unreachable,
    ...(c.updatedAtMs === undefined ? {} : { updatedAtMs: c.updatedAtMs }),
  };
}

function partitionToWire(p: PartitionStatus): wire.PartitionSummary {
  return {
    name: p.name,
    clusterCount: p.clusters.length,
    maxUnavailable: p.maxUnavailable,
    auto: p.auto,
    unavailable: p.unavailable,
    notReadyCount: p.notReadyCount,
    notReady: p.notReady,
  };
}

export function bundleStatusToWire(
  status: BundleStatus,
): wire.GetBundleResponse {
  return {
    bundle: bundleToWire(status.summary),
    clusters: status.clusters.map(bundleClusterToWire),
    partitions: status.partitions.map(partitionToWire),
    limits: { ...status.limits },
    unassigned: [...status.unassigned],
    ...(status.stoppedAfter === undefined
      ? {}
      : { stoppedAfter: status.stoppedAfter }),
  };
}
