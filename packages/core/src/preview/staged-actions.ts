/**
 * Scenario operator actions as the engine's own commands (docs/plan-and-simulate.md): the
 * simulator never re-implements an action, it feeds these to `step` at the action's time.
 */
import type { ScenarioAction, SkipTarget } from "../scenario-actions.js";
import type { Actor, RunEvent } from "../staged/events.js";
import { compact } from "../compact.js";

/** Who the simulated operator is, in transition messages and on completed gates. */
export const SIMULATION_ACTOR = "simulation";

function skipEvent(target: SkipTarget, actor: Actor): RunEvent {
  switch (target.type) {
    case "Stage":
      return { type: "SkipStage", stage: target.name, ...actor };
    case "Group":
      return { type: "SkipGroup", group: target.name, ...actor };
    case "Member":
      return { type: "SkipMember", member: target.name, ...actor };
    default: {
      const never: never = target.type;
      return never;
    }
  }
}

/**
 * The commands an operator action sends to a run, one per skip target so that a target that cannot
 * be skipped does not hold back the others; joins and leaves are fleet changes, not commands.
 */
export function operatorCommands(
  action: Exclude<ScenarioAction, { action: "join" | "leave" }>,
): RunEvent[] {
  const actor: Actor = {
    actor: SIMULATION_ACTOR,
    ...compact({ reason: action.reason }),
  };
  switch (action.action) {
    case "stop":
      return [{ type: "StopRun", ...actor }];
    case "start":
      return [{ type: "StartRun", ...actor }];
    case "skip":
      return action.targets.map((t) => skipEvent(t, actor));
    case "retry":
      return [
        {
          type: "RetryMembers",
          ...compact({ members: action.members }),
          ...actor,
        },
      ];
    default: {
      const never: never = action;
      return never;
    }
  }
}
