/**
 * Empty scopes (docs/semantics.md#empty-scopes): a stage or group with no members never blocks a
 * run. When the run reaches it, it is Skipped with reason `NoMembers`, its gates are Skipped with
 * it (nobody is asked to approve a scope that does nothing) and an empty stage's after-stage wait
 * does not apply.
 */
import { setGroupState, setStageState, type StepContext } from "./context.js";
import { skipGates } from "./gates.js";
import type { Group, Stage } from "./run.js";

/** Why an empty stage or group was skipped. */
export const NO_MEMBERS = "NoMembers";

/** Skips a group that has no members, with its gates. */
export function skipEmptyGroup(
  ctx: StepContext,
  stage: Stage,
  group: Group,
): void {
  const message = "Skipped: the group has no members";
  skipGates(
    ctx,
    [...group.beforeGates, ...group.afterGates],
    { stage: stage.name, group: group.name },
    message,
  );
  group.reason = NO_MEMBERS;
  setGroupState(ctx, stage, group, "Skipped", message);
}

/** Skips a stage that has no members, with its groups and gates. */
export function skipEmptyStage(ctx: StepContext, stage: Stage): void {
  const message = "Skipped: the stage has no members";
  for (const group of stage.groups) skipEmptyGroup(ctx, stage, group);
  skipGates(
    ctx,
    [...stage.beforeGates, ...stage.afterGates],
    { stage: stage.name },
    message,
  );
  stage.reason = NO_MEMBERS;
  setStageState(ctx, stage, "Skipped", message);
}
