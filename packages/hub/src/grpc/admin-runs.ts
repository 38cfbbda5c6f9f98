/**
 * AdminService: update strategies, update runs (create, operator commands, status, watch) and the
 * server-side plan preview, assembled from one file per concern.
 */
import type { Handlers, RunHandlerDeps } from "./admin-run-common.js";
import { planHandlers } from "./admin-plan.js";
import { runCommandHandlers } from "./admin-run-commands.js";
import { runStatusHandlers } from "./admin-run-status.js";
import { strategyHandlers } from "./admin-strategies.js";

export type { RunHandlerDeps } from "./admin-run-common.js";

export function runHandlers(
  deps: RunHandlerDeps,
): Pick<
  Handlers,
  | "CreateUpdateStrategy"
  | "UpdateUpdateStrategy"
  | "GetUpdateStrategy"
  | "ListUpdateStrategies"
  | "DeleteUpdateStrategy"
  | "CreateUpdateRun"
  | "StartUpdateRun"
  | "StopUpdateRun"
  | "SkipUpdateRunTargets"
  | "RetryUpdateRunMembers"
  | "ApproveGate"
  | "CompleteGate"
  | "GetUpdateRun"
  | "ListUpdateRuns"
  | "WatchUpdateRun"
  | "PreviewPlan"
> {
  return {
    ...strategyHandlers(deps),
    ...runCommandHandlers(deps),
    ...runStatusHandlers(deps),
    ...planHandlers(deps),
  };
}
