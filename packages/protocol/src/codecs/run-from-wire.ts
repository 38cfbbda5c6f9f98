/**
 * RunStatus → {@link RunView}, for clients such as the CLI. The hub is trusted, but a newer hub may
 * send enum values this client does not know: those are reported as problems with their paths.
 */
import {
  fail,
  joinPath,
  ok,
  type Gate,
  type MetricGate,
  type Problem,
  type Result,
} from "@flotilla/core";
import type * as wire from "../generated/index.js";
import { DAY_OF_WEEK, WINDOW_SCOPE } from "./maintenance.js";
import { runPayloadFromWire } from "./payload.js";
import { runOriginFromWire } from "./run-origin.js";
import {
  GATE_STATE,
  GATE_TYPE,
  MEASUREMENT_VERDICT,
  MEMBER_STATE,
  opt,
  RUN_STATE,
  SCOPE_STATE,
  TRANSITION_SCOPE,
  type GroupView,
  type MemberView,
  type RunView,
  type StageView,
  type Transition,
} from "./run-status.js";

class Decoder {
  readonly problems: Problem[] = [];

  gate(g: wire.Gate__Output, path: string): Gate {
    const schedule = g.schedule;
    return {
      id: g.id,
      type: GATE_TYPE.decode(
        g.type,
        joinPath(path, "type"),
        this.problems,
        "Approval",
      ),
      displayName: g.displayName,
      state: GATE_STATE.decode(
        g.state,
        joinPath(path, "state"),
        this.problems,
        "NotStarted",
      ),
      ...(schedule === null
        ? {}
        : {
            schedule: {
              startDay: DAY_OF_WEEK.decode(
                schedule.startDay,
                joinPath(joinPath(path, "schedule"), "startDay"),
                this.problems,
                "Monday",
              ),
              startMinutes: schedule.startMinutes,
              utcOffsetMinutes: schedule.utcOffsetMinutes,
            },
          }),
      ...opt("reachedAtMs", g.reachedAtMs),
      ...opt("scheduledAtMs", g.scheduledAtMs),
      ...opt("completedAtMs", g.completedAtMs),
      ...opt("completedBy", g.completedBy),
      message: g.message,
      ...(g.metric === null ? {} : { metric: this.metric(g.metric, path) }),
    };
  }

  metric(m: wire.MetricGate__Output, path: string): MetricGate {
    const at = joinPath(path, "metric");
    const verdict = m.verdict ?? undefined;
    if (
      verdict !== undefined &&
      verdict !== "Passed" &&
      verdict !== "Failed" &&
      verdict !== "Inconclusive"
    )
      this.problems.push({
        path: joinPath(at, "verdict"),
        message: "must be Passed, Failed or Inconclusive",
        value: verdict,
      });
    return {
      query: m.query,
      ...opt("successCondition", m.successCondition),
      ...opt("failureCondition", m.failureCondition),
      intervalSeconds: m.intervalSeconds,
      count: m.count,
      failureLimit: m.failureLimit,
      inconclusiveLimit: m.inconclusiveLimit,
      measurements: m.measurements.map((x, i) => ({
        atMs: x.atMs,
        ...(x.hasValues ? { values: [...x.values] } : {}),
        verdict: MEASUREMENT_VERDICT.decode(
          x.verdict,
          joinPath(joinPath(joinPath(at, "measurements"), i), "verdict"),
          this.problems,
          "Inconclusive",
        ),
        message: x.message,
      })),
      ...opt("nextAtMs", m.nextAtMs),
      ...opt("lastQuery", m.lastQuery),
      ...(verdict === "Passed" ||
      verdict === "Failed" ||
      verdict === "Inconclusive"
        ? { verdict }
        : {}),
    };
  }

  gates(list: readonly wire.Gate__Output[], path: string): Gate[] {
    return list.map((g, i) => this.gate(g, joinPath(path, i)));
  }

  member(m: wire.Member__Output, path: string): MemberView {
    const target = m.target;
    return {
      name: m.name,
      state: MEMBER_STATE.decode(
        m.state,
        joinPath(path, "state"),
        this.problems,
        "NotStarted",
      ),
      ...opt("reason", m.reason),
      message: m.message,
      stateChangedAtMs: m.stateChangedAtMs,
      ...opt("startedAtMs", m.startedAtMs),
      ...opt("finishedAtMs", m.finishedAtMs),
      ...opt("deadlineAtMs", m.deadlineAtMs),
      failureCount: m.failureCount,
      unreachable: m.unreachable,
      ...opt("notBeforeMs", m.notBeforeMs),
      ...opt("kubernetesVersion", m.kubernetesVersion),
      ...opt("region", m.region),
      ...(target === null
        ? {}
        : {
            target: {
              ...opt("kubernetesVersion", target.kubernetesVersion),
              // Upgrade targets always list their image changes; bundle targets have none.
              ...(target.nodeImages.length === 0 &&
              target.revision !== undefined
                ? {}
                : { nodeImages: target.nodeImages.map((c) => ({ ...c })) }),
              ...opt("revision", target.revision),
            },
          }),
      constrained: m.constrained,
      ...opt("lastReport", m.lastReport),
    };
  }

