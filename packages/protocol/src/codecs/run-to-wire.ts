/**
 * Core's Run → the wire, for the hub: full status, summaries for lists, transitions for watches.
 */
import type {
  Gate,
  MetricGate,
  Group,
  Member,
  MemberState,
  Run,
  Stage,
} from "@flotilla/core";
import type * as wire from "../generated/index.js";
import { DAY_OF_WEEK, WINDOW_SCOPE } from "./maintenance.js";
import { runPayloadToWire } from "./payload.js";
import { runOriginToWire } from "./run-origin.js";
import {
  GATE_STATE,
  GATE_TYPE,
  MEASUREMENT_VERDICT,
  MEMBER_STATE,
  opt,
  RUN_STATE,
  SCOPE_STATE,
  TRANSITION_SCOPE,
  type Transition,
} from "./run-status.js";

/** A metric gate's settings and measurements (docs/engine.md#metric-gates). */
function metricToWire(metric: MetricGate): wire.MetricGate {
  return {
    query: metric.query,
    ...opt("successCondition", metric.successCondition),
    ...opt("failureCondition", metric.failureCondition),
    intervalSeconds: metric.intervalSeconds,
    count: metric.count,
    failureLimit: metric.failureLimit,
    inconclusiveLimit: metric.inconclusiveLimit,
    measurements: metric.measurements.map((m) => ({
      atMs: m.atMs,
      values: [...(m.values ?? [])],
      hasValues: m.values !== undefined,
      verdict: MEASUREMENT_VERDICT.toWire(m.verdict),
      message: m.message,
    })),
    ...opt("nextAtMs", metric.nextAtMs),
    ...opt("lastQuery", metric.lastQuery),
    ...opt("verdict", metric.verdict),
  };
}

/** One gate of a run, as the run status and the gate list show it. */
export function gateToWire(gate: Gate): wire.Gate {
  return {
    id: gate.id,
    type: GATE_TYPE.toWire(gate.type),
    displayName: gate.displayName,
    state: GATE_STATE.toWire(gate.state),
    schedule:
      gate.schedule === undefined
        ? null
        : {
            startDay: DAY_OF_WEEK.toWire(gate.schedule.startDay),
            startMinutes: gate.schedule.startMinutes,
            utcOffsetMinutes: gate.schedule.utcOffsetMinutes,
          },
    ...opt("reachedAtMs", gate.reachedAtMs),
    ...opt("scheduledAtMs", gate.scheduledAtMs),
    ...opt("completedAtMs", gate.completedAtMs),
    ...opt("completedBy", gate.completedBy),
    message: gate.message,
    ...(gate.metric === undefined ? {} : { metric: metricToWire(gate.metric) }),
  };
}

function memberToWire(member: Member): wire.Member {
  const target = member.target;
  return {
    name: member.name,
    state: MEMBER_STATE.toWire(member.state),
    ...opt("reason", member.reason),
    message: member.message,
    stateChangedAtMs: member.stateChangedAtMs,
    ...opt("startedAtMs", member.startedAtMs),
    ...opt("finishedAtMs", member.finishedAtMs),
    ...opt("deadlineAtMs", member.deadlineAtMs),
    failureCount: member.failureCount,
    unreachable: member.unreachable,
    ...opt("notBeforeMs", member.notBeforeMs),
    ...opt("kubernetesVersion", member.kubernetesVersion),
    ...opt("region", member.region),
    target:
      target === undefined
        ? null
        : {
            ...opt("kubernetesVersion", target.kubernetesVersion),
            nodeImages: (target.nodeImages ?? []).map((c) => ({ ...c })),
            ...opt("revision", target.revision),
          },
    constrained: member.constrained,
    ...opt("lastReport", member.lastReport),
  };
}

function groupToWire(group: Group): wire.Group {
  return {
    name: group.name,
    state: SCOPE_STATE.toWire(group.state),
    ...opt("reason", group.reason),
    message: group.message,
    stateChangedAtMs: group.stateChangedAtMs,
    ...opt("startedAtMs", group.startedAtMs),
    ...opt("finishedAtMs", group.finishedAtMs),
    maxConcurrency: group.maxConcurrency,
    ...opt("configuredMaxConcurrency", group.configuredMaxConcurrency),
    ...opt("maxAllowedFailures", group.maxAllowedFailures ?? undefined),
    failureCount: group.failureCount,
    succeeded: group.succeeded,
    inFlight: group.inFlight,
    remaining: group.remaining,
    skipRequested: group.skipRequested,
    beforeGates: group.beforeGates.map(gateToWire),
    afterGates: group.afterGates.map(gateToWire),
    members: group.members.map(memberToWire),
    ...opt("wakeAtMs", group.wakeAtMs),
  };
}

