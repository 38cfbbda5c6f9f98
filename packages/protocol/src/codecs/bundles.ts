/**
 * Bundles → AdminService wire messages (admin.proto "Bundles"): the stored record and the status
 * the hub derives from it. Manifests go out as object references, never as content.
 */
import type {
  BundleClusterState,
  FleetLimits,
  HoldReason,
  PartitionGateStatus,
  PartitionStatus,
} from "@flotilla/core";
import type * as wire from "../generated/index.js";
import type { ResourceReason } from "./status-report.js";
import { compact, type MemberState } from "@flotilla/core";
import { MEASUREMENT_VERDICT, MEMBER_STATE } from "./run-status.js";

/** A manifest file of a bundle, stored in the object store. */
export interface ManifestRef {
  /** The file's path in the bundle directory, for messages. */
  readonly path: string;
  readonly digest: string;
  readonly sizeBytes: number;
}

/** A stored bundle. */
export interface BundleRecord {
  readonly name: string;
  /** The default namespace ("" for none): fleet.yaml `defaultNamespace`, in every record. */
  readonly namespace: string;
  /**
   * Set (maybe "") in records written since fleet.yaml `namespace` took Fleet's meaning
   * (docs/semantics.md#namespaces). A record without it is older: there, `namespace` inside
   * `targetCustomizationsJson` also meant the default namespace, and is read so.
   */
  readonly defaultNamespace?: string;
  /** fleet.yaml `namespace`: the namespace every namespaced resource is forced into; "" for none. */
  readonly targetNamespace?: string;
  readonly manifests: readonly ManifestRef[];
  /**
   * Renderer input files (a chart's, a Kustomize directory's), stored like manifests; absent in
   * records of bundles without any.
   */
  readonly files?: readonly ManifestRef[];
  /** fleet.yaml `helm` as given (JSON); absent for a bundle that is not a Helm chart. */
  readonly helmJson?: string;
  /** fleet.yaml `kustomize` as given (JSON); absent for a bundle that is not a Kustomize one. */
  readonly kustomizeJson?: string;
  /**
   * fleet.yaml `correctDrift`, `namespaceLabels`, `namespaceAnnotations` as given (JSON); absent
   * when not set (docs/semantics.md#drift-correction, docs/bundles.md#namespace-labels-and-annotations).
   */
  readonly correctDriftJson?: string;
  readonly namespaceLabelsJson?: string;
  readonly namespaceAnnotationsJson?: string;
  /** The JSON texts exactly as given ("" for none). */
  readonly targetsJson: string;
  readonly targetCustomizationsJson: string;
  readonly rolloutStrategyJson: string;
  readonly paused: boolean;
  /** Short content hash of what clusters receive (computed by the hub when it renders the bundle). */
  readonly revision: string;
  /** Content digest of this revision by key: default namespace ("" for none), `ns#c<i>` when patched. */
  readonly contents: Readonly<Record<string, string>>;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  /**
   * Redeploys of every target (Fleet's forceSyncGeneration), and of single clusters by name: a
   * target's intent carries the sum as its `forceSync` (docs/semantics.md#redeploying-a-bundle).
   */
  readonly forceSyncGeneration?: number;
  readonly forceSyncClusters?: Readonly<Record<string, number>>;
  /** fleet.yaml `labels`; absent for none. Not part of the revision. */
  readonly labels?: Readonly<Record<string, string>>;
  /** fleet.yaml `dependsOn` as given (JSON); absent for none. Not part of the revision. */
  readonly dependsOnJson?: string;
  /**
   * The stored update strategy each new revision rolls out with, as a staged run the hub makes
   * (docs/semantics.md#staged-bundles); absent: the partition rollout releases revisions. Not part
   * of the revision.
   */
  readonly updateStrategyName?: string;
  /**
   * The staged run that drives the bundle (docs/semantics.md#staged-bundle-runs); absent when its
   * partition rollout does. Not part of the revision: an apply keeps it.
   */
  readonly drivenBy?: BundleDriver;
  /** When the current revision was stored; absent in records written before revision history. */
  readonly storedAtMs?: number;
  /**
   * When a pass first saw every target it had released to Ready at the current revision
   * ("good", docs/semantics.md#rolling-back-a-bundle); absent: not yet.
   */
  readonly readyAtMs?: number;
  /** Earlier revisions kept to roll back to, newest first; absent for none. */
  readonly history?: readonly BundleRevisionEntry[];
  /** Set by a rollback, cleared by the next apply (docs/semantics.md#rolling-back-a-bundle). */
  readonly rolledBack?: BundleRollback;
}

/**
 * The content-defining fields of a bundle record (those its revision hash covers), which a
 * rollback puts back.
 */
export interface BundleContentFields {
  readonly namespace: string;
  readonly defaultNamespace?: string;
  readonly targetNamespace?: string;
  readonly manifests: readonly ManifestRef[];
  readonly files?: readonly ManifestRef[];
  readonly helmJson?: string;
  readonly kustomizeJson?: string;
  readonly namespaceLabelsJson?: string;
  readonly namespaceAnnotationsJson?: string;
  readonly targetCustomizationsJson: string;
  readonly revision: string;
  readonly contents: Readonly<Record<string, string>>;
}

