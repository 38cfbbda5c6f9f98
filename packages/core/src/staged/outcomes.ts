/**
 * What agents report about members in flight: success, failure, or a deferred start. One report
 * is applied on its own; reports of the same instant are applied together and the scheduler runs
 * once after them, so every outcome of the batch is counted before a freed slot is refilled
 * (docs/semantics.md#simultaneous-outcomes).
 */
import { upgradeSucceededMessage } from "../node-image-plan.js";
import { compareNames } from "../cluster.js";
import { lastReported, memberByName, recordFailure } from "./advance.js";
import { setMemberState, type StepContext } from "./context.js";
import type { MemberOutcome, Rejection } from "./events.js";
import { notAMember } from "./member-index.js";

/** How long a member is held when its agent defers a start without saying until when. */
export const DEFAULT_DEFER_MS = 5 * 60_000;

/** Applies one report; a report about a member that is not in flight is refused and changes nothing. */
export function applyOutcome(
  ctx: StepContext,
  event: MemberOutcome,
): Rejection | undefined {
  const found = memberByName(ctx, event.member);
  if (found === undefined) return notAMember(ctx.run, event.member);
  const { stage, group, member } = found;
  if (member.state !== "Running") {
    return {
      code: "failed_precondition",
      message: `Ignoring ${event.type} for member "${member.name}": it is ${member.state}, not Running`,
    };
  }
  if (member.deadlineAtMs !== undefined && member.deadlineAtMs < ctx.nowMs) {
    // The report came after the deadline, before a Tick noticed: the deadline wins, whatever the
    // report says, so the outcome does not depend on how often the caller ticks.
    recordFailure(
      ctx,
      stage,
      group,
      member,
      `${event.type === "MemberSucceeded" ? "Succeeded" : "Reported"} after the progress deadline of ${String(ctx.run.progressDeadlineSeconds)}s${lastReported(member)}`,
      member.unreachable ? "Unreachable" : "TimedOut",
    );
    return undefined;
  }
  if (event.type === "MemberFailed") {
    recordFailure(ctx, stage, group, member, event.error, "Failed");
    return undefined;
  }
  group.inFlight -= 1;
  stage.inFlight -= 1;
  delete member.deadlineAtMs;
  if (event.type === "MemberSucceeded") {
    group.remaining -= 1;
    group.succeeded += 1;
    member.finishedAtMs = ctx.nowMs;
    // The agent knows what it changed; only the run knows which pools it left out, and why.
    const message = upgradeSucceededMessage(
      member.target ?? {},
      member.skippedNodeImages ?? [],
      event.message,
    );
    setMemberState(ctx, stage, group, member, "Succeeded", message);
    return undefined;
  }
  member.notBeforeMs = event.untilMs ?? ctx.nowMs + DEFAULT_DEFER_MS;
  if (!member.constrained) group.deferred.push(group.members.indexOf(member));
  setMemberState(
    ctx,
    stage,
    group,
    member,
    "Pending",
    event.message,
    "Deferred",
  );
  return undefined;
}

/**
 * Applies the reports of one instant, by member name so that their arrival order does not matter.
 * Reports that do not apply are collected in `ignored`; when none applies the batch is refused
 * (the first refusal is returned) and nothing has changed.
 */
export function applyOutcomes(
  ctx: StepContext,
  reports: readonly MemberOutcome[],
  ignored: Rejection[],
): Rejection | undefined {
  if (reports.length === 0) {
    return {
      code: "invalid_argument",
      message: `Cannot apply MembersReported to run "${ctx.run.name}": it has no reports`,
    };
  }
  const refused: Rejection[] = [];
  // Stable: two reports about one member keep their order (the second is refused).
  const ordered = [...reports].sort((a, b) => compareNames(a.member, b.member));
  for (const report of ordered) {
    const no = applyOutcome(ctx, report);
    if (no !== undefined) refused.push(no);
  }
  if (refused.length === ordered.length) return refused[0];
  ignored.push(...refused);
  return undefined;
}
