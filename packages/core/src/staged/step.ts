/**
 * `step(run, event, nowMs) → {run, actions, intents}`: the staged run state machine
 * (docs/semantics.md#staged-runs). Operator commands that cannot apply are answered with a
 * `rejected` value and change nothing; observations about members update them; then the scheduler
 * ({@link advance}) runs, and the intent changes its actions imply are derived (staged/intents.ts).
 */
import type { IntentChanges } from "../intent.js";
import type { QueryOutcome } from "../metrics/analysis.js";
import { hasConstraints } from "../maintenance/windows.js";
import {
  advance,
  endSkipped,
  memberByName,
  skipWaitingMembers,
} from "./advance.js";
import {
  isoTime,
  setGateState,
  setGroupState,
  setMemberState,
  setRunState,
  setStageState,
  type StepContext,
} from "./context.js";
import type { Actor, Rejection, RunEvent, StepResult } from "./events.js";
import { gateMatches, skipGates, takeMeasurement } from "./gates.js";
import { bundleReleasesOf, intentChangesOf } from "./intents.js";
import { notAMember } from "./member-index.js";
import { applyOutcome, applyOutcomes } from "./outcomes.js";
import type { Gate, Group, Member, Run, Stage } from "./run.js";

/** What a rejected step asks for: nothing. */
const NO_INTENTS: IntentChanges = new Map();

/**
 * Applies one event at `nowMs`. The run is updated in place and returned (see {@link Run}); on a
 * rejection it is returned unchanged.
 */
export function step(
  run: Run,
  event: RunEvent,
  nowMs: number,
): StepResult<Run> {
  const ctx: StepContext = { run, nowMs, actions: [] };
  const ignored: Rejection[] = [];
  const rejected = apply(ctx, event, ignored);
  if (rejected !== undefined)
    return { run, actions: [], intents: NO_INTENTS, releases: [], rejected };
  advance(ctx);
  return {
    run,
    actions: ctx.actions,
    intents: intentChangesOf(run, ctx.actions),
    releases: bundleReleasesOf(run, ctx.actions),
    ...(ignored.length === 0 ? {} : { ignored }),
  };
}

function reject(code: Rejection["code"], message: string): Rejection {
  return { code, message };
}

function by(actor: Actor): string {
  const who = actor.actor === undefined ? "" : ` by ${actor.actor}`;
  const why =
    actor.reason === undefined || actor.reason === ""
      ? ""
      : `: ${actor.reason}`;
  return `${who}${why}`;
}

function apply(
  ctx: StepContext,
  event: RunEvent,
  ignored: Rejection[],
): Rejection | undefined {
  const run = ctx.run;
  switch (event.type) {
    case "StartRun":
      return startRun(ctx, event);
    case "StopRun":
      if (
        run.state !== "Running" &&
        run.state !== "Pending" &&
        run.state !== "Stopping"
      ) {
        return reject(
          "failed_precondition",
          `Cannot stop run "${run.name}": it is ${run.state}`,
        );
      }
      run.stopRequested = true;
      run.stopMessage = `Stopped${by(event)}`;
      setRunState(ctx, "Stopping", `Stop requested${by(event)}`);
      return undefined;
    case "SkipStage":
      return skipStage(ctx, event.stage, event);
    case "SkipGroup":
      return skipGroup(ctx, event.group, event);
    case "SkipMember":
      return skipMember(ctx, event.member, event);
    case "RetryMembers":
      return retryMembers(ctx, event.members, event);
    case "ApproveGate":
      return completeGate(ctx, event.gate, event, "Approval");
    case "CompleteGate":
      return completeGate(ctx, event.gate, event, undefined);
    case "MemberSucceeded":
    case "MemberFailed":
    case "MemberDeferred":
      return applyOutcome(ctx, event);
    case "MembersReported":
      return applyOutcomes(ctx, event.reports, ignored);
    case "MemberReported": {
      const found = memberByName(ctx, event.member);
      if (found === undefined) return notAMember(run, event.member);
      if (found.member.state === "Running")
        found.member.lastReport = event.state;
      return undefined;
    }
    case "MemberUnreachable":
    case "MemberReachable": {
      const found = memberByName(ctx, event.member);
      if (found === undefined) return notAMember(run, event.member);
      found.member.unreachable = event.type === "MemberUnreachable";
      return undefined;
    }
    case "MemberLeft":
      return memberLeft(ctx, event.member, event);
    case "MemberWindowsChanged":
      return windowsChanged(ctx, event.member, event);
    case "MemberSupportPlanChanged": {
      const found = memberByName(ctx, event.member);
      if (found === undefined) return notAMember(run, event.member);
      if (event.supportPlan === undefined) delete found.member.supportPlan;
      else found.member.supportPlan = event.supportPlan;
      return undefined;
    }
    case "AvailableVersionsChanged":
      run.available = event.available;
      return undefined;
    case "GateMeasured":
      return gateMeasured(ctx, event.gate, event.outcome);
    case "Tick":
      return undefined;
    default: {
      const never: never = event;
      return never;
    }
  }
}

