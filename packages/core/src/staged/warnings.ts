/**
 * Warnings about a resolved staged run: settings that weaken a gate or that the engine had to
 * adjust (clamped concurrency), members that will not be updated, and stages that cannot start.
 */
import type { PlanWarning } from "../preview-types.js";
import type { Run } from "./run.js";

const LISTED = 5;

function list(names: readonly string[]): string {
  const shown = names.slice(0, LISTED).join(", ");
  return names.length > LISTED
    ? `${shown} and ${String(names.length - LISTED)} more`
    : shown;
}

/** Warnings for a run as resolved (before it starts). */
export function runWarnings(run: Run): PlanWarning[] {
  const warnings: PlanWarning[] = [];
  for (const stage of run.stages) {
    if (stage.memberCount === 0) {
      warnings.push({
        code: "EmptyStage",
        message: `stage "${stage.name}" has no members (${stage.groups.length === 1 ? "group" : "groups"} ${list(stage.groups.map((g) => g.name))}): the run will skip it (NoMembers) with its gates and after-stage wait, and go on`,
      });
      // Its groups are empty too; one warning says it all.
      continue;
    }
    if (
      stage.maxAllowedFailures !== null &&
      stage.memberCount > 0 &&
      stage.maxAllowedFailures >= stage.memberCount
    ) {
      warnings.push({
        code: "BudgetNeverExceeded",
        message: `stage "${stage.name}": maxAllowedFailures ${String(stage.maxAllowedFailures)} ≥ its ${String(stage.memberCount)} members, so failures never fail it ("Completed" may mean 0% success)`,
      });
    }
    for (const group of stage.groups) {
      if (group.members.length === 0) {
        warnings.push({
          code: "EmptyGroup",
          message: `group "${group.name}" in stage "${stage.name}" has no members: it will be skipped (NoMembers) with its gates`,
        });
        continue;
      }
      if (
        group.maxAllowedFailures !== null &&
        group.maxAllowedFailures >= group.members.length
      ) {
        warnings.push({
          code: "BudgetNeverExceeded",
          message: `group "${group.name}": maxAllowedFailures ${String(group.maxAllowedFailures)} ≥ its ${String(group.members.length)} members, so failures never fail it ("Completed" may mean 0% success)`,
        });
      }
      const configured = group.configuredMaxConcurrency;
      if (
        configured !== undefined &&
        !configured.endsWith("%") &&
        Number(configured) > group.maxConcurrency
      ) {
        warnings.push({
          code: "ConcurrencyClamped",
          message: `group "${group.name}": maxConcurrency ${configured} is clamped to ${String(group.maxConcurrency)} by the stage limit (${String(stage.maxConcurrency)}) or the group size (${String(group.members.length)})`,
        });
      }
    }
  }
  if (run.unassigned.length > 0) {
    warnings.push({
      code: "UnassignedClusters",
      message: `${String(run.unassigned.length)} cluster(s) match no group and will not be updated: ${list(run.unassigned)}`,
    });
  }
  return warnings;
}
