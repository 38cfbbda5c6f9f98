/**
 * AdminService: update strategies, update runs (create, operator commands, status, watch) and the
 * server-side plan preview. Operator commands go through the run manager, which applies them with
 * core's `step`: a command the run cannot take now (start a Completed run, approve a gate that is
 * not Pending) is FAILED_PRECONDITION and changes nothing.
 */
import {
  FlotillaError,
  isRunFinished,
  matchesSelector,
  parseSelectorString,
  planStaged,
  type LabelSelector,
  type PlanOutput,
  type PlanWarning,
  type RunState,
  type UpdateStrategy,
} from "@flotilla/core";
import {
  RUN_STATE,
  runPayloadFromWire,
  runSummaryToWire,
  runToWire,
  toGrpcStatus,
  transitionToWire,
  type wire,
} from "@flotilla/protocol";
import type { ServerWritableStream } from "@grpc/grpc-js";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import type { RunCommand, RunManager, StoredRun } from "../runs/run-manager.js";
import {
  parseStrategyJson,
  type StoredStrategy,
  type UpdateStrategies,
} from "../strategies/update-strategies.js";
import { requireName } from "./admin-fleet.js";
import { paginate } from "./pages.js";
import {
  audited,
  callContext,
  unary,
  type AuditDeps,
  type CallContext,
} from "./unary.js";

type Handlers = wire.AdminServiceHandlers;

export interface RunHandlerDeps extends AuditDeps {
  readonly runs: RunManager;
  readonly strategies: UpdateStrategies;
  readonly directory: ClusterDirectory;
  /** The plan of a bundle's rollout (AdminService.PreviewPlan with `bundle`). */
  readonly previewBundle: (name: string) => PlanOutput;
}

const MAX_DEADLINE_SECONDS = 7 * 24 * 3600;

function strategyToWire(stored: StoredStrategy): wire.UpdateStrategy {
  return {
    name: stored.record.name,
    strategyJson: stored.record.strategyJson,
    createdAtMs: stored.record.createdAtMs,
    updatedAtMs: stored.record.updatedAtMs,
    revision: stored.revision,
  };
}

/** A run's full status (the strategy's name is in the run's summary, not in RunStatus). */
function runStatus(stored: StoredRun): wire.RunStatus {
  return runToWire(stored.run, stored.revision);
}

function warningsToWire(warnings: readonly PlanWarning[]): wire.Warning[] {
  return warnings.map((w) => ({ code: w.code, message: w.message }));
}

function actor(context: CallContext, reason: string) {
  return { actor: context.actor, ...(reason === "" ? {} : { reason }) };
}