function startRun(ctx: StepContext, actor: Actor): Rejection | undefined {
  const run = ctx.run;
  if (run.state === "Completed" || run.state === "Skipped") {
    return reject(
      "failed_precondition",
      `Cannot start run "${run.name}": it is ${run.state}`,
    );
  }
  if (run.state === "Running" || run.state === "Pending") {
    return reject(
      "failed_precondition",
      `Cannot start run "${run.name}": it is already ${run.state}`,
    );
  }
  if (run.state === "Stopping") {
    // As in AKS, a stopping run takes no action: its in-flight members finish first.
    return reject(
      "failed_precondition",
      `Cannot start run "${run.name}": it is Stopping; start it again once it is ${run.budgetExceeded ? "Failed" : "Stopped"}`,
    );
  }
  const resumed = run.state !== "NotStarted";
  // A metric gate that failed the run measures afresh (docs/engine.md#metric-gates).
  for (const { gate } of allGates(run))
    if (gate.state === "Failed") {
      gate.state = "NotStarted";
      gate.message = "";
    }
  run.stopRequested = false;
  delete run.stopMessage;
  run.budgetExceeded = false;
  delete run.haltMessage;
  delete run.finishedAtMs;
  run.startedAtMs ??= ctx.nowMs;
  setRunState(ctx, "Running", `${resumed ? "Resumed" : "Started"}${by(actor)}`);
  return undefined;
}

function currentStageIndex(run: Run, stage: Stage): number {
  return run.stages.indexOf(stage);
}

function skipStage(
  ctx: StepContext,
  name: string,
  actor: Actor,
): Rejection | undefined {
  const run = ctx.run;
  const stage = run.stages.find((s) => s.name === name);
  if (stage === undefined)
    return reject(
      "not_found",
      `Cannot skip stage "${name}": run "${run.name}" has no such stage`,
    );
  if (
    currentStageIndex(run, stage) < run.currentStage ||
    stage.state === "Completed" ||
    stage.state === "Skipped"
  ) {
    return reject(
      "failed_precondition",
      `Cannot skip stage "${name}": it has already finished (${stage.state})`,
    );
  }
  const message = `Skipped${by(actor)}`;
  stage.skipRequested = true;
  for (const group of stage.groups) {
    group.skipRequested = true;
    skipWaitingMembers(ctx, stage, group, message);
    skipGates(
      ctx,
      [...group.beforeGates, ...group.afterGates],
      { stage: stage.name, group: group.name },
      message,
    );
    // A Skipped stage is never processed again, so its idle groups must be settled here.
    if (
      group.inFlight === 0 &&
      group.state !== "Completed" &&
      group.state !== "Failed" &&
      group.state !== "Skipped"
    ) {
      setGroupState(ctx, stage, group, "Skipped", message);
    }
  }
  skipGates(
    ctx,
    [...stage.beforeGates, ...stage.afterGates],
    { stage: stage.name },
    message,
  );
  if (stage.inFlight === 0) setStageState(ctx, stage, "Skipped", message);
  return undefined;
}

function findGroup(
  run: Run,
  name: string,
): { stage: Stage; group: Group; index: number } | undefined {
  for (const [index, stage] of run.stages.entries()) {
    const group = stage.groups.find((g) => g.name === name);
    if (group !== undefined) return { stage, group, index };
  }
  return undefined;
}

function skipGroup(
  ctx: StepContext,
  name: string,
  actor: Actor,
): Rejection | undefined {
  const run = ctx.run;
  const found = findGroup(run, name);
  if (found === undefined)
    return reject(
      "not_found",
      `Cannot skip group "${name}": run "${run.name}" has no such group`,
    );
  const { stage, group, index } = found;
  if (
    index < run.currentStage ||
    group.state === "Completed" ||
    group.state === "Skipped"
  ) {
    return reject(
      "failed_precondition",
      `Cannot skip group "${name}": it has already finished (${group.state})`,
    );
  }
  const message = `Skipped${by(actor)}`;
  group.skipRequested = true;
  skipWaitingMembers(ctx, stage, group, message);
  skipGates(
    ctx,
    [...group.beforeGates, ...group.afterGates],
    { stage: stage.name, group: group.name },
    message,
  );
  if (group.inFlight === 0)
    setGroupState(ctx, stage, group, "Skipped", message);
  return undefined;
}

