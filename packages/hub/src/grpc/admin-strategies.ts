/** AdminService: update strategies (create, update, get, list, delete). */
import type { wire } from "@flotilla/protocol";
import {
  parseStrategyJson,
  type StoredStrategy,
} from "../strategies/update-strategies.js";
import {
  runAudit,
  type Handlers,
  type RunHandlerDeps,
} from "./admin-run-common.js";
import { requireName } from "./admin-fleet.js";
import { paginate } from "./pages.js";
import { audited, unary } from "./unary.js";

function strategyToWire(stored: StoredStrategy): wire.UpdateStrategy {
  return {
    name: stored.record.name,
    strategyJson: stored.record.strategyJson,
    createdAtMs: stored.record.createdAtMs,
    updatedAtMs: stored.record.updatedAtMs,
    revision: stored.revision,
  };
}

export function strategyHandlers(
  deps: RunHandlerDeps,
): Pick<
  Handlers,
  | "CreateUpdateStrategy"
  | "UpdateUpdateStrategy"
  | "GetUpdateStrategy"
  | "ListUpdateStrategies"
  | "DeleteUpdateStrategy"
> {
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
  };
}