function stageToWire(stage: Stage): wire.Stage {
  return {
    name: stage.name,
    state: SCOPE_STATE.toWire(stage.state),
    ...opt("reason", stage.reason),
    message: stage.message,
    stateChangedAtMs: stage.stateChangedAtMs,
    ...opt("startedAtMs", stage.startedAtMs),
    ...opt("finishedAtMs", stage.finishedAtMs),
    maxConcurrency: stage.maxConcurrency,
    ...opt("configuredMaxConcurrency", stage.configuredMaxConcurrency),
    ...opt("maxAllowedFailures", stage.maxAllowedFailures ?? undefined),
    failFast: stage.failFast,
    failureCount: stage.failureCount,
    inFlight: stage.inFlight,
    skipRequested: stage.skipRequested,
    afterStageWaitSeconds: stage.afterStageWaitSeconds,
    ...opt("sortingLabelKey", stage.sortingLabelKey),
    ...opt("waitUntilMs", stage.waitUntilMs),
    beforeGates: stage.beforeGates.map(gateToWire),
    afterGates: stage.afterGates.map(gateToWire),
    groups: stage.groups.map(groupToWire),
    memberCount: stage.memberCount,
  };
}

/** Encodes a run's full status; `revision` is the hub's store revision of the record. */
export function runToWire(run: Run, revision = 0): wire.RunStatus {
  return {
    name: run.name,
    payload: runPayloadToWire(run.payload),
    windowScope: WINDOW_SCOPE.toWire(run.windowScope),
    state: RUN_STATE.toWire(run.state),
    message: run.message,
    stateChangedAtMs: run.stateChangedAtMs,
    createdAtMs: run.createdAtMs,
    ...opt("startedAtMs", run.startedAtMs),
    ...opt("finishedAtMs", run.finishedAtMs),
    progressDeadlineSeconds: run.progressDeadlineSeconds,
    failureCount: run.failureCount,
    budgetExceeded: run.budgetExceeded,
    ...opt("haltMessage", run.haltMessage),
    stopRequested: run.stopRequested,
    ...opt("stopMessage", run.stopMessage),
    currentStage: run.currentStage,
    stages: run.stages.map(stageToWire),
    unassigned: [...run.unassigned],
    consistentNodeImages: { ...run.consistentNodeImages },
    ...opt("wakeAtMs", run.wakeAtMs),
    revision,
    ...runOriginToWire(run.origin),
  };
}

/** Encodes a run without its stages, for lists and watches. */
export function runSummaryToWire(
  run: Run,
  options: { readonly revision?: number; readonly strategyName?: string } = {},
): wire.RunSummary {
  const members: wire.MemberCounts = {
    total: 0,
    notStarted: 0,
    pending: 0,
    running: 0,
    succeeded: 0,
    failed: 0,
    skipped: 0,
  };
  const key = {
    NotStarted: "notStarted",
    Pending: "pending",
    Running: "running",
    Succeeded: "succeeded",
    Failed: "failed",
    Skipped: "skipped",
  } as const satisfies Record<MemberState, keyof wire.MemberCounts>;
  for (const stage of run.stages)
    for (const group of stage.groups)
      for (const member of group.members) {
        members.total = (members.total ?? 0) + 1;
        const k = key[member.state];
        members[k] = (members[k] ?? 0) + 1;
      }
  const current = run.stages[run.currentStage];
  return {
    name: run.name,
    payload: runPayloadToWire(run.payload),
    state: RUN_STATE.toWire(run.state),
    message: run.message,
    createdAtMs: run.createdAtMs,
    ...opt("startedAtMs", run.startedAtMs),
    ...opt("finishedAtMs", run.finishedAtMs),
    failureCount: run.failureCount,
    members,
    ...opt(
      "currentStage",
      run.state === "NotStarted" ? undefined : current?.name,
    ),
    ...opt("strategyName", options.strategyName),
    revision: options.revision ?? 0,
    ...runOriginToWire(run.origin),
  };
}

/** Encodes a transition. */
export function transitionToWire(transition: Transition): wire.Transition {
  return {
    scope: TRANSITION_SCOPE.toWire(transition.scope),
    name: transition.name,
    ...opt("stage", transition.stage),
    ...opt("group", transition.group),
    fromState: transition.from,
    toState: transition.to,
    atMs: transition.atMs,
    message: transition.message,
  };
}