function skipMember(
  ctx: StepContext,
  name: string,
  actor: Actor,
): Rejection | undefined {
  const run = ctx.run;
  const found = memberByName(ctx, name);
  if (found === undefined) return notAMember(run, name);
  const { stage, group, member } = found;
  if (member.state === "Running") {
    return reject(
      "failed_precondition",
      `Cannot skip member "${name}": it is Running; wait for it to finish or for its deadline`,
    );
  }
  if (member.state === "Succeeded" || member.state === "Skipped") {
    return reject(
      "failed_precondition",
      `Cannot skip member "${name}": it is already ${member.state}`,
    );
  }
  if (currentStageIndex(run, stage) < run.currentStage) {
    return reject(
      "failed_precondition",
      `Cannot skip member "${name}": its stage "${stage.name}" has finished`,
    );
  }
  const wasFailed = member.state === "Failed";
  if (wasFailed) uncountFailure(group, stage, run);
  else group.remaining -= 1;
  member.finishedAtMs = ctx.nowMs;
  setMemberState(
    ctx,
    stage,
    group,
    member,
    "Skipped",
    `Skipped${by(actor)}`,
    "SkippedByOperator",
  );
  // As with a retry: a group back within its budget is no longer Failed, or it would never finish (gates, roll-up).
  if (
    wasFailed &&
    group.state === "Failed" &&
    (group.maxAllowedFailures === null ||
      group.failureCount <= group.maxAllowedFailures)
  ) {
    if (!group.skipRequested)
      setGroupState(ctx, stage, group, "Running", "Failed member skipped");
    else if (group.inFlight === 0)
      setGroupState(ctx, stage, group, "Skipped", `Skipped${by(actor)}`);
  }
  return undefined;
}

function uncountFailure(group: Group, stage: Stage, run: Run): void {
  group.failureCount -= 1;
  stage.failureCount -= 1;
  run.failureCount -= 1;
}

function retryMembers(
  ctx: StepContext,
  names: readonly string[] | undefined,
  actor: Actor,
): Rejection | undefined {
  const run = ctx.run;
  if (run.state === "Completed" || run.state === "Skipped") {
    return reject(
      "failed_precondition",
      `Cannot retry members of run "${run.name}": it is ${run.state}`,
    );
  }
  const current = run.stages[run.currentStage];
  const targets: { stage: Stage; group: Group; member: Member }[] = [];
  if (names === undefined) {
    for (const group of current?.groups ?? []) {
      if (group.skipRequested) continue;
      for (const member of group.members)
        if (member.state === "Failed" && current !== undefined)
          targets.push({ stage: current, group, member });
    }
    if (targets.length === 0)
      return reject(
        "failed_precondition",
        `Cannot retry: run "${run.name}" has no failed members in its current stage`,
      );
  } else {
    // A name listed twice would be uncounted and requeued twice.
    for (const name of new Set(names)) {
      const found = memberByName(ctx, name);
      if (found === undefined) return notAMember(run, name);
      if (found.member.state !== "Failed")
        return reject(
          "failed_precondition",
          `Cannot retry member "${name}": it is ${found.member.state}, not Failed`,
        );
      if (found.stage !== current)
        return reject(
          "failed_precondition",
          `Cannot retry member "${name}": its stage "${found.stage.name}" is not the current stage`,
        );
      // A skipped scope is never processed again: a member put back there would never run.
      if (found.group.skipRequested)
        return reject(
          "failed_precondition",
          `Cannot retry member "${name}": its group "${found.group.name}" was skipped`,
        );
      targets.push(found);
    }
  }
  for (const { stage, group, member } of targets) {
    uncountFailure(group, stage, run);
    group.remaining += 1;
    delete member.finishedAtMs;
    delete member.deadlineAtMs;
    if (!member.constrained) group.deferred.push(group.members.indexOf(member));
    setMemberState(
      ctx,
      stage,
      group,
      member,
      "NotStarted",
      `Retry requested${by(actor)}`,
    );
    // A group that already completed within its budget must be reopened, or the retried member never runs.
    if (
      group.state === "Completed" ||
      (group.state === "Failed" &&
        (group.maxAllowedFailures === null ||
          group.failureCount <= group.maxAllowedFailures))
    ) {
      setGroupState(ctx, stage, group, "Running", "Retrying failed members");
    }
    // The after-stage wait counts from the stage's last member, which is now still to come.
    delete stage.waitUntilMs;
  }
  return undefined;
}

/** Every gate of `run` with where it is. */
function allGates(run: Run): { gate: Gate; stage: Stage; group?: Group }[] {
  const out: { gate: Gate; stage: Stage; group?: Group }[] = [];
  for (const stage of run.stages) {
    for (const gate of [...stage.beforeGates, ...stage.afterGates])
      out.push({ gate, stage });
    for (const group of stage.groups) {
      for (const gate of [...group.beforeGates, ...group.afterGates])
        out.push({ gate, stage, group });
    }
  }
  return out;
}

