/**
 * Following a run from WatchUpdateRun's changes: a change carries the run's summary and its
 * transitions, not the changed records, so the watcher patches its last snapshot (states, the
 * counts the tree shows) to redraw without asking the hub again. The hub sends a fresh snapshot
 * whenever changes alone would not do; this only has to stay right between snapshots.
 */
import {
  isRunFinished,
  type GateState,
  type MemberState,
  type RunState,
  type ScopeState,
} from "@flotilla/core";
import {
  RUN_STATE,
  transitionFromWire,
  type RunView,
  type Transition,
  type wire,
} from "@flotilla/protocol";
import { DOT } from "./limits.js";
import type { Style } from "./style.js";
import { styleState } from "./style.js";
import { formatInstant } from "./time.js";

const RUN_STATES: readonly string[] = RUN_STATE.values;
const SCOPE_STATES: readonly string[] = [
  "NotStarted",
  "Running",
  "Pending",
  "Skipped",
  "Failed",
  "Completed",
  "Stopped",
];
const MEMBER_STATES: readonly string[] = [
  "NotStarted",
  "Pending",
  "Running",
  "Succeeded",
  "Failed",
  "Skipped",
];
const GATE_STATES: readonly string[] = [
  "NotStarted",
  "Pending",
  "Completed",
  "Skipped",
];

function applyTransition(
  run: RunView & { state: RunState },
  t: Transition,
): void {
  const stages = run.stages.filter(
    (s) => t.stage === undefined || s.name === t.stage,
  );
  switch (t.scope) {
    case "run":
      if (RUN_STATES.includes(t.to)) run.state = t.to as RunState;
      return;
    case "stage":
      for (const s of run.stages.filter((s) => s.name === t.name))
        if (SCOPE_STATES.includes(t.to)) s.state = t.to as ScopeState;
      return;
    case "group":
      for (const g of stages
        .flatMap((s) => s.groups)
        .filter((g) => g.name === t.name))
        if (SCOPE_STATES.includes(t.to)) g.state = t.to as ScopeState;
      return;
    case "member":
      for (const s of stages)
        for (const g of s.groups.filter(
          (g) => t.group === undefined || g.name === t.group,
        ))
          for (const m of g.members.filter((m) => m.name === t.name)) {
            if (!MEMBER_STATES.includes(t.to) || m.state === t.to) continue;
            m.state = t.to as MemberState;
            m.message = t.message;
            m.stateChangedAtMs = t.atMs;
            delete m.reason;
            if (t.to === "Running") m.startedAtMs = t.atMs;
            if (t.to === "Succeeded") g.succeeded++;
            if (t.to === "Failed") {
              m.failureCount++;
              g.failureCount++;
              s.failureCount++;
            }
          }
      return;
    case "gate":
      for (const s of stages) {
        const gates = [
          ...s.beforeGates,
          ...s.afterGates,
          ...s.groups.flatMap((g) => [...g.beforeGates, ...g.afterGates]),
        ];
        for (const gate of gates.filter((g) => g.id === t.name)) {
          if (!GATE_STATES.includes(t.to)) continue;
          gate.state = t.to as GateState;
          if (t.to === "Pending") gate.reachedAtMs = t.atMs;
          if (t.to === "Completed") gate.completedAtMs = t.atMs;
        }
      }
      return;
  }
}

/** The transitions of a change, decoded (those this client cannot read are left out). */
export function changeTransitions(
  change: wire.RunChange__Output,
): Transition[] {
  return change.transitions.flatMap((raw) => {
    const decoded = transitionFromWire(raw);
    return decoded.ok ? [decoded.value] : [];
  });
}

/** Applies `change` to `run` in place (run is the watcher's own decoded copy). */
export function applyRunChange(
  run: RunView,
  change: wire.RunChange__Output,
): void {
  const mutable = run as RunView & {
    state: RunState;
    failureCount: number;
    message: string;
  };
  for (const t of changeTransitions(change)) applyTransition(mutable, t);
  const summary = change.summary;
  if (summary === null) return;
  const state = RUN_STATE.fromWire(summary.state);
  if (state !== undefined) mutable.state = state;
  mutable.failureCount = summary.failureCount;
  mutable.message = summary.message;
  if (summary.startedAtMs !== undefined)
    mutable.startedAtMs = summary.startedAtMs;
  if (summary.finishedAtMs !== undefined)
    mutable.finishedAtMs = summary.finishedAtMs;
  const current =
    summary.currentStage === undefined
      ? -1
      : run.stages.findIndex((s) => s.name === summary.currentStage);
  mutable.currentStage =
    current === -1
      ? state !== undefined && isRunFinished(state)
        ? run.stages.length
        : run.currentStage
      : current;
}

/** One line per transition: `TIME  member c-1 (canary/eu)  Running → Succeeded · message`. */
export function transitionLine(t: Transition, style: Style): string {
  // A group named like its stage (the usual single-group stage) is shown once.
  const where = [...new Set([t.stage, t.group])]
    .filter((w) => w !== undefined && w !== t.name)
    .join("/");
  const subject = `${t.scope} ${t.name}${where === "" ? "" : ` (${where})`}`;
  const change = `${styleState(style, t.from)} → ${styleState(style, t.to)}`;
  const message =
    t.message === "" || t.message === t.to ? "" : `${DOT}${t.message}`;
  return `${formatInstant(t.atMs)}  ${subject}  ${change}${message}`;
}