/** An earlier revision of a bundle, with everything needed to make it current again. */
export interface BundleRevisionEntry extends BundleContentFields {
  readonly storedAtMs: number;
  /** As the record's `readyAtMs` while the revision was current. */
  readonly readyAtMs?: number;
}

/** Why a bundle was rolled back: by an operator, or (later) by the hub on a failure. */
export type RollbackCause =
  "Manual" | "FailureBudget" | "MetricGate" | "RunFailed";

/** A rollback as stored in the bundle's record. */
export interface BundleRollback {
  readonly from: string;
  readonly to: string;
  readonly cause: RollbackCause;
  readonly message: string;
  readonly atMs: number;
  /** The caller's identity; "" for the hub itself. */
  readonly actor: string;
  /** Release every cluster holding `from` at once instead of pacing by maxUnavailable. */
  readonly allAtOnce?: boolean;
  /** Targets whose intent held `from` when the rollback was made (the clusters it moves back). */
  readonly clusters: readonly string[];
}

/** A staged run driving a bundle, as stored in the bundle's record. */
export interface BundleDriver {
  readonly run: string;
  /** The revision the run rolls out. */
  readonly revision: string;
  /** That revision's content digests by content key (as `contents`), kept while the run drives. */
  readonly contents: Readonly<Record<string, string>>;
  /**
   * The revision the partition rollout had released when the run was created, which targets
   * holding nothing get meanwhile; absent when it had released none.
   */
  readonly baseRevision?: string;
  /**
   * Set when an apply of a staged bundle wrote the revision and the hub has not made its run yet
   * (`run` is the name it intends); cleared once the run exists (docs/semantics.md#staged-bundles).
   */
  readonly pending?: boolean;
}

/** Targets of a bundle counted by state. */
export interface BundleCounts {
  readonly targets: number;
  readonly pending: number;
  readonly outOfSync: number;
  readonly waitApplied: number;
  readonly errApplied: number;
  readonly notReady: number;
  readonly modified: number;
  readonly ready: number;
  /** Targets in no partition: not deployed. */
  readonly unassigned: number;
}

/** A bundle and its counts (ListBundles). */
export interface BundleSummary {
  readonly record: BundleRecord;
  readonly counts: BundleCounts;
}

/** One target's copy of a bundle. */
export interface BundleClusterView {
  readonly cluster: string;
  readonly state: BundleClusterState;
  readonly partition?: string;
  readonly releasedRevision?: string;
  readonly appliedRevision?: string;
  /** Set while the target waits for the current revision. */
  readonly held?: HoldReason;
  readonly nextOpeningMs?: number;
  readonly message: string;
  readonly reasons: readonly ResourceReason[];
  readonly reasonsTruncated: number;
  readonly unreachable: boolean;
  /** When the agent observed what it last reported. */
  readonly updatedAtMs?: number;
  /** A member of the staged run driving the bundle: its place and state there. */
  readonly run?: {
    readonly stage: string;
    readonly group: string;
    readonly state: MemberState;
  };
}

/** Rollback progress: of the clusters a rollback moves, how many are Ready at its target. */
export interface RollbackProgress {
  readonly back: number;
  readonly touched: number;
}

/** A revision in GetBundle's list: the current one first, then the history. */
export interface BundleRevisionView {
  readonly revision: string;
  readonly storedAtMs: number;
  readonly readyAtMs?: number;
  readonly current: boolean;
}

/** A bundle's full status (GetBundle). */
export interface BundleStatus {
  /** The current revision, then the earlier ones kept, newest first. */
  readonly revisions?: readonly BundleRevisionView[];
  readonly rollbackProgress?: RollbackProgress;
  readonly summary: BundleSummary;
  /** Every target, byte order. */
  readonly clusters: readonly BundleClusterView[];
  readonly partitions: readonly PartitionStatus[];
  readonly limits: FleetLimits;
  readonly unassigned: readonly string[];
  readonly stoppedAfter?: string;
  /** The staged run driving the bundle and its revision; absent: its partitions drive it. */
  readonly drivenBy?: { readonly run: string; readonly revision: string };
  /** A partition gate that failed at the current revision (docs/semantics.md#partition-gates). */
  readonly gateFailed?: string;
}

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
  DependenciesNotReady: "HOLD_REASON_DEPENDENCIES_NOT_READY",
  GateNotPassed: "HOLD_REASON_GATE_NOT_PASSED",
  GateFailed: "HOLD_REASON_GATE_FAILED",
};

const CAUSE: Record<RollbackCause, wire.RollbackCause__Output> = {
  Manual: "ROLLBACK_CAUSE_MANUAL",
  FailureBudget: "ROLLBACK_CAUSE_FAILURE_BUDGET",
  MetricGate: "ROLLBACK_CAUSE_METRIC_GATE",
  RunFailed: "ROLLBACK_CAUSE_RUN_FAILED",
};

