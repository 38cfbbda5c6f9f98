/** AdminService: an update run's status, the list of runs, and a watch on one run's changes. */
import {
  FlotillaError,
  isRunFinished,
  showValue,
  type RunState,
  compact,
} from "@flotilla/core";
import {
  RUN_STATE,
  runSummaryToWire,
  toGrpcStatus,
  transitionToWire,
  type wire,
} from "@flotilla/protocol";
import type { ServerWritableStream } from "@grpc/grpc-js";
import {
  runStatus,
  type Handlers,
  type RunHandlerDeps,
} from "./admin-run-common.js";
import { requireName } from "./admin-fleet.js";
import { paginate } from "./pages.js";
import { callContext, unary } from "./unary.js";

export function runStatusHandlers(
  deps: RunHandlerDeps,
): Pick<Handlers, "GetUpdateRun" | "ListUpdateRuns" | "WatchUpdateRun"> {
  return {
    GetUpdateRun: unary((request) => {
      const name = requireName(request.name, "name", "update run");
      return {
        run: runStatus(deps.runs.get(name)),
        ownerReplica: deps.ownerOf?.(name) ?? "",
      };
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
            ...compact({ strategyName: r.strategyName }),
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
          if (update.deleted === true) {
            stop();
            call.emit(
              "error",
              toGrpcStatus(
                new FlotillaError(
                  "not_found",
                  `Update run ${showValue(name)} was deleted`,
                ),
              ),
            );
            return;
          }
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
  };
}
