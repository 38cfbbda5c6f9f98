/**
 * The documented output shapes of `flotilla plan` and `flotilla simulate` (`-o json`,
 * docs/semantics.md#offline-planning). They are a public contract: fields are only ever added.
 */
import type { NodeImageSelection, UpgradePayload } from "./upgrade.js";
import type { UpgradeChannel, UpgradeProfile } from "./versions/channels.js";

/** Which input file a problem belongs to. */
export type InputSource =
  | "clusters"
  | "clusterGroups"
  | "strategy"
  | "scenario"
  | "catalogue"
  | "profile";

/** A problem in one of the offline-preview inputs. */
export interface InputProblem {
  readonly source: InputSource;
  readonly path: string;
  readonly message: string;
  readonly value?: unknown;
}

/** A warning about a setting that disables or weakens a gate. */
export interface PlanWarning {
  readonly code: string;
  readonly message: string;
}

/** A gate of a stage or group of a staged run, in `plan`. */
export interface PlanGate {
  /** `stage:NAME:before`, `group:NAME:after#2`, … */
  readonly id: string;
  readonly type: "Approval" | "ScheduledStart" | "Metric";
  readonly displayName: string;
  /** Metric gates: what is measured and how it is judged (docs/engine.md#metric-gates). */
  readonly metric?: {
    readonly query: string;
    readonly successCondition?: string;
    readonly failureCondition?: string;
    readonly intervalSeconds: number;
    readonly count: number;
    readonly failureLimit: number;
    readonly inconclusiveLimit: number;
  };
}

/** A group inside a wave (a Fleet partition is a wave with one group of the same name). */
export interface PlanGroup {
  readonly name: string;
  /** Cluster names in the order they are taken. */
  readonly clusters: readonly string[];
  readonly maxConcurrency?: number;
  readonly maxAllowedFailures?: number | null;
  /** Staged: the group's gates, before and after (absent when it has none). */
  readonly gates?: readonly PlanGate[];
}

/** A wave: a Fleet partition or a staged-run stage. */
export interface PlanWave {
  readonly name: string;
  readonly kind: "partition" | "stage";
  readonly maxUnavailable?: number;
  readonly maxConcurrency?: number;
  readonly maxAllowedFailures?: number | null;
  /** Staged: the label whose integer value orders the members of the stage's groups. */
  readonly sortingLabelKey?: string;
  readonly groups: readonly PlanGroup[];
  /** Staged: the stage's gates, before and after (absent when it has none). */
  readonly gates?: readonly PlanGate[];
}

/** `flotilla plan -o json`. */
export interface PlanOutput {
  readonly apiVersion: "flotilla.dev/v1";
  readonly dialect: "fleet" | "staged";
  readonly waves: readonly PlanWave[];
  readonly limits: {
    readonly maxUnavailable?: number;
    readonly maxUnavailablePartitions?: number;
    readonly maxNew?: number;
  };
  readonly unassigned: readonly string[];
  readonly warnings: readonly PlanWarning[];
}

/** One line of a simulation timeline. `at` is an ISO timestamp. */
export interface TimelineEntry {
  readonly at: string;
  readonly type: string;
  readonly cluster?: string;
  readonly wave?: string;
  readonly group?: string;
  readonly gate?: string;
  readonly from?: string;
  readonly to?: string;
  readonly message: string;
}

/** One node pool moving to a new image. */
export interface PlannedNodeImage {
  readonly pool: string;
  readonly from: string;
  readonly to: string;
}

/** What one member of an upgrade run is planned to do: upgrade to targets, skip, or fail. */
export interface PlannedMember {
  readonly name: string;
  readonly wave: string;
  readonly group: string;
  /** `fail`: a member the run fails when it is reached (a non-LTS cluster in an LTS-only run). */
  readonly action: "upgrade" | "skip" | "fail";
  readonly kubernetesVersion?: string;
  readonly nodeImages?: readonly PlannedNodeImage[];
  /** Why it skips or fails, or `TargetNotAvailable` for a member that waits for its target. */
  readonly reason?: string;
  readonly message: string;
}

