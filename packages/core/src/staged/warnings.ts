/**
 * Warnings about a resolved staged run: settings that weaken a gate or that the engine had to
 * adjust (clamped concurrency), members that will not be updated, empty scopes the run will skip,
 * and members a sorting label cannot place.
 */
import { compareNames, type Cluster } from "../cluster.js";
import type { PlanWarning } from "../preview-types.js";
import { sortingValue } from "./member-order.js";
import type { Run } from "./run.js";

const LISTED = 5;

function list(names: readonly string[]): string {
  const shown = names.slice(0, LISTED).join(", ");
  return names.length > LISTED
    ? `${shown} and ${String(names.length - LISTED)} more`
    : shown;
}

/** Warnings for a run as resolved (before it starts) from `clusters`. */
export function runWarnings(
  run: Run,
  clusters: readonly Cluster[],
): PlanWarning[] {
  const warnings: PlanWarning[] = [];
  const byName = new Map(clusters.map((c) => [c.name, c]));
  for (const stage of run.stages) {
    const key = stage.sortingLabelKey;
    if (key !== undefined) {
      const unsorted = stage.groups
        .flatMap((g) => g.members.map((m) => m.name))
        .filter((name) => {
          const cluster = byName.get(name);
          return (
            cluster === undefined || sortingValue(cluster, key) === undefined
          );
        })
        .sort(compareNames);
      if (unsorted.length > 0)
        warnings.push({
          code: "SortingLabelMissing",
          message: `stage "${stage.name}": ${String(unsorted.length)} member(s) have no integer value for sortingLabelKey "${key}" and go after the others, by name: ${list(unsorted)}`,
        });
    }
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
