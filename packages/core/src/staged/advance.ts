/**
 * The scheduler of a staged run: after every event it fails members past their deadline, walks the
 * current stage (gates, groups, free slots), moves to the next stage when one finishes, rolls states
 * up (member → group → stage → run) and computes when the next `Tick` is due.
 */
import { memberUpgradeDecision } from "../upgrade.js";
import {
  isoTime,
  setGroupState,
  setMemberState,
  setRunState,
  setStageState,
  type StepContext,
} from "./context.js";
import { skipEmptyGroup, skipEmptyStage } from "./empty-scopes.js";
import { passGates, skipGates } from "./gates.js";
import { locateMember } from "./member-index.js";
import { pickNext, takePicked } from "./pick.js";
import {
  memberAsCluster,
  type Group,
  type Member,
  type MemberTarget,
  type Stage,
} from "./run.js";
import { compact } from "../compact.js";

/** Runs the scheduler until nothing more can happen at `ctx.nowMs`. */
export function advance(ctx: StepContext): void {
  const run = ctx.run;
  expireDeadlines(ctx);
  if (
    run.state === "NotStarted" ||
    run.state === "Stopped" ||
    run.state === "Completed" ||
    run.state === "Skipped" ||
    run.state === "Failed"
  ) {
    computeWake(ctx);
    return;
  }
  for (;;) {
    const stage = run.stages[run.currentStage];
    if (stage === undefined) {
      finishRun(ctx);
      break;
    }
    if (run.stopRequested || run.budgetExceeded) {
      halt(ctx, stage);
      break;
    }
    if (!processStage(ctx, stage)) {
      if (run.budgetExceeded) {
        halt(ctx, stage);
        break;
      }
      if (stage.state === "Pending")
        setRunState(ctx, "Pending", `Stage "${stage.name}": ${stage.message}`);
      else setRunState(ctx, "Running", `Stage "${stage.name}" running`);
      break;
    }
    run.currentStage += 1;
  }
  computeWake(ctx);
}

function finishRun(ctx: StepContext): void {
  const run = ctx.run;
  const allSkipped = run.stages.every((s) => s.state === "Skipped");
  run.finishedAtMs = ctx.nowMs;
  if (allSkipped) setRunState(ctx, "Skipped", "All stages were skipped");
  else
    setRunState(
      ctx,
      "Completed",
      `Completed with ${String(run.failureCount)} failed member(s)`,
    );
}

function halt(ctx: StepContext, stage: Stage): void {
  const run = ctx.run;
  const why = run.budgetExceeded
    ? (run.haltMessage ?? "failure budget exceeded")
    : "stop requested";
  if (stage.inFlight > 0) {
    setRunState(
      ctx,
      "Stopping",
      `Stopping (${why}): waiting for ${String(stage.inFlight)} in-flight member(s)`,
    );
    return;
  }
  // Stopped is only ever an operator's doing; scopes halted by a budget end Failed
  // (docs/semantics.md#failure-propagates-up).
  const [end, message] = run.budgetExceeded
    ? (["Failed", `Halted: ${why}`] as const)
    : (["Stopped", `Stopped (${why})`] as const);
  for (const group of stage.groups) {
    if (group.state === "Running" || group.state === "Pending")
      setGroupState(ctx, stage, group, end, message);
  }
  if (stage.state === "Running" || stage.state === "Pending")
    setStageState(ctx, stage, end, message);
  if (run.budgetExceeded)
    setRunState(
      ctx,
      "Failed",
      run.haltMessage ?? `Failure budget exceeded in stage "${stage.name}"`,
    );
  else setRunState(ctx, "Stopped", run.stopMessage ?? "Stopped by operator");
  run.finishedAtMs = ctx.nowMs;
}