/** The per-member targets of an upgrade run, decided before its start. */
export interface UpgradePlan {
  /** When the targets were decided (a simulated run's start); absent in `plan --channel`. */
  readonly at?: string;
  readonly upgrade: UpgradePayload;
  /** Consistent: the version chosen per image family, the same for every member. */
  readonly consistentNodeImages?: Readonly<Record<string, string>>;
  /** Consistent: image families some member uses with no version offered to every member. */
  readonly missingNodeImages?: readonly string[];
  readonly members: readonly PlannedMember[];
}

/** A member's final state in a simulation. */
export interface SimulatedMember {
  readonly name: string;
  readonly state: string;
  readonly reason?: string;
  /** The last message about the member (e.g. the error of a failed upgrade). */
  readonly message?: string;
  readonly releasedAt?: string;
  readonly finishedAt?: string;
  /** Upgrade runs: what the member was last started with. */
  readonly target?: {
    readonly kubernetesVersion?: string;
    readonly nodeImages?: readonly PlannedNodeImage[];
  };
}

/** A group's final state in a simulation. */
export interface SimulatedGroup {
  readonly name: string;
  readonly state: string;
  /** Staged: why a group was skipped without an operator (`NoMembers`). */
  readonly reason?: string;
  readonly failureCount: number;
  readonly members: readonly SimulatedMember[];
}

/** A wave's final state in a simulation. */
export interface SimulatedWave {
  readonly name: string;
  readonly state: string;
  /** Staged: why a stage was skipped without an operator (`NoMembers`). */
  readonly reason?: string;
  readonly failureCount: number;
  readonly groups: readonly SimulatedGroup[];
}

/** `flotilla simulate -o json`. */
export interface SimulationOutput {
  readonly apiVersion: "flotilla.dev/v1";
  readonly dialect: "fleet" | "staged";
  readonly start: string;
  readonly end: string;
  readonly durationSeconds: number;
  readonly finalState: string;
  readonly failureCount: number;
  /** True when the rollout did not finish: `until` was reached, or it stalled (e.g. an approval never given). */
  readonly truncated: boolean;
  /** Upgrade runs: each member's target as decided before the start. */
  readonly plan?: UpgradePlan;
  readonly timeline: readonly TimelineEntry[];
  readonly waves: readonly SimulatedWave[];
  readonly unassigned: readonly string[];
  readonly warnings: readonly PlanWarning[];
}

/** What one auto-upgrade channel resolves to with a catalogue: an upgrade, or why there is none. */
export interface ChannelTarget {
  readonly channel: UpgradeChannel;
  readonly upgrade?: UpgradePayload;
  /** The target is past standard support: only clusters with long-term support may take it. */
  readonly requiresLongTermSupport?: boolean;
  readonly reason?: string;
}

/** `flotilla plan --channel … -o json`. */
export interface ChannelPlanOutput {
  readonly apiVersion: "flotilla.dev/v1";
  /** The auto-upgrade profile planned, as AKS names its fields. */
  readonly profile: UpgradeProfile & {
    readonly nodeImageSelection: NodeImageSelection;
  };
  /** The profile's upgrade; absent when its channel resolves to nothing (`reason` says why). */
  readonly upgrade?: UpgradePayload;
  readonly requiresLongTermSupport?: boolean;
  readonly reason?: string;
  /** Every channel against the same catalogue, for comparison (TargetKubernetesVersion when given). */
  readonly channels: readonly ChannelTarget[];
  /** Each member's target in run order, when the profile resolves to an upgrade. */
  readonly plan?: UpgradePlan;
  readonly unassigned: readonly string[];
  readonly warnings: readonly PlanWarning[];
}
