/**
 * AdminService.ListGates: the gates of every run (or of one), for `flotilla gate list` as
 * `az fleet gate list` shows them, without sending each run's full status.
 */
import {
  FlotillaError,
  type Gate,
  type GateState,
  type Run,
} from "@flotilla/core";
import { GATE_STATE, gateToWire, type wire } from "@flotilla/protocol";
import type { Handlers, RunHandlerDeps } from "./admin-run-common.js";
import { unary } from "./unary.js";

/** A run's gates in the order the run reaches them: per stage, before, its groups', after. */
export function gatesOf(run: Run): Gate[] {
  return run.stages.flatMap((stage) => [
    ...stage.beforeGates,
    ...stage.groups.flatMap((group) => [
      ...group.beforeGates,
      ...group.afterGates,
    ]),
    ...stage.afterGates,
  ]);
}

function statesOf(raw: readonly string[]): GateState[] {
  const states: GateState[] = [];
  const problems = raw.flatMap((value, i) => {
    const state = GATE_STATE.fromWire(value);
    if (state !== undefined) {
      states.push(state);
      return [];
    }
    return [
      { path: `states[${String(i)}]`, message: "is not a gate state", value },
    ];
  });
  if (problems.length > 0)
    throw FlotillaError.invalid("gate list request", problems);
  return states;
}

export function gateHandlers(
  deps: RunHandlerDeps,
): Pick<Handlers, "ListGates"> {
  return {
    ListGates: unary((request) => {
      const states = statesOf(request.states);
      const runs =
        request.run === "" ? deps.runs.list() : [deps.runs.get(request.run)];
      const gates: wire.RunGate[] = [];
      for (const { run } of runs) {
        for (const gate of gatesOf(run)) {
          if (states.length > 0 && !states.includes(gate.state)) continue;
          gates.push({ run: run.name, gate: gateToWire(gate) });
        }
      }
      return { gates };
    }),
  };
}
