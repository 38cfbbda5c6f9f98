/**
 * The working context of one `step`: the run, the current time, the actions produced, and the state
 * setters that record every transition with a timestamp and message
 * (docs/semantics.md#operator-actions).
 */
import type { RunAction } from "./events.js";
import type {
  Gate,
  GateState,
  Group,
  Member,
  MemberState,
  Run,
  RunState,
  ScopeState,
  Stage,
} from "./run.js";
import { compact } from "../compact.js";

/** Mutable state of one step. */
export interface StepContext {
  readonly run: Run;
  readonly nowMs: number;
  readonly actions: RunAction[];
}

/** Sets the run's state, recording a transition when state or message changes. */
export function setRunState(
  ctx: StepContext,
  state: RunState,
  message: string,
): void {
  const run = ctx.run;
  if (run.state === state && run.message === message) return;
  const from = run.state;
  run.state = state;
  run.message = message;
  if (from === state) return;
  run.stateChangedAtMs = ctx.nowMs;
  ctx.actions.push({
    type: "Transitioned",
    scope: "run",
    name: run.name,
    from,
    to: state,
    atMs: ctx.nowMs,
    message,
  });
}

/** Sets a stage's or group's state and message; timestamps follow the state. */
function setScopeState(
  ctx: StepContext,
  scope: "stage" | "group",
  target: Stage | Group,
  where: { readonly stage: string; readonly group?: string },
  state: ScopeState,
  message: string,
): void {
  if (target.state === state && target.message === message) return;
  const from = target.state;
  target.state = state;
  target.message = message;
  if (from === state) return;
  target.stateChangedAtMs = ctx.nowMs;
  if (state === "Running" || state === "Pending")
    target.startedAtMs ??= ctx.nowMs;
  if (state === "Completed" || state === "Failed" || state === "Skipped")
    target.finishedAtMs = ctx.nowMs;
  ctx.actions.push({
    type: "Transitioned",
    scope,
    name: target.name,
    ...where,
    from,
    to: state,
    atMs: ctx.nowMs,
    message,
  });
}

/** Sets a stage's state and message. */
export function setStageState(
  ctx: StepContext,
  stage: Stage,
  state: ScopeState,
  message: string,
): void {
  setScopeState(ctx, "stage", stage, { stage: stage.name }, state, message);
}

/** Sets a group's state and message. */
export function setGroupState(
  ctx: StepContext,
  stage: Stage,
  group: Group,
  state: ScopeState,
  message: string,
): void {
  const where = { stage: stage.name, group: group.name };
  setScopeState(ctx, "group", group, where, state, message);
}

/** Sets a member's state, reason and message. */
export function setMemberState(
  ctx: StepContext,
  stage: Stage,
  group: Group,
  member: Member,
  state: MemberState,
  message: string,
  reason?: string,
): void {
  if (
    member.state === state &&
    member.message === message &&
    member.reason === reason
  )
    return;
  const from = member.state;
  member.state = state;
  member.message = message;
  if (reason === undefined) delete member.reason;
  else member.reason = reason;
  if (from === state) return;
  member.stateChangedAtMs = ctx.nowMs;
  ctx.actions.push({
    type: "Transitioned",
    scope: "member",
    name: member.name,
    stage: stage.name,
    group: group.name,
    from,
    to: state,
    atMs: ctx.nowMs,
    message,
  });
}

/** Sets a gate's state and message. */
export function setGateState(
  ctx: StepContext,
  gate: Gate,
  state: GateState,
  message: string,
  scope: { stage: string; group?: string },
): void {
  if (gate.state === state && gate.message === message) return;
  const from = gate.state;
  gate.state = state;
  gate.message = message;
  if (from === state) return;
  if (state === "Pending") gate.reachedAtMs = ctx.nowMs;
  if (state === "Completed") gate.completedAtMs = ctx.nowMs;
  ctx.actions.push({
    type: "Transitioned",
    scope: "gate",
    name: gate.id,
    stage: scope.stage,
    ...compact({ group: scope.group }),
    from,
    to: state,
    atMs: ctx.nowMs,
    message,
  });
}

/** ISO-8601 rendering of a time for messages (pure: no clock). */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}