/** Checks a list of names (stages, groups, members, gates); problems at `path[i]`. */
function requireNames(names: readonly string[], path: string): void {
  const problems = names.flatMap((n, i) => {
    if (n === "")
      return [
        {
          path: `${path}[${String(i)}]`,
          message: "must not be empty",
          value: n,
        },
      ];
    if (n.length > 253) {
      return [
        {
          path: `${path}[${String(i)}]`,
          message: "must be at most 253 characters",
          value: n,
        },
      ];
    }
    return [];
  });
  if (problems.length > 0) throw FlotillaError.invalid("request", problems);
}

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
  const runAudit = <Req extends { reason: string }>(
    method: string,
    targetName: (r: Req) => string,
    targetKind = "update-run",
  ) => ({ method, targetKind, targetName, reason: (r: Req) => r.reason });

  const strategyFor = (
    request: wire.CreateUpdateRunRequest__Output,
  ): { strategy?: UpdateStrategy; strategyName?: string } => {
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
  };

  return {
    CreateUpdateStrategy: unary(
      audited(
        deps,
        runAudit("CreateUpdateStrategy", (r) => r.name, "update-strategy"),
        async (request) => {
          requireName(request.name, "name", "update strategy");
          const stored = await deps.strategies.create(
            request.name,
            request.strategyJson,
          );
          return { strategy: strategyToWire(stored), warnings: [] };
        },
      ),
    ),

    UpdateUpdateStrategy: unary(
      audited(
        deps,
        runAudit("UpdateUpdateStrategy", (r) => r.name, "update-strategy"),
        async (request) => {
          requireName(request.name, "name", "update strategy");
          parseStrategyJson(request.strategyJson, "strategyJson");
          deps.strategies.get(request.name);
          const stored = await deps.strategies.update(
            request.name,
            request.strategyJson,
            request.expectedRevision === 0
              ? undefined
              : request.expectedRevision,
          );
          return { strategy: strategyToWire(stored), warnings: [] };
        },
      ),
    ),

    GetUpdateStrategy: unary((request) => {
      const name = requireName(request.name, "name", "update strategy");
      return { strategy: strategyToWire(deps.strategies.get(name)) };
    }),

    ListUpdateStrategies: unary((request) => {
      const page = paginate(
        deps.strategies.list(),
        (s) => s.record.name,
        request.pageSize,
        request.pageToken,
      );
      return {
        strategies: page.items.map(strategyToWire),
        nextPageToken: page.nextPageToken,
      };
    }),

    DeleteUpdateStrategy: unary(
      audited(
        deps,
        runAudit("DeleteUpdateStrategy", (r) => r.name, "update-strategy"),
        async (request) => {
          const name = requireName(request.name, "name", "update strategy");
          await deps.strategies.delete(name);
          return {};
        },
      ),
    ),

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
          const strategy = strategyFor(request);
          const created = await deps.runs.create({
            name: request.name,
            ...strategy,
            payload: payload.value,
            ...(deadline === undefined
              ? {}
              : { progressDeadlineSeconds: deadline }),
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

    GetUpdateRun: unary((request) => {
      const name = requireName(request.name, "name", "update run");
      return { run: runStatus(deps.runs.get(name)) };
    }),

    ListUpdateRuns: unary((request) => {
      const states: RunState[] = [];
      const problems = request.states.flatMap((raw, i) => {
        const state = RUN_STATE.fromWire(raw);
        if (state === undefined) {
          return [
            {
              path: `states[${String(i)}]`,
              message: "is not a run state",
              value: raw,
            },
          ];
        }
        states.push(state);
        return [];
      });
      if (problems.length > 0)
        throw FlotillaError.invalid("run list request", problems);
      const page = paginate(
        deps.runs.list(states),
        (r) => r.run.name,
        request.pageSize,
        request.pageToken,
      );
      return {
        runs: page.items.map((r) =>
          runSummaryToWire(r.run, {
            revision: r.revision,
            ...(r.strategyName === undefined
              ? {}
              : { strategyName: r.strategyName }),
          }),
        ),
        nextPageToken: page.nextPageToken,
      };
    }),

    WatchUpdateRun: (
      call: ServerWritableStream<
        wire.WatchUpdateRunRequest__Output,
        wire.WatchUpdateRunResponse
      >,
    ) => {
      const context = callContext(call);
      let stop = (): void => undefined;
      try {
        const name = requireName(call.request.name, "name", "update run");
        const first = deps.runs.get(name);
        call.write({ snapshot: runStatus(first) });
        if (isRunFinished(first.run.state)) {
          call.end();
          return;
        }
        stop = deps.runs.watch(name, (update) => {
          call.write({
            change: {
              summary: runSummaryToWire(update.run, {
                revision: update.revision,
              }),
              transitions: update.transitions.map(transitionToWire),
            },
          });
          if (isRunFinished(update.run.state)) {
            stop();
            call.end();
          }
        });
        context.signal.addEventListener("abort", () => {
          stop();
        });
        call.on("close", () => {
          stop();
        });
      } catch (error) {
        stop();
        call.emit("error", toGrpcStatus(error));
      }
    },

    PreviewPlan: unary((request) => {
      let selector: LabelSelector | undefined;
      if (request.labelSelector !== "") {
        const parsed = parseSelectorString(
          request.labelSelector,
          "labelSelector",
        );
        if (!parsed.ok)
          throw FlotillaError.invalid("preview request", parsed.problems);
        selector = parsed.value;
      }
      const clusters = deps.directory
        .clusters()
        .filter(
          (c) => selector === undefined || matchesSelector(selector, c.labels),
        );
      let plan: PlanOutput;
      switch (request.strategy) {
        case "bundle":
          plan = deps.previewBundle(
            requireName(request.bundle, "bundle", "preview request"),
          );
          break;
        case "updateStrategyName":
        case "strategyJson": {
          const strategy =
            request.strategy === "strategyJson"
              ? parseStrategyJson(request.strategyJson ?? "", "strategyJson")
              : deps.strategies.get(
                  requireName(
                    request.updateStrategyName,
                    "updateStrategyName",
                    "preview request",
                  ),
                ).strategy;
          const planned = planStaged(strategy, clusters);
          if (!planned.ok)
            throw FlotillaError.invalid("preview request", planned.problems);
          plan = planned.value;
          break;
        }
        case undefined:
          throw FlotillaError.invalid("preview request", [
            {
              path: "strategy",
              message: "set one of strategyJson, updateStrategyName or bundle",
            },
          ]);
      }
      return { planJson: JSON.stringify(plan) };
    }),
  };
}
