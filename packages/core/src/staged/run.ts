/**
 * The staged update run record (docs/semantics.md#staged-runs): a frozen member list, resolved
 * limits, gates and every state with its timestamp and message. It is plain JSON data so the hub
 * can persist it as is.
 *
 * Runs are large (one entry per member) and events are frequent, so {@link step} updates a run in
 * place and returns it: each event costs time proportional to the work it causes, never to the
 * size of the fleet. Callers that need the previous value keep a copy ({@link cloneRun}).
 */
import type { Cluster, NodePool, SupportPlan } from "../cluster.js";
import type { Maintenance, WindowScope } from "../maintenance/windows.js";
import type {
  AvailableVersions,
  NodeImageSkip,
  UpgradePayload,
} from "../upgrade.js";
import type { Measurement } from "../metrics/analysis.js";
import type { DayOfWeek } from "../maintenance/calendar.js";
import { compact } from "../compact.js";

/** Run states (docs/semantics.md#operator-actions). */
export type RunState =
  | "NotStarted"
  | "Running"
  | "Pending"
  | "Stopping"
  | "Stopped"
  | "Failed"
  | "Completed"
  | "Skipped";

/** Stage and group states (docs/semantics.md#operator-actions). */
export type ScopeState =
  | "NotStarted"
  | "Running"
  | "Pending"
  | "Skipped"
  | "Failed"
  | "Completed"
  | "Stopped";

/** Member states (docs/semantics.md#operator-actions). */
export type MemberState =
  "NotStarted" | "Pending" | "Running" | "Succeeded" | "Failed" | "Skipped";

/** Gate states; only a metric gate can be `Failed` (docs/engine.md#metric-gates). */
export type GateState =
  "NotStarted" | "Pending" | "Completed" | "Skipped" | "Failed";

/** A metric gate of a run: its settings, copied from the strategy, and what it measured. */
export interface MetricGate {
  /** As written in the strategy, placeholders and all. */
  readonly query: string;
  readonly successCondition?: string;
  readonly failureCondition?: string;
  readonly intervalSeconds: number;
  readonly count: number;
  readonly failureLimit: number;
  readonly inconclusiveLimit: number;
  /** Every measurement since the gate was last reached, oldest first. */
  measurements: Measurement[];
  /** When the next measurement is due (while measuring). */
  nextAtMs?: number;
  /** The query last asked, placeholders filled in. */
  lastQuery?: string;
  /** How the measurements ended; absent while measuring. */
  verdict?: "Passed" | "Failed" | "Inconclusive";
}

/** What a run rolls out: a platform upgrade, or a bundle revision. */
export type RunPayload =
  | { readonly kind: "upgrade"; readonly upgrade: UpgradePayload }
  | {
      readonly kind: "bundle";
      readonly bundle: string;
      readonly revision: string;
    };

/** A gate instance of a run. Ids are `stage:NAME:before|after` / `group:NAME:before|after`. */
export interface Gate {
  readonly id: string;
  readonly type: "Approval" | "ScheduledStart" | "Metric";
  readonly displayName: string;
  state: GateState;
  /** Metric: the query, its judgement and its measurements. */
  readonly metric?: MetricGate;
  /** ScheduledStart: the configured weekly moment. */
  readonly schedule?: {
    readonly startDay: DayOfWeek;
    readonly startMinutes: number;
    readonly utcOffsetMinutes: number;
  };
  /** When the run reached the gate. */
  reachedAtMs?: number;
  /** ScheduledStart: the absolute start computed when reached. */
  scheduledAtMs?: number;
  completedAtMs?: number;
  /** Who completed it (approver identity, or "schedule"). */
  completedBy?: string;
  message: string;
}

/** What a member is asked to do when it starts (upgrade details are decided at its start). */
export interface MemberTarget {
  readonly kubernetesVersion?: string;
  readonly nodeImages?: readonly {
    readonly pool: string;
    readonly from: string;
    readonly to: string;
  }[];
  readonly revision?: string;
}

/** One member (cluster) of a run. */
export interface Member {
  readonly name: string;
  state: MemberState;
  /** Machine-readable reason for Skipped / Failed / Pending (AlreadyAtTarget, TimedOut, Left, ...). */
  reason?: string;
  message: string;
  stateChangedAtMs: number;
  startedAtMs?: number;
  finishedAtMs?: number;
  deadlineAtMs?: number;
  /** Failed attempts of this member (a retry keeps the history). */
  failureCount: number;
  /** The agent missed its heartbeats (docs/semantics.md#offline-clusters). */
  unreachable: boolean;
  /** Do not start before this time (agent answered Pending until then). */
  notBeforeMs?: number;
  /** Owner-set windows and freezes, updated when the agent reports changes. */
  maintenance?: Maintenance;
  /** Facts the upgrade decision needs, frozen at creation. */
  readonly kubernetesVersion?: string;
  readonly region?: string;
  readonly nodePools?: readonly NodePool[];
  /**
   * The cluster's support plan (absent: KubernetesOfficial), updated when its agent reports
   * another: read when the member's turn comes (docs/engine.md#long-term-support).
   */
  supportPlan?: SupportPlan;
  target?: MemberTarget;
  /**
   * Bundle runs: the last state its agent reported for the run's revision while the member is in
   * flight (`NotReady: ...`), named when it times out (docs/semantics.md#staged-bundle-runs).
   */
  lastReport?: string;
  /** Node pools the upgrade leaves on their image, and why; for the member's final message. */
  skippedNodeImages?: readonly NodeImageSkip[];
  /**
   * Members with windows or freezes for the run's scope are ordered dynamically
   * (docs/semantics.md#order-and-concurrency).
   */
  constrained: boolean;
}

