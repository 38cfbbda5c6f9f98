/**
 * The documented output shapes of `flotilla plan` and `flotilla simulate` (`-o json`, SPEC section 9).
 * They are a public contract: fields are only ever added.
 */

/** Which input file a problem belongs to. */
export type InputSource =
  "clusters" | "clusterGroups" | "strategy" | "scenario";

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

/** A group inside a wave (a Fleet partition is a wave with one group of the same name). */
export interface PlanGroup {
  readonly name: string;
  /** Cluster names in the order they are taken. */
  readonly clusters: readonly string[];
  readonly maxConcurrency?: number;
  readonly maxAllowedFailures?: number | null;
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

/** A member's final state in a simulation. */
export interface SimulatedMember {
  readonly name: string;
  readonly state: string;
  readonly reason?: string;
  /** The last message about the member (e.g. the error of a failed upgrade). */
  readonly message?: string;
  readonly releasedAt?: string;
  readonly finishedAt?: string;
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
  readonly timeline: readonly TimelineEntry[];
  readonly waves: readonly SimulatedWave[];
  readonly unassigned: readonly string[];
  readonly warnings: readonly PlanWarning[];
}