/** A stored rollback on the wire, with its progress when known (GetBundle). */
export function rollbackToWire(
  r: BundleRollback,
  progress?: RollbackProgress,
): wire.BundleRollback {
  return {
    fromRevision: r.from,
    toRevision: r.to,
    cause: CAUSE[r.cause],
    message: r.message,
    atMs: r.atMs,
    actor: r.actor,
    allAtOnce: r.allAtOnce === true,
    clustersBack: progress?.back ?? 0,
    clustersTouched: progress?.touched ?? r.clusters.length,
  };
}

function refToWire(m: ManifestRef): wire.Manifest {
  return { path: m.path, object: { digest: m.digest, sizeBytes: m.sizeBytes } };
}

/** The spec as stored: Fleet fields as their JSON text, manifests as references. */
export function bundleSpecToWire(record: BundleRecord): wire.BundleSpec {
  return {
    name: record.name,
    // An older record keeps the legacy field, and so its meaning.
    ...(record.defaultNamespace === undefined
      ? { namespace: record.namespace }
      : {
          defaultNamespace: record.defaultNamespace,
          targetNamespace: record.targetNamespace ?? "",
        }),
    manifests: record.manifests.map(refToWire),
    ...compact({
      files: record.files?.map(refToWire),
      helmJson: record.helmJson,
      kustomizeJson: record.kustomizeJson,
      correctDriftJson: record.correctDriftJson,
      namespaceLabelsJson: record.namespaceLabelsJson,
      namespaceAnnotationsJson: record.namespaceAnnotationsJson,
    }),
    targetsJson: record.targetsJson,
    targetCustomizationsJson: record.targetCustomizationsJson,
    ...(record.updateStrategyName !== undefined
      ? { updateStrategyName: record.updateStrategyName }
      : record.rolloutStrategyJson === ""
        ? {}
        : { rolloutStrategyJson: record.rolloutStrategyJson }),
    paused: record.paused,
    ...compact({
      labels: record.labels === undefined ? undefined : { ...record.labels },
      dependsOnJson: record.dependsOnJson,
    }),
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
    ...compact({ updateRun: record.drivenBy?.run }),
    ...(record.rolledBack === undefined
      ? {}
      : { rolledBack: rollbackToWire(record.rolledBack) }),
  };
}

export function bundleClusterToWire(
  c: BundleClusterView,
): wire.BundleClusterStatus {
  return {
    cluster: c.cluster,
    state: STATE[c.state],
    ...compact({
      partition: c.partition,
      releasedRevision: c.releasedRevision,
      appliedRevision: c.appliedRevision,
    }),
    ...(c.held === undefined ? {} : { held: HOLD[c.held] }),
    ...compact({ nextOpeningMs: c.nextOpeningMs }),
    message: c.message,
    reasons: c.reasons.map((r) => ({ ...r })),
    reasonsTruncated: c.reasonsTruncated,
    unreachable: c.unreachable,
    ...compact({ updatedAtMs: c.updatedAtMs }),
    ...(c.run === undefined
      ? {}
      : {
          runStage: c.run.stage,
          runGroup: c.run.group,
          runMemberState: MEMBER_STATE.toWire(c.run.state),
        }),
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
    gates: (p.gates ?? []).map(partitionGateToWire),
  };
}

/** A metric gate after a partition (docs/semantics.md#partition-gates). */
function partitionGateToWire(g: PartitionGateStatus): wire.PartitionGate {
  return {
    gate: g.gate,
    verdict: g.verdict,
    query: g.query,
    ...compact({
      successCondition: g.successCondition,
      failureCondition: g.failureCondition,
    }),
    count: g.count,
    measurements: g.measurements.map((m) => ({
      atMs: m.atMs,
      values: [...(m.values ?? [])],
      hasValues: m.values !== undefined,
      verdict: MEASUREMENT_VERDICT.toWire(m.verdict),
      message: m.message,
    })),
    message: g.message,
    ...compact({ nextAtMs: g.nextAtMs }),
  };
}

export function bundleStatusToWire(
  status: BundleStatus,
): wire.GetBundleResponse {
  const { rolledBack } = status.summary.record;
  return {
    bundle: {
      ...bundleToWire(status.summary),
      ...(rolledBack === undefined
        ? {}
        : {
            rolledBack: rollbackToWire(rolledBack, status.rollbackProgress),
          }),
    },
    clusters: status.clusters.map(bundleClusterToWire),
    partitions: status.partitions.map(partitionToWire),
    limits: { ...status.limits },
    unassigned: [...status.unassigned],
    ...compact({
      stoppedAfter: status.stoppedAfter,
      updateRun: status.drivenBy?.run,
      updateRunRevision: status.drivenBy?.revision,
      gateFailed: status.gateFailed,
    }),
    ...(status.revisions === undefined
      ? {}
      : {
          revisions: status.revisions.map((r) => ({
            revision: r.revision,
            storedAtMs: r.storedAtMs,
            ...compact({ readyAtMs: r.readyAtMs }),
            current: r.current,
          })),
        }),
  };
}
