/**
 * What can happen to a staged run: operator commands (imperative names) and observations
 * (past tense), and what the engine asks its caller to do in return.
 */
import type { QueryOutcome } from "../metrics/analysis.js";
import type { SupportPlan } from "../cluster.js";
import type { IntentChanges } from "../intent.js";
import type { Maintenance } from "../maintenance/windows.js";
import type { AvailableVersions } from "../versions/version.js";
import type { MemberTarget } from "./run.js";

/** Who asked, and why: recorded on gates and in transition messages (the hub audits it). */
export interface Actor {
  readonly actor?: string;
  readonly reason?: string;
}

/** The agent reports the member's upgrade done. */
export interface MemberSucceeded {
  readonly type: "MemberSucceeded";
  readonly member: string;
  readonly message?: string;
}

/** The agent reports the member's upgrade failed. */
export interface MemberFailed {
  readonly type: "MemberFailed";
  readonly member: string;
  readonly error: string;
}

/** The agent refused to start (its window is closed): back to Pending until `untilMs`. */
export interface MemberDeferred {
  readonly type: "MemberDeferred";
  readonly member: string;
  readonly message: string;
  readonly untilMs?: number;
}

/** What an agent reports about a member in flight. */
export type MemberOutcome = MemberSucceeded | MemberFailed | MemberDeferred;

/** Everything `step` accepts. */
export type RunEvent =
  | ({ readonly type: "StartRun" } & Actor)
  | ({ readonly type: "StopRun" } & Actor)
  | ({ readonly type: "SkipStage"; readonly stage: string } & Actor)
  | ({ readonly type: "SkipGroup"; readonly group: string } & Actor)
  | ({ readonly type: "SkipMember"; readonly member: string } & Actor)
  /** Failed members back to the queue; all failed members of the current stage when `members` is absent. */
  | ({
      readonly type: "RetryMembers";
      readonly members?: readonly string[];
    } & Actor)
  /** Approves the pending Approval gates at a gate id (`stage:canary:after`). */
  | ({ readonly type: "ApproveGate"; readonly gate: string } & Actor)
  /** Completes the pending gates (Approval or ScheduledStart) at a gate id. */
  | ({ readonly type: "CompleteGate"; readonly gate: string } & Actor)
  | MemberOutcome
  /**
   * Outcomes reported at the same instant: all are counted before any freed slot is refilled
   * (docs/semantics.md#simultaneous-outcomes). Those that do not apply are ignored and named in
   * {@link StepResult.ignored}; the batch is rejected only when none applies.
   */
  | {
      readonly type: "MembersReported";
      readonly reports: readonly MemberOutcome[];
    }
  /**
   * Bundle runs: what the agent of a member in flight reports short of Ready at the run's revision
   * (`ErrApplied: ...`); kept on the member and named if it times out. Ignored unless Running.
   */
  | {
      readonly type: "MemberReported";
      readonly member: string;
      readonly state: string;
    }
  | { readonly type: "MemberUnreachable"; readonly member: string }
  | { readonly type: "MemberReachable"; readonly member: string }
  /** Removed from the fleet: Skipped with reason Left (docs/semantics.md#membership). */
  | {
      readonly type: "MemberLeft";
      readonly member: string;
      /**
       * The newer run of the same bundle that took the member over (docs/semantics.md#staged-bundles):
       * the member ends Skipped with reason `Superseded` instead of `Left`.
       */
      readonly supersededBy?: string;
      /**
       * The revision the member's bundle was rolled back to (docs/semantics.md#rolling-back-a-bundle):
       * the member ends Skipped with reason `RolledBack` instead of `Left`.
       */
      readonly rolledBackTo?: string;
    }
  | {
      readonly type: "MemberWindowsChanged";
      readonly member: string;
      readonly maintenance?: Maintenance;
    }
  /**
   * The cluster's support plan changed (absent: KubernetesOfficial); a run that requires long-term
   * support reads it when the member's turn comes (docs/engine.md#long-term-support).
   */
  | {
      readonly type: "MemberSupportPlanChanged";
      readonly member: string;
      readonly supportPlan?: SupportPlan;
    }
  /** The platform now offers other versions: members held for an unavailable target are looked at again. */
  | {
      readonly type: "AvailableVersionsChanged";
      readonly available: AvailableVersions;
    }
  /**
   * What the query of a metric gate gave (the hub asked Prometheus after a `MeasureGate`
   * action): judged and counted at the step's time (docs/engine.md#metric-gates).
   */
  | {
      readonly type: "GateMeasured";
      readonly gate: string;
      readonly outcome: QueryOutcome;
    }
  /** Time passed: deadlines, scheduled gates, waits and window openings are checked. */
  | { readonly type: "Tick" };

/** Which kind of object a transition is about. */
export type TransitionScope = "run" | "stage" | "group" | "member" | "gate";

/** What `step` asks its caller to do or record. */
export type RunAction =
  /** Publish the member's intent: the member starts now with this target. */
  | {
      readonly type: "StartMember";
      readonly member: string;
      readonly stage: string;
      readonly group: string;
      readonly target: MemberTarget;
    }
  /**
   * Measure a metric gate now: ask `query` (placeholders filled in) and send what it gave back as
   * a `GateMeasured` event. Asked again every interval until the gate decides; a measurement that
   * never comes back is simply not counted.
   */
  | {
      readonly type: "MeasureGate";
      readonly gate: string;
      readonly query: string;
      readonly stage: string;
      readonly group?: string;
    }
  /**
   * A state changed; every transition carries a timestamp and a message
   * (docs/semantics.md#operator-actions).
   */
  | {
      readonly type: "Transitioned";
      readonly scope: TransitionScope;
      readonly name: string;
      readonly stage?: string;
      readonly group?: string;
      readonly from: string;
      readonly to: string;
      readonly atMs: number;
      readonly message: string;
    };

/**
 * A bundle run's release of its revision to a member (docs/semantics.md#staged-bundle-runs). The
 * hub writes it as the bundle's partition releases are written (content of the cluster's
 * customization variant, sealed with its key); core has no content, so it says what, not how.
 */
export interface BundleRelease {
  readonly member: string;
  readonly bundle: string;
  readonly revision: string;
  /**
   * The member is started again after a failure (a retry): the agent must apply the revision
   * again although its intent already holds it, so the hub grows the cluster's redeploy counter.
   */
  readonly again: boolean;
}

/** A command the run cannot accept now; nothing was changed. */
export interface Rejection {
  readonly code: "invalid_argument" | "not_found" | "failed_precondition";
  readonly message: string;
}

/** What `step` returns. */
export interface StepResult<R> {
  readonly run: R;
  readonly actions: readonly RunAction[];
  /**
   * The intent changes the actions ask for, by member (see staged/intents.ts): what the caller
   * publishes once the step is stored. Empty when the step was rejected.
   */
  readonly intents: IntentChanges;
  /** Bundle runs: the releases of its revision the actions ask for (staged/intents.ts). */
  readonly releases: readonly BundleRelease[];
  readonly rejected?: Rejection;
  /** Reports of a `MembersReported` batch that did not apply (the rest did). */
  readonly ignored?: readonly Rejection[];
}