/** Works on one stage; returns true when the stage has finished. */
function processStage(ctx: StepContext, stage: Stage): boolean {
  if (stage.state === "Completed" || stage.state === "Skipped") return true;
  if (stage.skipRequested) {
    if (stage.inFlight > 0) {
      setStageState(
        ctx,
        stage,
        "Running",
        `Skipping: waiting for ${String(stage.inFlight)} in-flight member(s)`,
      );
      return false;
    }
    skipGates(
      ctx,
      [...stage.beforeGates, ...stage.afterGates],
      { stage: stage.name },
      "Stage skipped",
    );
    for (const group of stage.groups) finishSkippedGroup(ctx, stage, group);
    setStageState(
      ctx,
      stage,
      "Skipped",
      stage.message.startsWith("Skipped") ? stage.message : "Skipped",
    );
    return true;
  }
  if (stage.memberCount === 0) {
    skipEmptyStage(ctx, stage);
    return true;
  }
  if (
    stage.state === "NotStarted" ||
    stage.state === "Stopped" ||
    stage.state === "Failed"
  )
    setStageState(ctx, stage, "Running", "Started");
  const gate = passGates(ctx, stage.beforeGates, { stage: stage.name });
  if (gate !== undefined) {
    setStageState(ctx, stage, "Pending", gate.message);
    return false;
  }
  for (const group of stage.groups) openGroup(ctx, stage, group);
  fillSlots(ctx, stage);
  // A member failed at its start spent the budget: the run halts as after a reported failure.
  if (ctx.run.budgetExceeded) return false;
  let done = true;
  let pending = true;
  for (const group of stage.groups) {
    if (!settleGroup(ctx, stage, group)) {
      done = false;
      if (group.state !== "Pending") pending = false;
    }
  }
  if (!done) {
    if (pending)
      setStageState(ctx, stage, "Pending", "All unfinished groups are pending");
    else
      setStageState(
        ctx,
        stage,
        "Running",
        `${String(stage.inFlight)} member(s) in flight`,
      );
    return false;
  }
  return finishStage(ctx, stage);
}

function finishStage(ctx: StepContext, stage: Stage): boolean {
  if (
    stage.groups.length > 0 &&
    stage.groups.every((g) => g.state === "Skipped")
  ) {
    skipGates(
      ctx,
      [...stage.beforeGates, ...stage.afterGates],
      { stage: stage.name },
      "All groups skipped",
    );
    setStageState(ctx, stage, "Skipped", "All groups were skipped");
    return true;
  }
  if (stage.waitUntilMs === undefined)
    stage.waitUntilMs = ctx.nowMs + stage.afterStageWaitSeconds * 1000;
  // The wait and the after-stage approval run in parallel (docs/semantics.md#gates-and-waits).
  const gate = passGates(ctx, stage.afterGates, { stage: stage.name });
  if (gate !== undefined) {
    setStageState(ctx, stage, "Pending", gate.message);
    return false;
  }
  if (stage.waitUntilMs > ctx.nowMs) {
    setStageState(
      ctx,
      stage,
      "Running",
      `Waiting ${String(stage.afterStageWaitSeconds)}s after the stage, until ${isoTime(stage.waitUntilMs)}`,
    );
    return false;
  }
  setStageState(
    ctx,
    stage,
    "Completed",
    `Completed with ${String(stage.failureCount)} failed member(s)`,
  );
  return true;
}

/** Starts a group: its before-gates, then Running. */
function openGroup(ctx: StepContext, stage: Stage, group: Group): void {
  if (group.state === "Completed" || group.state === "Skipped") return;
  if (group.skipRequested || group.remaining === 0) return;
  if (
    group.state === "NotStarted" ||
    group.state === "Stopped" ||
    (group.state === "Failed" && !ctx.run.budgetExceeded)
  ) {
    setGroupState(ctx, stage, group, "Running", "Started");
  }
  const gate = passGates(ctx, group.beforeGates, {
    stage: stage.name,
    group: group.name,
  });
  if (gate !== undefined)
    setGroupState(ctx, stage, group, "Pending", gate.message);
}

function canTake(group: Group): boolean {
  return (
    !group.skipRequested &&
    group.remaining > group.inFlight &&
    group.inFlight < group.maxConcurrency &&
    group.beforeGates.every(
      (g) => g.state === "Completed" || g.state === "Skipped",
    )
  );
}

