/**
 * The `UpgradeDriver` port: how the agent upgrades its cluster's platform
 * (docs/semantics.md#upgrades) and reads the facts it reports. The simulated cluster implements it
 * in memory; the system-upgrade-controller (suc-driver.ts) and Cluster API (capi-driver.ts) drivers
 * implement it on the Kubernetes API, each supporting the upgrade types its platform can do.
 */
import type { MemberTarget, NodePool, UpgradeType } from "@flotilla/core";
import type { VersionCatalogue } from "@flotilla/protocol";

/** The platform facts the agent registers with and compares targets against. */
export interface PlatformFacts {
  /** The control plane's version, normalized without "v" ("1.31.2"). */
  readonly kubernetesVersion?: string;
  readonly nodePools: readonly NodePool[];
}

/** One upgrade: the run that asked for it, what it touches and the member's target. */
export interface UpgradeRequest {
  readonly run: string;
  readonly type: UpgradeType;
  /** `kubernetesVersion` for Full and ControlPlaneOnly; `nodeImages` for Full and NodeImageOnly. */
  readonly target: MemberTarget;
}

/** A progress report; `percent` is a whole number 0–100 that never goes down within one upgrade. */
export interface UpgradeProgress {
  readonly percent: number;
  readonly message: string;
}

/**
 * Why an upgrade failed: the type is not supported by this driver (`Unsupported`), the target is
 * incomplete or names unknown pools (`InvalidTarget`), Kubernetes would refuse the version step
 * (`VersionSkew`: a downgrade or more than one minor), another upgrade is in flight (`Busy`), or
 * the platform reported a failure (`UpgradeFailed`).
 */
export type UpgradeFailureReason =
  "Unsupported" | "InvalidTarget" | "VersionSkew" | "Busy" | "UpgradeFailed";

/**
 * How an upgrade ended, or why it did not start (docs/semantics.md#maintenance-windows: Pending
 * with the next opening).
 */
export type UpgradeOutcome =
  | {
      readonly type: "Succeeded";
      readonly message: string;
      /** The facts after the upgrade, for the agent's next report. */
      readonly facts: PlatformFacts;
    }
  | {
      readonly type: "Failed";
      readonly reason: UpgradeFailureReason;
      readonly message: string;
    }
  | {
      readonly type: "Pending";
      readonly reason: "MaintenanceWindow";
      readonly message: string;
      /** The next opening; undefined when none is in sight. */
      readonly pendingUntilMs?: number;
    };

/** Options of {@link UpgradeDriver.start}. */
export interface StartUpgradeOptions {
  readonly signal?: AbortSignal;
  /** Called as the upgrade advances; must not throw. */
  readonly onProgress?: (progress: UpgradeProgress) => void;
}

/**
 * Performs platform upgrades.
 *
 * Contract: `start` resolves with a terminal outcome; expected "no" answers (unsupported type,
 * bad target, closed window) are outcomes, not rejections. A type the driver does not support
 * ends `Failed` with reason `Unsupported` without touching the cluster. The promise rejects only
 * when `signal` aborts or the driver stops: the simulated driver then abandons the upgrade with
 * nothing changed; drivers whose upgrade runs in the cluster stop following it, and a later
 * `start` for the same run follows it again rather than starting a second one. Kubernetes upgrades
 * are never rolled back (docs/semantics.md#upgrades).
 */
export interface UpgradeDriver {
  /** Whether this driver can perform upgrades of `type` at all. */
  supports(type: UpgradeType): boolean;
  /** Performs one upgrade; see the contract above. */
  start(
    request: UpgradeRequest,
    options?: StartUpgradeOptions,
  ): Promise<UpgradeOutcome>;
  /** The current facts, so the agent can report them and skip members AlreadyAtTarget. */
  current(options?: { readonly signal?: AbortSignal }): Promise<PlatformFacts>;
  /**
   * What the cluster can move to, from what the platform itself says (docs/agent.md#the-version-catalogue);
   * undefined (or absent) when the driver cannot tell.
   */
  catalogue?(
    facts: PlatformFacts,
    options?: { readonly signal?: AbortSignal },
  ): Promise<VersionCatalogue | undefined>;
}
