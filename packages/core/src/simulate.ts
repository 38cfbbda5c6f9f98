/**
 * `flotilla simulate`: runs the real engine in virtual time against a scenario
 * (docs/semantics.md#offline-planning) and returns the timeline and final states: a rollout preview
 * with timing.
 */
import { planFleet, planStaged } from "./plan.js";
import { parseInputs, tag, type PreviewInputs } from "./preview/inputs.js";
import { simulateFleetRollout } from "./preview/simulate-fleet.js";
import { simulateStagedRun } from "./preview/simulate-staged.js";
import type { InputProblem, SimulationOutput } from "./preview-types.js";
import type { Result } from "./result.js";
import { parseScenario } from "./scenario.js";
import { joiningLater, strategyActionProblems } from "./scenario-actions.js";

/** `flotilla simulate`: parses the inputs and the scenario, then simulates. */
export function simulate(
  inputs: PreviewInputs & { readonly scenario: unknown },
): Result<SimulationOutput, InputProblem> {
  const parsed = parseInputs(inputs);
  const names = new Set(
    parsed.ok ? parsed.value.clusters.map((c) => c.name) : [],
  );
  const scenario = parseScenario(inputs.scenario, names);
  if (!parsed.ok || !scenario.ok) {
    return {
      ok: false,
      problems: [
        ...(parsed.ok ? [] : parsed.problems),
        ...(scenario.ok ? [] : tag("scenario", scenario.problems)),
      ],
    };
  }
  const { clusters, clusterGroups, strategy } = parsed.value;
  const actionProblems = strategyActionProblems(
    scenario.value.actions,
    strategy,
  );
  if (actionProblems.length > 0)
    return { ok: false, problems: tag("scenario", actionProblems) };
  if (strategy.dialect === "fleet") {
    if (scenario.value.kind === "upgrade") {
      return {
        ok: false,
        problems: [
          {
            source: "scenario",
            path: "kind",
            message:
              "a Fleet rolloutStrategy rolls out bundle revisions (firstDeployment or update); platform upgrades need an update strategy with stages",
            value: "upgrade",
          },
        ],
      };
    }
    const output = simulateFleetRollout({
      clusters,
      clusterGroups,
      strategy: strategy.strategy,
      scenario: scenario.value,
    });
    return {
      ok: true,
      value: {
        ...output,
        warnings: planFleet(strategy.strategy, clusters, clusterGroups)
          .warnings,
      },
    };
  }
  const result = simulateStagedRun({
    clusters,
    strategy: strategy.strategy,
    scenario: scenario.value,
  });
  if (!result.ok)
    return { ok: false, problems: tag("strategy", result.problems) };
  // The plan's warnings are about the members the run was created with.
  const later = joiningLater(scenario.value.actions);
  const planned = planStaged(
    strategy.strategy,
    clusters.filter((c) => !later.has(c.name)),
  );
  return {
    ok: true,
    value: {
      ...result.value.output,
      warnings: planned.ok ? planned.value.warnings : [],
    },
  };
}