/** Fills free slots round-robin over the stage's groups, so no group starves the others. */
function fillSlots(ctx: StepContext, stage: Stage): void {
  const open = stage.groups.filter(
    (g) => g.state !== "Completed" && g.state !== "Skipped" && canTake(g),
  );
  let active = open;
  while (stage.inFlight < stage.maxConcurrency && active.length > 0) {
    const next: Group[] = [];
    for (const group of active) {
      // A member failed at its start (startMember) may have spent the budget.
      if (stage.inFlight >= stage.maxConcurrency || ctx.run.budgetExceeded)
        break;
      const index = pickNext(ctx, stage, group);
      if (index === undefined) continue;
      takePicked(group, index);
      const member = group.members[index];
      if (member !== undefined) startMember(ctx, stage, group, member);
      if (canTake(group)) next.push(group);
    }
    active = next;
  }
}

function startMember(
  ctx: StepContext,
  stage: Stage,
  group: Group,
  member: Member,
): void {
  const run = ctx.run;
  let target: MemberTarget;
  if (run.payload.kind === "upgrade") {
    const decision = memberUpgradeDecision(
      memberAsCluster(member),
      run.payload.upgrade,
      run.available ?? { kubernetes: [], nodeImages: [] },
      run.consistentNodeImages,
    );
    if (decision.action === "skip") {
      endSkipped(ctx, stage, group, member, decision.message, decision.reason);
      return;
    }
    if (decision.action === "fail") {
      // Failed without being started: no intent, and it counts like any failed member.
      delete member.notBeforeMs;
      endFailed(ctx, stage, group, member, decision.message, decision.reason);
      return;
    }
    target = {
      ...compact({ kubernetesVersion: decision.kubernetesVersion }),
      nodeImages: decision.nodeImages,
    };
    // Kept on the member, not in the target: the target is what its agent is sent, and older
    // agents refuse fields they do not know.
    if (decision.skippedNodeImages === undefined)
      delete member.skippedNodeImages;
    else member.skippedNodeImages = decision.skippedNodeImages;
  } else {
    target = { revision: run.payload.revision };
  }
  member.target = target;
  delete member.lastReport;
  member.startedAtMs = ctx.nowMs;
  delete member.finishedAtMs;
  delete member.notBeforeMs;
  member.deadlineAtMs = ctx.nowMs + run.progressDeadlineSeconds * 1000;
  run.deadlines.push([member.deadlineAtMs, member.name]);
  group.inFlight += 1;
  stage.inFlight += 1;
  setMemberState(ctx, stage, group, member, "Running", "Started");
  ctx.actions.push({
    type: "StartMember",
    member: member.name,
    stage: stage.name,
    group: group.name,
    target,
  });
}

/** Ends a member that will not run (any more) as Skipped; it no longer counts as remaining. */
export function endSkipped(
  ctx: StepContext,
  stage: Stage,
  group: Group,
  member: Member,
  message: string,
  reason: string,
): void {
  group.remaining -= 1;
  member.finishedAtMs = ctx.nowMs;
  setMemberState(ctx, stage, group, member, "Skipped", message, reason);
}

/** Skips every member of `group` that is still waiting to start (operator skip of a scope). */
export function skipWaitingMembers(
  ctx: StepContext,
  stage: Stage,
  group: Group,
  message: string,
): void {
  for (const member of group.members) {
    if (member.state === "NotStarted" || member.state === "Pending") {
      endSkipped(ctx, stage, group, member, message, "SkippedByOperator");
    }
  }
}

function finishSkippedGroup(
  ctx: StepContext,
  stage: Stage,
  group: Group,
): void {
  // A member that was in flight when the skip came and was then deferred waits again: it goes with its group.
  skipWaitingMembers(ctx, stage, group, `Skipped with group "${group.name}"`);
  if (
    group.state === "Completed" ||
    group.state === "Skipped" ||
    group.state === "Failed"
  )
    return;
  skipGates(
    ctx,
    [...group.beforeGates, ...group.afterGates],
    { stage: stage.name, group: group.name },
    "Group skipped",
  );
  setGroupState(ctx, stage, group, "Skipped", "Skipped");
}

