/**
 * Choosing the next member of a group (docs/semantics.md#order-and-concurrency): members whose
 * window for the run's scope is open now come first, then members without windows, each in the
 * group's member order (the stage's sortingLabelKey value, then name: staged/member-order.ts),
 * which is why picking compares indices and never names; members whose window opens within four
 * hours are reached first but wait (Pending), members with a closed window are reached last.
 * Unconstrained members are taken through a cursor, so picking costs O(1) amortized for them
 * whatever the group size; only members with windows or freezes are re-examined on every pick.
 */
import { nextOpening, windowCategory } from "../maintenance/windows.js";
import { isTargetAvailable } from "../upgrade.js";
import { isoTime, setMemberState, type StepContext } from "./context.js";
import { memberAsCluster, type Group, type Member, type Stage } from "./run.js";

function isWaiting(member: Member): boolean {
  return member.state === "NotStarted" || member.state === "Pending";
}

/** Why a member cannot start now regardless of windows, or undefined. */
function holdReason(
  ctx: StepContext,
  member: Member,
): { reason: string; message: string; untilMs?: number } | undefined {
  if (member.unreachable)
    return {
      reason: "Unreachable",
      message: "Agent unreachable: waiting for it to reconnect",
    };
  if (member.notBeforeMs !== undefined && member.notBeforeMs > ctx.nowMs) {
    return {
      reason: "Deferred",
      message:
        member.message === ""
          ? `Held until ${isoTime(member.notBeforeMs)}`
          : member.message,
      untilMs: member.notBeforeMs,
    };
  }
  const run = ctx.run;
  // Without availability data the engine cannot know better and assumes the target is offered.
  if (run.payload.kind === "upgrade" && run.available !== undefined) {
    const missing = isTargetAvailable(
      memberAsCluster(member),
      run.payload.upgrade,
      run.available,
      run.consistentNodeImages,
    );
    if (missing !== undefined)
      return { reason: "TargetNotAvailable", message: missing };
  }
  return undefined;
}

function minWake(group: Group, at: number | undefined): void {
  if (at === undefined) return;
  if (group.wakeAtMs === undefined || at < group.wakeAtMs) group.wakeAtMs = at;
}

function hold(
  ctx: StepContext,
  stage: Stage,
  group: Group,
  member: Member,
  held: { reason: string; message: string; untilMs?: number },
): void {
  setMemberState(
    ctx,
    stage,
    group,
    member,
    "Pending",
    held.message,
    held.reason,
  );
  minWake(group, held.untilMs);
}

function holdForWindow(
  ctx: StepContext,
  stage: Stage,
  group: Group,
  member: Member,
): void {
  const opening = nextOpening(
    member.maintenance,
    ctx.run.windowScope,
    ctx.nowMs,
  );
  const message =
    opening === undefined
      ? `Maintenance window for ${ctx.run.windowScope} closed; no opening in sight`
      : `Maintenance window for ${ctx.run.windowScope} closed until ${isoTime(opening)}`;
  setMemberState(
    ctx,
    stage,
    group,
    member,
    "Pending",
    message,
    "MaintenanceWindow",
  );
  minWake(group, opening);
}

/**
 * Returns the index of the member to start next, or undefined when none can start now. Members
 * that were reached but cannot start are marked Pending with the reason and next opening, and the
 * group's `wakeAtMs` is set to the earliest time one of them may become startable.
 */
export function pickNext(
  ctx: StepContext,
  stage: Stage,
  group: Group,
  dryRun = false,
): number | undefined {
  if (!dryRun) delete group.wakeAtMs;
  const members = group.members;
  let open: number | undefined;
  let unconstrained: number | undefined;
  const closed: number[] = [];
  for (const i of group.constrained) {
    const m = members[i];
    if (m === undefined || !isWaiting(m)) continue;
    const held = holdReason(ctx, m);
    if (held !== undefined) {
      if (!dryRun) hold(ctx, stage, group, m, held);
      continue;
    }
    const category = windowCategory(
      m.maintenance,
      ctx.run.windowScope,
      ctx.nowMs,
    );
    if (category === "open") {
      open ??= i;
      if (dryRun) return i;
    } else if (category === "none") unconstrained ??= i;
    else if (category === "opensSoon") {
      if (!dryRun) holdForWindow(ctx, stage, group, m);
    } else closed.push(i);
  }
  if (open !== undefined) return open;

  // Unconstrained members: those passed over earlier, then the cursor, lowest name first.
  for (const i of group.deferred) {
    const m = members[i];
    // A member that reported windows after it was deferred is ordered by them above, not here.
    if (m === undefined || m.constrained || !isWaiting(m)) continue;
    const held = holdReason(ctx, m);
    if (held !== undefined) {
      if (!dryRun) hold(ctx, stage, group, m, held);
      continue;
    }
    if (unconstrained === undefined || i < unconstrained) unconstrained = i;
  }
  if (!dryRun) compactDeferred(group);
  let cursor = group.cursor;
  while (cursor < members.length) {
    const m = members[cursor];
    if (m === undefined || m.constrained || !isWaiting(m)) {
      cursor += 1;
      continue;
    }
    const held = holdReason(ctx, m);
    if (held === undefined) break;
    if (dryRun) {
      cursor += 1;
      continue;
    }
    hold(ctx, stage, group, m, held);
    group.deferred.push(cursor);
    cursor += 1;
  }
  if (!dryRun) group.cursor = cursor;
  if (
    cursor < members.length &&
    (unconstrained === undefined || cursor < unconstrained)
  )
    unconstrained = cursor;
  if (unconstrained !== undefined) return unconstrained;

  // Nothing startable: the members with closed windows have now been reached.
  if (!dryRun) {
    for (const i of closed) {
      const m = members[i];
      if (m !== undefined) holdForWindow(ctx, stage, group, m);
    }
  }
  return undefined;
}

/** Removes deferred entries that are no longer waiting (started, finished, skipped). */
function compactDeferred(group: Group): void {
  if (group.deferred.length === 0) return;
  group.deferred = group.deferred.filter((i) => {
    const m = group.members[i];
    return m !== undefined && isWaiting(m);
  });
}

/** Takes a member picked by {@link pickNext} out of the cursor/deferred bookkeeping. */
export function takePicked(group: Group, index: number): void {
  if (index === group.cursor) group.cursor += 1;
  else {
    const at = group.deferred.indexOf(index);
    if (at !== -1) group.deferred.splice(at, 1);
  }
}