  group(g: wire.Group__Output, path: string): GroupView {
    return {
      name: g.name,
      state: SCOPE_STATE.decode(
        g.state,
        joinPath(path, "state"),
        this.problems,
        "NotStarted",
      ),
      ...opt("reason", g.reason),
      message: g.message,
      stateChangedAtMs: g.stateChangedAtMs,
      ...opt("startedAtMs", g.startedAtMs),
      ...opt("finishedAtMs", g.finishedAtMs),
      maxConcurrency: g.maxConcurrency,
      ...opt("configuredMaxConcurrency", g.configuredMaxConcurrency),
      maxAllowedFailures: g.maxAllowedFailures ?? null,
      failureCount: g.failureCount,
      succeeded: g.succeeded,
      inFlight: g.inFlight,
      remaining: g.remaining,
      skipRequested: g.skipRequested,
      beforeGates: this.gates(g.beforeGates, joinPath(path, "beforeGates")),
      afterGates: this.gates(g.afterGates, joinPath(path, "afterGates")),
      members: g.members.map((m, i) =>
        this.member(m, joinPath(joinPath(path, "members"), i)),
      ),
      ...opt("wakeAtMs", g.wakeAtMs),
    };
  }

  stage(s: wire.Stage__Output, path: string): StageView {
    return {
      name: s.name,
      state: SCOPE_STATE.decode(
        s.state,
        joinPath(path, "state"),
        this.problems,
        "NotStarted",
      ),
      ...opt("reason", s.reason),
      message: s.message,
      stateChangedAtMs: s.stateChangedAtMs,
      ...opt("startedAtMs", s.startedAtMs),
      ...opt("finishedAtMs", s.finishedAtMs),
      maxConcurrency: s.maxConcurrency,
      ...opt("configuredMaxConcurrency", s.configuredMaxConcurrency),
      maxAllowedFailures: s.maxAllowedFailures ?? null,
      failFast: s.failFast,
      failureCount: s.failureCount,
      inFlight: s.inFlight,
      skipRequested: s.skipRequested,
      afterStageWaitSeconds: s.afterStageWaitSeconds,
      ...opt("sortingLabelKey", s.sortingLabelKey),
      ...opt("waitUntilMs", s.waitUntilMs),
      beforeGates: this.gates(s.beforeGates, joinPath(path, "beforeGates")),
      afterGates: this.gates(s.afterGates, joinPath(path, "afterGates")),
      groups: s.groups.map((g, i) =>
        this.group(g, joinPath(joinPath(path, "groups"), i)),
      ),
      memberCount: s.memberCount,
    };
  }
}

/** Decodes a run status into core's names; unknown enum values are problems. */
export function runFromWire(
  raw: wire.RunStatus__Output,
  path = "run",
): Result<RunView> {
  const d = new Decoder();
  const payload = runPayloadFromWire(raw.payload, joinPath(path, "payload"));
  if (!payload.ok) d.problems.push(...payload.problems);
  const windowScope = WINDOW_SCOPE.decode(
    raw.windowScope,
    joinPath(path, "windowScope"),
    d.problems,
    "kubernetes",
  );
  const state = RUN_STATE.decode(
    raw.state,
    joinPath(path, "state"),
    d.problems,
    "NotStarted",
  );
  const stages = raw.stages.map((s, i) =>
    d.stage(s, joinPath(joinPath(path, "stages"), i)),
  );
  const origin = runOriginFromWire(
    raw.origin,
    joinPath(path, "origin"),
    d.problems,
  );
  if (!payload.ok || d.problems.length > 0) return fail(d.problems);
  const images = raw.consistentNodeImages;
  return ok({
    name: raw.name,
    payload: payload.value,
    windowScope,
    state,
    message: raw.message,
    stateChangedAtMs: raw.stateChangedAtMs,
    createdAtMs: raw.createdAtMs,
    ...opt("startedAtMs", raw.startedAtMs),
    ...opt("finishedAtMs", raw.finishedAtMs),
    progressDeadlineSeconds: raw.progressDeadlineSeconds,
    failureCount: raw.failureCount,
    budgetExceeded: raw.budgetExceeded,
    ...opt("haltMessage", raw.haltMessage),
    stopRequested: raw.stopRequested,
    ...opt("stopMessage", raw.stopMessage),
    currentStage: raw.currentStage,
    stages,
    unassigned: [...raw.unassigned],
    ...(Object.keys(images).length === 0
      ? {}
      : { consistentNodeImages: { ...images } }),
    ...opt("wakeAtMs", raw.wakeAtMs),
    revision: raw.revision,
    ...origin,
  });
}

/** Decodes a transition; an unknown scope is a problem. */
export function transitionFromWire(
  raw: wire.Transition__Output,
  path = "transition",
): Result<Transition> {
  const problems: Problem[] = [];
  const scope = TRANSITION_SCOPE.decode(
    raw.scope,
    joinPath(path, "scope"),
    problems,
    "run",
  );
  if (problems.length > 0) return fail(problems);
  return ok({
    type: "Transitioned",
    scope,
    name: raw.name,
    ...opt("stage", raw.stage),
    ...opt("group", raw.group),
    from: raw.fromState,
    to: raw.toState,
    atMs: raw.atMs,
    message: raw.message,
  });
}