/** Rolls a group's state up from its members; returns true when the group has finished. */
function settleGroup(ctx: StepContext, stage: Stage, group: Group): boolean {
  if (group.state === "Completed" || group.state === "Skipped") return true;
  if (group.skipRequested) {
    if (group.inFlight > 0) {
      setGroupState(
        ctx,
        stage,
        group,
        "Running",
        `Skipping: waiting for ${String(group.inFlight)} in-flight member(s)`,
      );
      return false;
    }
    finishSkippedGroup(ctx, stage, group);
    return true;
  }
  if (
    group.state === "Pending" &&
    group.beforeGates.some((g) => g.state === "Pending")
  )
    return false;
  if (group.remaining > 0) {
    if (group.inFlight > 0)
      setGroupState(
        ctx,
        stage,
        group,
        group.state === "Failed" ? "Failed" : "Running",
        group.state === "Failed"
          ? group.message
          : `${String(group.inFlight)} member(s) in flight`,
      );
    else if (pickNext(ctx, stage, group, true) === undefined) {
      setGroupState(ctx, stage, group, "Pending", pendingMessage(group));
    } else {
      setGroupState(
        ctx,
        stage,
        group,
        "Running",
        "Waiting for a free slot in the stage",
      );
    }
    return false;
  }
  if (
    group.members.length > 0 &&
    group.succeeded === 0 &&
    group.failureCount === 0
  ) {
    finishSkippedGroup(ctx, stage, group);
    return true;
  }
  if (group.members.length === 0) {
    skipEmptyGroup(ctx, stage, group);
    return true;
  }
  const gate = passGates(ctx, group.afterGates, {
    stage: stage.name,
    group: group.name,
  });
  if (gate !== undefined) {
    setGroupState(ctx, stage, group, "Pending", gate.message);
    return false;
  }
  // A group halted by another scope's budget and then resumed is Failed but within its own budget.
  if (group.state !== "Failed" || isWithinBudget(group))
    setGroupState(
      ctx,
      stage,
      group,
      "Completed",
      `Completed with ${String(group.failureCount)} failed member(s)`,
    );
  return true;
}

function isWithinBudget(group: Group): boolean {
  return (
    group.maxAllowedFailures === null ||
    group.failureCount <= group.maxAllowedFailures
  );
}

function pendingMessage(group: Group): string {
  // Pending members are always among the constrained or deferred ones: no scan of the whole group.
  let first: Member | undefined;
  let firstIndex = Infinity;
  let count = 0;
  for (const i of [...group.constrained, ...group.deferred]) {
    const m = group.members[i];
    if (m?.state !== "Pending") continue;
    count += 1;
    // The first in the group's order (which is name order unless a sorting label sets another).
    if (i < firstIndex) {
      first = m;
      firstIndex = i;
    }
  }
  if (first === undefined) return "Waiting";
  return count === 1
    ? `${first.name}: ${first.message}`
    : `${String(count)} members pending; ${first.name}: ${first.message}`;
}

/** Fails in-flight members whose progress deadline has passed (TimedOut, or Unreachable). */
function expireDeadlines(ctx: StepContext): void {
  const run = ctx.run;
  let head = 0;
  while (head < run.deadlines.length) {
    const entry = run.deadlines[head];
    if (entry === undefined) break;
    const [deadline, name] = entry;
    const member = memberByName(ctx, name);
    if (
      member === undefined ||
      member.member.state !== "Running" ||
      member.member.deadlineAtMs !== deadline
    ) {
      head += 1;
      continue;
    }
    if (deadline > ctx.nowMs) break;
    head += 1;
    const { stage, group, member: m } = member;
    const reason = m.unreachable ? "Unreachable" : "TimedOut";
    const message = m.unreachable
      ? `Agent unreachable past the progress deadline of ${String(run.progressDeadlineSeconds)}s`
      : `Did not succeed within the progress deadline of ${String(run.progressDeadlineSeconds)}s${lastReported(m)}`;
    recordFailure(ctx, stage, group, m, message, reason);
  }
  if (head > 0) run.deadlines.splice(0, head);
}

/** What a timed-out member's agent last reported, for its message; "" when nothing. */
export function lastReported(member: Member): string {
  return member.lastReport === undefined
    ? ""
    : `; last reported: ${member.lastReport}`;
}

