/**
 * Shared inputs and lookups for simulation tests: a small upgrade fleet (one canary, four prod
 * members), a two-stage strategy, and helpers that find timeline entries and members in an output.
 */
import type { SimulationOutput, TimelineEntry } from "../src/preview-types.js";
import { simulate } from "../src/simulate.js";

export const UBUNTU = "AKSUbuntu-2204gen2containerd";
const pools = [
  { name: "system", imageFamily: UBUNTU, imageVersion: "202602.15.0" },
];

/** One canary and four prod clusters on 1.30.5, all in westeurope. */
export const fleet = [
  { name: "canary-1", updateGroup: "canary" },
  ...[1, 2, 3, 4].map((i) => ({
    name: `prod-${String(i)}`,
    updateGroup: "prod",
  })),
].map((c) => ({
  ...c,
  kubernetesVersion: "1.30.5",
  region: "westeurope",
  nodePools: pools,
}));

/** Stage canary (one group), then stage prod (one group of two at a time, budget 1). */
export const twoStages = {
  stages: [
    { name: "canary", groups: [{ name: "canary" }] },
    {
      name: "prod",
      groups: [{ name: "prod", maxConcurrency: "2", maxAllowedFailures: "1" }],
    },
  ],
};

/** Monday 2026-03-02 10:00 UTC, a Full upgrade to 1.31.2; members take 10 minutes. */
export const upgradeScenario = {
  start: "2026-03-02T10:00:00Z",
  kind: "upgrade",
  upgrade: { type: "Full", kubernetesVersion: "1.31.2" },
  defaults: { readyAfterSeconds: 600 },
};

/** Runs `simulate` and returns its output; input problems fail the test with their paths. */
export function simulated(
  scenario: Record<string, unknown>,
  strategy: unknown = twoStages,
  clusters: unknown = fleet,
): SimulationOutput {
  const result = simulate({ clusters, strategy, scenario });
  if (!result.ok)
    throw new Error(
      `unexpected input problems: ${JSON.stringify(result.problems)}`,
    );
  return result.value;
}

/** The input problems `simulate` reports, as `[source, path, message]`. */
export function problemsOf(
  scenario: Record<string, unknown>,
  strategy: unknown = twoStages,
  clusters: unknown = fleet,
): [string, string, string][] {
  const result = simulate({ clusters, strategy, scenario });
  if (result.ok) throw new Error("expected input problems, got a simulation");
  return result.problems.map((p) => [p.source, p.path, p.message]);
}

/** The time of the first timeline entry of `type` about `cluster`. */
export function when(
  out: SimulationOutput,
  type: string,
  cluster: string,
): string | undefined {
  return out.timeline.find((e) => e.type === type && e.cluster === cluster)?.at;
}

/** Timeline entries about one scope (`run`, `stage`, `group` or `gate`), as `[at, to]`. */
export function scopeChanges(
  out: SimulationOutput,
  type: string,
  name?: string,
): [string, string | undefined][] {
  return out.timeline
    .filter(
      (e: TimelineEntry) =>
        e.type === type &&
        (name === undefined ||
          (type === "gate"
            ? e.gate === name
            : type === "group"
              ? e.group === name
              : e.wave === name)),
    )
    .map((e) => [e.at, e.to]);
}

/** A member's final state in the output. */
export function memberOf(out: SimulationOutput, name: string) {
  return out.waves
    .flatMap((w) => w.groups.flatMap((g) => g.members))
    .find((m) => m.name === name);
}