/** A group of a stage. */
export interface Group {
  readonly name: string;
  state: ScopeState;
  /** Machine-readable reason for a Skipped group nobody asked to skip (`NoMembers`). */
  reason?: string;
  message: string;
  stateChangedAtMs: number;
  startedAtMs?: number;
  finishedAtMs?: number;
  /** Effective concurrency: min(configured, stage value, group size), at least 1. */
  readonly maxConcurrency: number;
  /** The value as written, for status. */
  readonly configuredMaxConcurrency?: string;
  /** Resolved budget; null = no limit of its own (docs/semantics.md#failure-budget). */
  readonly maxAllowedFailures: number | null;
  failureCount: number;
  /** Members that Succeeded (with failureCount and remaining, tells "all skipped" without a scan). */
  succeeded: number;
  inFlight: number;
  /** Members not yet Succeeded / Failed / Skipped. */
  remaining: number;
  skipRequested: boolean;
  readonly beforeGates: Gate[];
  readonly afterGates: Gate[];
  /**
   * Members in the order they are taken within a window category: by the stage's sortingLabelKey
   * value when it has one, then by name (byte order); see staged/member-order.ts.
   */
  readonly members: Member[];
  /** Index of the next unconstrained member never looked at. */
  cursor: number;
  /** Unconstrained members passed over (unreachable, retried, held): looked at again on every fill. */
  deferred: number[];
  /** Indices of constrained members (windows or freezes for the run's scope). */
  constrained: number[];
  /** Earliest time something in this group may become startable (window opening, hold expiry). */
  wakeAtMs?: number;
}

/** A stage of a run. */
export interface Stage {
  readonly name: string;
  state: ScopeState;
  /** Machine-readable reason for a Skipped stage nobody asked to skip (`NoMembers`). */
  reason?: string;
  message: string;
  stateChangedAtMs: number;
  startedAtMs?: number;
  finishedAtMs?: number;
  readonly maxConcurrency: number;
  readonly configuredMaxConcurrency?: string;
  readonly maxAllowedFailures: number | null;
  /**
   * True when no level of this stage set a budget: the first failure fails the run
   * (docs/semantics.md#failure-budget).
   */
  readonly failFast: boolean;
  failureCount: number;
  inFlight: number;
  skipRequested: boolean;
  readonly afterStageWaitSeconds: number;
  /** The label whose integer value orders the members of the stage's groups. */
  readonly sortingLabelKey?: string;
  waitUntilMs?: number;
  readonly beforeGates: Gate[];
  readonly afterGates: Gate[];
  readonly groups: Group[];
  readonly memberCount: number;
}

/** Where a member lives in the run. */
export type MemberLocation = readonly [
  stage: number,
  group: number,
  member: number,
];

/** A staged update run. */
export interface Run {
  readonly apiVersion: "flotilla.dev/v1";
  readonly name: string;
  readonly payload: RunPayload;
  /** Which maintenance-window scope the run honours. */
  readonly windowScope: WindowScope;
  state: RunState;
  message: string;
  stateChangedAtMs: number;
  readonly createdAtMs: number;
  startedAtMs?: number;
  finishedAtMs?: number;
  readonly progressDeadlineSeconds: number;
  failureCount: number;
  /** A budget was exceeded: nothing new starts until an operator starts the run again. */
  budgetExceeded: boolean;
  /** Why the run is stopping or failed because of a budget. */
  haltMessage?: string;
  stopRequested: boolean;
  /** Who stopped the run and why, for its `Stopped` message ("Stopped by ops: incident"). */
  stopMessage?: string;
  /** Index of the stage being worked on; `stages.length` once all are done. */
  currentStage: number;
  readonly stages: Stage[];
  readonly unassigned: readonly string[];
  /** Node images chosen at creation for `Consistent` selection, per image family. */
  readonly consistentNodeImages?: Readonly<Record<string, string>>;
  /** Versions the platform offered at creation; `Latest` node images are chosen from it at each start. */
  available?: AvailableVersions;
  /** In-flight deadlines in start order: `[deadlineAtMs, member]`; stale entries are skipped lazily. */
  deadlines: [number, string][];
  /** Earliest time a `Tick` can change anything; undefined when only an event can. */
  wakeAtMs?: number;
  /** The auto-upgrade profile that made the run; absent for runs an operator created. */
  readonly origin?: RunOrigin;
}

/** The auto-upgrade profile a run was made from (docs/engine.md#auto-upgrade-profiles). */
export interface RunOrigin {
  readonly profile: string;
  readonly channel: string;
  /** What the profile resolved to: "1.31.2", or the newest image of each family. */
  readonly target: string;
  /** `hub`: created and started on a catalogue change; `generate`: created on an operator's request. */
  readonly createdBy: "hub" | "generate";
}

/** The facts of a member as a cluster, for the upgrade decisions made when it starts. */
export function memberAsCluster(member: Member): Cluster {
  return {
    name: member.name,
    labels: {},
    groups: [],
    nodePools: member.nodePools ?? [],
    ...compact({
      kubernetesVersion: member.kubernetesVersion,
      region: member.region,
      supportPlan: member.supportPlan,
    }),
  };
}

/** A deep copy of a run (step updates runs in place). */
export function cloneRun(run: Run): Run {
  return structuredCloneJson(run);
}

function structuredCloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** True for states a run never leaves by itself. */
export function isRunFinished(state: RunState): boolean {
  return (
    state === "Completed" ||
    state === "Failed" ||
    state === "Stopped" ||
    state === "Skipped"
  );
}

/** True for member states that end a member's part in the run. */
export function isMemberDone(state: MemberState): boolean {
  return state === "Succeeded" || state === "Failed" || state === "Skipped";
}