/** Looks a member up by name. */
export function memberByName(
  ctx: StepContext,
  name: string,
): { stage: Stage; group: Group; member: Member } | undefined {
  return locateMember(ctx.run, name);
}

/**
 * Ends an in-flight member as Failed and applies the failure budgets
 * (docs/semantics.md#failure-budget).
 */
export function recordFailure(
  ctx: StepContext,
  stage: Stage,
  group: Group,
  member: Member,
  message: string,
  reason: string,
): void {
  group.inFlight -= 1;
  stage.inFlight -= 1;
  endFailed(ctx, stage, group, member, message, reason);
}

/**
 * Ends a member that is not (or no longer) in flight as Failed and applies the failure budgets
 * (docs/semantics.md#failure-budget).
 */
function endFailed(
  ctx: StepContext,
  stage: Stage,
  group: Group,
  member: Member,
  message: string,
  reason: string,
): void {
  const run = ctx.run;
  group.remaining -= 1;
  member.failureCount += 1;
  member.finishedAtMs = ctx.nowMs;
  delete member.deadlineAtMs;
  setMemberState(ctx, stage, group, member, "Failed", message, reason);
  group.failureCount += 1;
  stage.failureCount += 1;
  run.failureCount += 1;
  const groupOver =
    group.maxAllowedFailures !== null &&
    group.failureCount > group.maxAllowedFailures;
  const stageOver =
    stage.maxAllowedFailures !== null &&
    stage.failureCount > stage.maxAllowedFailures;
  if (groupOver) {
    setGroupState(
      ctx,
      stage,
      group,
      "Failed",
      `failureCount ${String(group.failureCount)} exceeds maxAllowedFailures ${String(group.maxAllowedFailures)}`,
    );
  }
  if (stageOver) {
    const why = stage.failFast
      ? `failed member "${member.name}" and no maxAllowedFailures is set (fail-fast)`
      : `failureCount ${String(stage.failureCount)} exceeds maxAllowedFailures ${String(stage.maxAllowedFailures)}`;
    setStageState(ctx, stage, "Failed", why);
  } else if (groupOver) {
    // Failure propagates up (docs/semantics.md#failure-propagates-up): the stage fails with its
    // group, whatever its own budget allows.
    setStageState(
      ctx,
      stage,
      "Failed",
      `group "${group.name}" failed: ${group.message}`,
    );
  }
  if ((groupOver || stageOver) && !run.budgetExceeded) {
    run.budgetExceeded = true;
    run.haltMessage = groupOver
      ? `Failure budget exceeded in group "${group.name}": ${group.message}`
      : `Failure budget exceeded in stage "${stage.name}": ${stage.message}`;
  }
}

function computeWake(ctx: StepContext): void {
  const run = ctx.run;
  let wake: number | undefined;
  const consider = (at: number | undefined): void => {
    if (at !== undefined && at > ctx.nowMs && (wake === undefined || at < wake))
      wake = at;
  };
  for (const [deadline, name] of run.deadlines) {
    const found = memberByName(ctx, name);
    if (
      found?.member.state === "Running" &&
      found.member.deadlineAtMs === deadline
    ) {
      consider(deadline);
      break;
    }
  }
  const active = run.state === "Running" || run.state === "Pending";
  const stage = run.stages[run.currentStage];
  if (active && stage !== undefined) {
    if (stage.waitUntilMs !== undefined) consider(stage.waitUntilMs);
    for (const gate of stage.beforeGates)
      if (gate.state === "Pending") consider(gate.scheduledAtMs);
    for (const group of stage.groups) {
      consider(group.wakeAtMs);
      for (const gate of group.beforeGates)
        if (gate.state === "Pending") consider(gate.scheduledAtMs);
    }
    // The next measurement of a metric gate that is measuring.
    for (const gate of [
      ...stage.beforeGates,
      ...stage.afterGates,
      ...stage.groups.flatMap((g) => [...g.beforeGates, ...g.afterGates]),
    ])
      if (gate.state === "Pending" && gate.metric?.verdict === undefined)
        consider(gate.metric?.nextAtMs);
  }
  if (wake === undefined) delete run.wakeAtMs;
  else run.wakeAtMs = wake;
}