/** A metric gate's measurement (docs/engine.md#metric-gates); refused unless it is measuring. */
function gateMeasured(
  ctx: StepContext,
  id: string,
  outcome: QueryOutcome,
): Rejection | undefined {
  const found = allGates(ctx.run).find((m) => m.gate.id === id);
  if (found === undefined)
    return reject("not_found", `Run "${ctx.run.name}" has no gate "${id}"`);
  const { gate, stage, group } = found;
  if (
    gate.metric === undefined ||
    gate.state !== "Pending" ||
    gate.metric.verdict !== undefined
  )
    return reject(
      "failed_precondition",
      `Gate "${id}" is not measuring (${gate.type}, ${gate.state}): the measurement is not counted`,
    );
  takeMeasurement(
    ctx,
    gate,
    {
      stage: stage.name,
      ...(group === undefined ? {} : { group: group.name }),
    },
    outcome,
  );
  return undefined;
}

function completeGate(
  ctx: StepContext,
  id: string,
  actor: Actor,
  onlyType: Gate["type"] | undefined,
): Rejection | undefined {
  const run = ctx.run;
  const matches = allGates(run).filter((m) => gateMatches(m.gate, id));
  if (matches.length === 0)
    return reject(
      "not_found",
      `Cannot complete gate "${id}": run "${run.name}" has no such gate`,
    );
  // Approving a metric gate overrides what it measured: Pending (measuring or inconclusive) or
  // Failed (the run then starts again past it).
  const pending = matches.filter(
    (m) =>
      (m.gate.state === "Pending" ||
        (m.gate.state === "Failed" && m.gate.type === "Metric")) &&
      (onlyType === undefined ||
        m.gate.type === onlyType ||
        (onlyType === "Approval" && m.gate.type === "Metric")),
  );
  if (pending.length === 0) {
    const states = matches
      .map((m) => `${m.gate.id} is ${m.gate.state}`)
      .join(", ");
    return reject(
      "failed_precondition",
      `Cannot ${onlyType === "Approval" ? "approve" : "complete"} gate "${id}": ${states}; only a Pending ${onlyType === "Approval" ? "approval " : ""}gate can be completed`,
    );
  }
  for (const { gate, stage, group } of pending) {
    gate.completedBy = actor.actor ?? "unknown";
    const verb = gate.type === "ScheduledStart" ? "Completed" : "Approved";
    if (gate.metric !== undefined) delete gate.metric.nextAtMs;
    setGateState(
      ctx,
      gate,
      "Completed",
      `${verb}${by(actor)} at ${isoTime(ctx.nowMs)}`,
      {
        stage: stage.name,
        ...(group === undefined ? {} : { group: group.name }),
      },
    );
  }
  return undefined;
}

function memberLeft(
  ctx: StepContext,
  name: string,
  event: Pick<
    Extract<RunEvent, { type: "MemberLeft" }>,
    "supersededBy" | "rolledBackTo"
  >,
): Rejection | undefined {
  const found = memberByName(ctx, name);
  if (found === undefined) return notAMember(ctx.run, name);
  const { stage, group, member } = found;
  if (
    member.state === "Succeeded" ||
    member.state === "Failed" ||
    member.state === "Skipped"
  )
    return undefined;
  if (member.state === "Running") {
    group.inFlight -= 1;
    stage.inFlight -= 1;
    delete member.deadlineAtMs;
  }
  if (event.rolledBackTo !== undefined)
    endSkipped(
      ctx,
      stage,
      group,
      member,
      `Rolled back: the bundle went back to revision ${event.rolledBackTo}`,
      "RolledBack",
    );
  else if (event.supersededBy !== undefined)
    endSkipped(
      ctx,
      stage,
      group,
      member,
      `Superseded by update run ${event.supersededBy}`,
      "Superseded",
    );
  else endSkipped(ctx, stage, group, member, "Cluster left the fleet", "Left");
  return undefined;
}

function windowsChanged(
  ctx: StepContext,
  name: string,
  event: Extract<RunEvent, { type: "MemberWindowsChanged" }>,
): Rejection | undefined {
  const found = memberByName(ctx, name);
  if (found === undefined) return notAMember(ctx.run, name);
  const { group, member } = found;
  if (event.maintenance === undefined) delete member.maintenance;
  else member.maintenance = event.maintenance;
  const constrained = hasConstraints(member.maintenance, ctx.run.windowScope);
  if (constrained === member.constrained) return undefined;
  const index = group.members.indexOf(member);
  member.constrained = constrained;
  const list = group.constrained;
  if (constrained) {
    list.push(index);
    list.sort((a, b) => a - b);
  } else {
    list.splice(list.indexOf(index), 1);
    if (member.state === "NotStarted" || member.state === "Pending")
      group.deferred.push(index);
  }
  return undefined;
}
