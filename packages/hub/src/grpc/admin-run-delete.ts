/**
 * AdminService.DeleteUpdateRun: a run that is not in flight is deleted with everything stored for
 * it (docs/cli.md#runs). The run manager routes the deletion to the replica driving the run, as it
 * does operator commands, so the deletion never races a batch being stored.
 */
import { RUN_STATE } from "@flotilla/protocol";
import {
  runAudit,
  type Handlers,
  type RunHandlerDeps,
} from "./admin-run-common.js";
import { requireName } from "./admin-fleet.js";
import { audited, unary } from "./unary.js";

export function runDeleteHandlers(
  deps: RunHandlerDeps,
): Pick<Handlers, "DeleteUpdateRun"> {
  return {
    DeleteUpdateRun: unary(
      audited(
        deps,
        runAudit("DeleteUpdateRun", (r) => r.name),
        async (request) => {
          const name = requireName(request.name, "name", "update run");
          const state = await deps.runs.delete(name);
          return { state: RUN_STATE.toWire(state) };
        },
      ),
    ),
  };
}
