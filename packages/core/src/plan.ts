/**
 * `flotilla plan`: what a strategy will do with a set of clusters, computed by the engine with no
 * hub (docs/semantics.md#offline-planning): waves → groups → clusters in order, resolved limits,
 * unassigned clusters, warnings.
 */
import type { Cluster, ClusterGroup } from "./cluster.js";
import { formPartitions } from "./fleet/partitions.js";
import type { FleetRolloutStrategy } from "./fleet/strategy.js";
import {
  pausedClusterWarnings,
  undeclaredGroupWarnings,
} from "./fleet/target-warnings.js";
import { fleetWarnings } from "./fleet/warnings.js";
import { parseInputs, tag, type PreviewInputs } from "./preview/inputs.js";
import type { InputProblem, PlanGate, PlanOutput } from "./preview-types.js";
import type { Result } from "./result.js";
import { resolveRun } from "./staged/resolve.js";
import type { Gate } from "./staged/run.js";
import { runWarnings } from "./staged/warnings.js";
import type { UpdateStrategy } from "./update-strategy.js";
import { compact } from "./compact.js";

/** Plans a Fleet rollout: partitions as waves with one group each. */
export function planFleet(
  strategy: FleetRolloutStrategy,
  clusters: readonly Cluster[],
  clusterGroups: readonly ClusterGroup[],
): PlanOutput {
  const formed = formPartitions(strategy, clusters, clusterGroups);
  return {
    apiVersion: "flotilla.dev/v1",
    dialect: "fleet",
    waves: formed.partitions.map((p) => ({
      name: p.name,
      kind: "partition",
      maxUnavailable: p.maxUnavailable,
      groups: [{ name: p.name, clusters: p.clusters }],
    })),
    limits: { ...formed.limits },
    unassigned: formed.unassigned,
    warnings: [
      ...fleetWarnings(
        strategy,
        formed.partitions,
        formed.limits,
        formed.unassigned,
      ),
      ...undeclaredGroupWarnings(strategy, clusters, clusterGroups),
      ...pausedClusterWarnings(clusters),
    ],
  };
}

/** Plans a staged run: stages as waves, with effective concurrency and resolved budgets. */
export function planStaged(
  strategy: UpdateStrategy,
  clusters: readonly Cluster[],
): Result<PlanOutput> {
  const resolved = resolveRun({
    name: "plan",
    strategy,
    clusters,
    payload: { kind: "bundle", bundle: "plan", revision: "plan" },
    createdAtMs: 0,
  });
  if (!resolved.ok) return resolved;
  const run = resolved.value;
  return {
    ok: true,
    value: {
      apiVersion: "flotilla.dev/v1",
      dialect: "staged",
      waves: run.stages.map((s) => ({
        name: s.name,
        kind: "stage",
        maxConcurrency: s.maxConcurrency,
        maxAllowedFailures: s.maxAllowedFailures,
        ...compact({
          sortingLabelKey: s.sortingLabelKey,
          gates: planGates([...s.beforeGates, ...s.afterGates]),
        }),
        groups: s.groups.map((g) => ({
          name: g.name,
          clusters: g.members.map((m) => m.name),
          maxConcurrency: g.maxConcurrency,
          maxAllowedFailures: g.maxAllowedFailures,
          ...compact({
            gates: planGates([...g.beforeGates, ...g.afterGates]),
          }),
        })),
      })),
      limits: {},
      unassigned: run.unassigned,
      warnings: runWarnings(run, clusters),
    },
  };
}

/** The gates of a stage or group as `plan` shows them; undefined for none. */
function planGates(gates: readonly Gate[]): PlanGate[] | undefined {
  if (gates.length === 0) return undefined;
  return gates.map((g) => ({
    id: g.id,
    type: g.type,
    displayName: g.displayName,
    ...(g.metric === undefined
      ? {}
      : {
          metric: {
            query: g.metric.query,
            ...compact({
              successCondition: g.metric.successCondition,
              failureCondition: g.metric.failureCondition,
            }),
            intervalSeconds: g.metric.intervalSeconds,
            count: g.metric.count,
            failureLimit: g.metric.failureLimit,
            inconclusiveLimit: g.metric.inconclusiveLimit,
          },
        }),
  }));
}

/** `flotilla plan`: parses the inputs and plans in the strategy's dialect. */
export function plan(inputs: PreviewInputs): Result<PlanOutput, InputProblem> {
  const parsed = parseInputs(inputs);
  if (!parsed.ok) return parsed;
  const { clusters, clusterGroups, strategy } = parsed.value;
  if (strategy.dialect === "fleet")
    return {
      ok: true,
      value: planFleet(strategy.strategy, clusters, clusterGroups),
    };
  const staged = planStaged(strategy.strategy, clusters);
  return staged.ok
    ? staged
    : { ok: false, problems: tag("strategy", staged.problems) };
}
