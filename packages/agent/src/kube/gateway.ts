/**
 * The `KubeGateway` port: how the agent puts a bundle revision into its cluster and learns how it
 * is doing. The agent's application code talks only to this interface; the simulated cluster
 * (simulated/) implements it in memory, and the @kubernetes/client-node adapter
 * (client-node-gateway.ts) implements it with server-side apply, an inventory per bundle, prune,
 * readiness per kind and a drift watch, without changing anything here.
 */
import type { ResourceReason, StatusPhase } from "@flotilla/protocol";

/**
 * One Kubernetes object as decoded from a bundle's YAML: `apiVersion`, `kind` and `metadata.name`
 * are required strings, `metadata.namespace` optional; the rest is passed through untouched.
 */
export type Manifest = Readonly<Record<string, unknown>>;

/** The phases a bundle goes through in a cluster: the bundle subset of the protocol's phases. */
export type BundlePhase = Extract<
  StatusPhase,
  "Applying" | "Applied" | "Ready" | "NotReady" | "Failed" | "Modified"
>;

/**
 * The state of one object: `Missing` means it is in the inventory but gone from the cluster,
 * `Modified` that its live fields drifted from what was applied.
 */
export type ResourceState =
  "Ready" | "NotReady" | "Modified" | "Missing" | "Failed";

/** One object's state, in the protocol's reason shape (`namespace` "" when cluster-scoped). */
export interface ResourceStatus extends ResourceReason {
  readonly state: ResourceState;
}

/** What to apply: one revision of one bundle. */
export interface ApplyBundleRequest {
  readonly bundle: string;
  readonly revision: string;
  /**
   * The revision's objects, already decoded and customised for this cluster. Each needs string
   * `apiVersion`, `kind` and `metadata.name`; see {@link Manifest}.
   */
  readonly manifests: readonly Manifest[];
  /** Namespace for namespaced objects that set none (Fleet `defaultNamespace`); default "default". */
  readonly namespace?: string;
  /**
   * fleet.yaml `namespace` (docs/semantics.md#namespaces): every namespaced object goes there and
   * a cluster-scoped one fails the revision. The hub placed the built-in kinds; the rest (kinds of
   * CRDs) are placed here, by discovery.
   */
  readonly targetNamespace?: string;
  /**
   * Restore drifted and missing objects (fleet.yaml `correctDrift`, docs/agent.md#drift-correction);
   * absent: report `Modified` and leave them.
   */
  readonly correctDrift?: DriftCorrectionMode;
  /**
   * fleet.yaml `namespaceLabels` / `namespaceAnnotations`
   * (docs/bundles.md#namespace-labels-and-annotations): set on the namespace the bundle deploys
   * into (`targetNamespace`, else `namespace`), created when missing.
   */
  readonly namespaceLabels?: Readonly<Record<string, string>>;
  readonly namespaceAnnotations?: Readonly<Record<string, string>>;
  /**
   * Take back fields other managers changed (server-side apply with force) for this apply, as a
   * redeploy does (docs/semantics.md#redeploying-a-bundle); otherwise the gateway's own setting.
   */
  readonly force?: boolean;
}

/** How drift is corrected (docs/agent.md#drift-correction). */
export interface DriftCorrectionMode {
  /**
   * Also take fields that other server-side appliers own, and delete and re-create an object
   * whose re-apply fails on an immutable field. Without it, only changes made by updates
   * (`kubectl edit`, `scale`, `patch`) are taken back.
   */
  readonly force: boolean;
}

/** A bundle status as the gateway reports it; the agent turns it into a protocol StatusReport. */
export interface BundleStatus {
  readonly bundle: string;
  /** The revision this status is about; an older revision's Ready never stands for a newer one. */
  readonly revision: string;
  readonly phase: BundlePhase;
  /**
   * Objects that are not Ready, at most `MAX_REASONS` (protocol limits); empty when Ready or
   * while Applying. The rest are counted in `resourcesTruncated`.
   */
  readonly resources: readonly ResourceStatus[];
  readonly resourcesTruncated: number;
  /** How many objects the revision has. */
  readonly resourceCount: number;
  /** Failed only: what went wrong, in the "Cannot apply …: state" style. */
  readonly error?: string;
  readonly message?: string;
  readonly observedAtMs: number;
}

/** A bundle whose objects are in the cluster (its inventory), and at which revision. */
export interface AppliedBundle {
  readonly bundle: string;
  readonly revision: string;
}

/** `{ signal }` of every gateway call. */
export interface GatewayCallOptions {
  readonly signal?: AbortSignal;
}

/** Receives every status change; must not throw and must not block. */
export type BundleStatusListener = (status: BundleStatus) => void;

/**
 * The agent's access to its cluster's workloads.
 *
 * Contract (shared by every adapter):
 * * `applyBundle` makes the cluster hold exactly the request's objects for that bundle: objects of
 *   the previous revision that are no longer in the bundle are pruned, objects the bundle does not
 *   own are never touched. It emits `Applying`, then resolves with `Applied` once every object was
 *   accepted, or with `Failed` (and `error`) when the revision was refused; it rejects only when
 *   its signal aborts, when a newer apply of the same bundle supersedes it, or when the gateway
 *   stops. A refused or aborted revision leaves the previous revision's objects and inventory as
 *   they were: nothing is half-applied. Invalid manifests are refused before anything is sent.
 * * After `Applied`, readiness is observed continuously and reported through `watch`: `NotReady`
 *   (with the objects that are not Ready) until every object is Ready, then `Ready`; `Modified`
 *   when a Ready bundle's objects drift (restored when `correctDrift` asks for it, with a back-off
 *   per object while a restore keeps failing).
 * * Re-applying the revision the cluster holds is harmless (same objects, drift corrected).
 * * At most one apply per bundle runs at a time; a newer apply of the same bundle supersedes one
 *   in flight. Different bundles apply concurrently.
 * * `removeBundle` deletes every object in the bundle's inventory, then the inventory. Removing a
 *   bundle the cluster does not hold succeeds.
 * * Adapters that hold connections or watches have `start()`/`stop()` on their concrete type.
 */
export interface KubeGateway {
  /** Applies one revision of a bundle; see the contract above. */
  applyBundle(
    request: ApplyBundleRequest,
    options?: GatewayCallOptions,
  ): Promise<BundleStatus>;
  /** Deletes a bundle's objects and its inventory. */
  removeBundle(bundle: string, options?: GatewayCallOptions): Promise<void>;
  /** Bundles whose inventory is in the cluster, so a restarted agent can prune those it no longer targets. */
  listBundles(options?: GatewayCallOptions): Promise<readonly AppliedBundle[]>;
  /**
   * Changes how a held bundle's drift is corrected without applying it again (undefined: report
   * drift only); a bundle the gateway does not hold is ignored.
   */
  setCorrectDrift(bundle: string, mode: DriftCorrectionMode | undefined): void;
  /** The latest status of a bundle, or undefined when the gateway knows nothing of it. */
  status(bundle: string): BundleStatus | undefined;
  /**
   * Calls `listener` with the current status of every known bundle, then with every change, until
   * the returned function is called or `options.signal` aborts.
   */
  watch(
    listener: BundleStatusListener,
    options?: GatewayCallOptions,
  ): () => void;
}
