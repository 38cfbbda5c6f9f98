/**
 * AdminService: update runs are created here, and operator commands (start, stop, skip, retry,
 * approve and complete gates) go to the run manager, which applies them with core's `step`: a
 * command the run cannot take now (start a Completed run, approve a gate that is not Pending) is
 * FAILED_PRECONDITION and changes nothing.
 */
import { FlotillaError, type UpdateStrategy, compact } from "@flotilla/core";
import { runPayloadFromWire, type wire } from "@flotilla/protocol";
import type { RunCommand } from "../runs/run-manager.js";
import { parseStrategyJson } from "../strategies/update-strategies.js";
import {
  actor,
  requireNames,
  runAudit,
  runStatus,
  warningsToWire,
  type Handlers,
  type RunHandlerDeps,
} from "./admin-run-common.js";
import { requireName } from "./admin-fleet.js";
import { audited, unary } from "./unary.js";

const MAX_DEADLINE_SECONDS = 7 * 24 * 3600;

/** The strategy a create request names or spells out, if any. */
function strategyFor(
  deps: RunHandlerDeps,
  request: wire.CreateUpdateRunRequest__Output,
): { strategy?: UpdateStrategy; strategyName?: string } {
  if (request.strategy === "strategyName") {
    const name = requireName(
      request.strategyName,
      "strategyName",
      "update run",
    );
    return {
      strategy: deps.strategies.get(name).strategy,
      strategyName: name,
    };
  }
  if (request.strategy === "strategyJson") {
    return {
      strategy: parseStrategyJson(request.strategyJson ?? "", "strategyJson"),
    };
  }
  return {};
}

export function runCommandHandlers(
  deps: RunHandlerDeps,
): Pick<
  Handlers,
  | "CreateUpdateRun"
  | "StartUpdateRun"
  | "StopUpdateRun"
  | "SkipUpdateRunTargets"
  | "RetryUpdateRunMembers"
  | "ApproveGate"
  | "CompleteGate"
> {
  return {
    CreateUpdateRun: unary(
      audited(
        deps,
        runAudit("CreateUpdateRun", (r) => r.name),
        async (request) => {
          requireName(request.name, "name", "update run");
          const payload = runPayloadFromWire(request.payload, "payload");
          if (!payload.ok)
            throw FlotillaError.invalid("update run", payload.problems);
          const deadline = request.progressDeadlineSeconds ?? undefined;
          if (
            deadline !== undefined &&
            (deadline < 1 || deadline > MAX_DEADLINE_SECONDS)
          ) {
            throw FlotillaError.invalid("update run", [
              {
                path: "progressDeadlineSeconds",
                message: `must be 1 to ${String(MAX_DEADLINE_SECONDS)}`,
                value: deadline,
              },
            ]);
          }
          const strategy = strategyFor(deps, request);
          const created = await deps.runs.create({
            name: request.name,
            ...strategy,
            payload: payload.value,
            ...compact({ progressDeadlineSeconds: deadline }),
          });
          return {
            run: runStatus(created),
            warnings: warningsToWire(created.warnings),
          };
        },
      ),
    ),

    StartUpdateRun: unary(
      audited(
        deps,
        runAudit("StartUpdateRun", (r) => r.name),
        async (request, context) => {
          const name = requireName(request.name, "name", "update run");
          return {
            run: runStatus(
              await deps.runs.command(name, {
                type: "StartRun",
                ...actor(context, request.reason),
              }),
            ),
          };
        },
      ),
    ),

    StopUpdateRun: unary(
      audited(
        deps,
        runAudit("StopUpdateRun", (r) => r.name),
        async (request, context) => {
          const name = requireName(request.name, "name", "update run");
          return {
            run: runStatus(
              await deps.runs.command(name, {
                type: "StopRun",
                ...actor(context, request.reason),
              }),
            ),
          };
        },
      ),
    ),

    SkipUpdateRunTargets: unary(
      audited(
        deps,
        runAudit("SkipUpdateRunTargets", (r) => r.name),
        async (request, context) => {
          const name = requireName(request.name, "name", "update run");
          requireNames(request.stages, "stages");
          requireNames(request.groups, "groups");
          requireNames(request.members, "members");
          const by = actor(context, request.reason);
          const commands: RunCommand[] = [
            ...request.stages.map((stage): RunCommand => ({
              type: "SkipStage",
              stage,
              ...by,
            })),
            ...request.groups.map((group): RunCommand => ({
              type: "SkipGroup",
              group,
              ...by,
            })),
            ...request.members.map((member): RunCommand => ({
              type: "SkipMember",
              member,
              ...by,
            })),
          ];
          if (commands.length === 0) {
            throw FlotillaError.invalid("skip request", [
              {
                path: "stages",
                message: "name at least one stage, group or member to skip",
              },
            ]);
          }
          return { run: runStatus(await deps.runs.command(name, ...commands)) };
        },
      ),
    ),

    RetryUpdateRunMembers: unary(
      audited(
        deps,
        runAudit("RetryUpdateRunMembers", (r) => r.name),
        async (request, context) => {
          const name = requireName(request.name, "name", "update run");
          requireNames(request.members, "members");
          const stored = await deps.runs.command(name, {
            type: "RetryMembers",
            ...(request.members.length === 0
              ? {}
              : { members: request.members }),
            ...actor(context, request.reason),
          });
          return { run: runStatus(stored) };
        },
      ),
    ),

    ApproveGate: unary(
      audited(
        deps,
        runAudit("ApproveGate", (r) => `${r.run}/${r.gateId}`, "gate"),
        async (request, context) => {
          const name = requireName(request.run, "run", "gate approval");
          requireNames([request.gateId], "gateId");
          const stored = await deps.runs.command(name, {
            type: "ApproveGate",
            gate: request.gateId,
            ...actor(context, request.reason),
          });
          return { run: runStatus(stored) };
        },
      ),
    ),

    CompleteGate: unary(
      audited(
        deps,
        runAudit("CompleteGate", (r) => `${r.run}/${r.gateId}`, "gate"),
        async (request, context) => {
          const name = requireName(request.run, "run", "gate completion");
          requireNames([request.gateId], "gateId");
          const stored = await deps.runs.command(name, {
            type: "CompleteGate",
            gate: request.gateId,
            ...actor(context, request.reason),
          });
          return { run: runStatus(stored) };
        },
      ),
    ),
  };
}
