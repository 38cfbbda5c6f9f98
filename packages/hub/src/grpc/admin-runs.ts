/**
 * AdminService: update strategies, update runs (create, operator commands, status, watch, delete,
 * gates) and the server-side plan preview, assembled from one file per concern.
 */
import type { Handlers, RunHandlerDeps } from "./admin-run-common.js";
import { gateHandlers } from "./admin-gates.js";
import { planHandlers } from "./admin-plan.js";
import { runDeleteHandlers } from "./admin-run-delete.js";
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
  | "DeleteUpdateRun"
  | "ListGates"
> {
  return {
    ...strategyHandlers(deps),
    ...runCommandHandlers(deps),
    ...runStatusHandlers(deps),
    ...planHandlers(deps),
    ...runDeleteHandlers(deps),
    ...gateHandlers(deps),
  };
}
