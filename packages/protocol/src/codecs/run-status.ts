/**
 * Staged update runs on the wire (docs/semantics.md#staged-runs): the status view of a run that
 * clients get (core's names and shapes without the engine's private bookkeeping), and the run
 * enums.
 */
import type {
  Gate,
  GateState,
  Group,
  Member,
  MemberState,
  MeasurementVerdict,
  Run,
  RunAction,
  RunState,
  ScopeState,
  Stage,
  TransitionScope,
} from "@flotilla/core";
import type * as wire from "../generated/index.js";
import { enumCodec } from "./enum-codec.js";

/**
 * A member as status shows it: core's Member without the frozen maintenance, node pools and
 * support plan (`cluster get` shows the plan).
 */
export type MemberView = Omit<
  Member,
  "maintenance" | "nodePools" | "supportPlan"
>;

/** A group as status shows it: no scheduling cursors. */
export interface GroupView extends Omit<
  Group,
  "members" | "cursor" | "deferred" | "constrained"
> {
  readonly members: MemberView[];
}

/** A stage as status shows it. */
export interface StageView extends Omit<Stage, "groups"> {
  readonly groups: GroupView[];
}

/** A run as status shows it, with the hub's store revision (0 when unknown). */
export interface RunView extends Omit<
  Run,
  "apiVersion" | "stages" | "available" | "deadlines"
> {
  readonly stages: StageView[];
  readonly revision: number;
}

/** A state change inside a run (core's `Transitioned` action). */
export type Transition = Extract<RunAction, { type: "Transitioned" }>;

/** Run states ↔ `RUN_STATE_*`. */
export const RUN_STATE = enumCodec<RunState, wire.RunState__Output>({
  NotStarted: "RUN_STATE_NOT_STARTED",
  Running: "RUN_STATE_RUNNING",
  Pending: "RUN_STATE_PENDING",
  Stopping: "RUN_STATE_STOPPING",
  Stopped: "RUN_STATE_STOPPED",
  Failed: "RUN_STATE_FAILED",
  Completed: "RUN_STATE_COMPLETED",
  Skipped: "RUN_STATE_SKIPPED",
});

/** Stage and group states ↔ `SCOPE_STATE_*`. */
export const SCOPE_STATE = enumCodec<ScopeState, wire.ScopeState__Output>({
  NotStarted: "SCOPE_STATE_NOT_STARTED",
  Running: "SCOPE_STATE_RUNNING",
  Pending: "SCOPE_STATE_PENDING",
  Skipped: "SCOPE_STATE_SKIPPED",
  Failed: "SCOPE_STATE_FAILED",
  Completed: "SCOPE_STATE_COMPLETED",
  Stopped: "SCOPE_STATE_STOPPED",
});

/** Member states ↔ `MEMBER_STATE_*`. */
export const MEMBER_STATE = enumCodec<MemberState, wire.MemberState__Output>({
  NotStarted: "MEMBER_STATE_NOT_STARTED",
  Pending: "MEMBER_STATE_PENDING",
  Running: "MEMBER_STATE_RUNNING",
  Succeeded: "MEMBER_STATE_SUCCEEDED",
  Failed: "MEMBER_STATE_FAILED",
  Skipped: "MEMBER_STATE_SKIPPED",
});

/** Gate states ↔ `GATE_STATE_*`. */
export const GATE_STATE = enumCodec<GateState, wire.GateState__Output>({
  NotStarted: "GATE_STATE_NOT_STARTED",
  Pending: "GATE_STATE_PENDING",
  Completed: "GATE_STATE_COMPLETED",
  Skipped: "GATE_STATE_SKIPPED",
  Failed: "GATE_STATE_FAILED",
});

/** Measurement verdicts ↔ `MEASUREMENT_VERDICT_*`. */
export const MEASUREMENT_VERDICT = enumCodec<
  MeasurementVerdict,
  wire.MeasurementVerdict__Output
>({
  Successful: "MEASUREMENT_VERDICT_SUCCESSFUL",
  Failed: "MEASUREMENT_VERDICT_FAILED",
  Inconclusive: "MEASUREMENT_VERDICT_INCONCLUSIVE",
});

/** Gate types ↔ `GATE_TYPE_*`. */
export const GATE_TYPE = enumCodec<Gate["type"], wire.GateType__Output>({
  Approval: "GATE_TYPE_APPROVAL",
  ScheduledStart: "GATE_TYPE_SCHEDULED_START",
  Metric: "GATE_TYPE_METRIC",
});

/** Transition scopes ↔ `TRANSITION_SCOPE_*`. */
export const TRANSITION_SCOPE = enumCodec<
  TransitionScope,
  wire.TransitionScope__Output
>({
  run: "TRANSITION_SCOPE_RUN",
  stage: "TRANSITION_SCOPE_STAGE",
  group: "TRANSITION_SCOPE_GROUP",
  member: "TRANSITION_SCOPE_MEMBER",
  gate: "TRANSITION_SCOPE_GATE",
});

/** `{key: value}` when the value is set, `{}` otherwise (optional fields stay absent). */
export function opt<K extends string, V>(
  key: K,
  value: V | undefined,
): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Partial<Record<K, V>>);
}
