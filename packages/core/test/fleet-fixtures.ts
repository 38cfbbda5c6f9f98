/** Shared builders for the fleet tests: clusters, strategies and a tiny hub that applies a pass. */
import type { Cluster, ClusterGroup } from "../src/cluster.js";
import type { Labels } from "../src/label-selector.js";
import { parseSelectorStruct } from "../src/label-selector.js";
import type {
  DeploymentObservation,
  PassResult,
} from "../src/fleet/rollout-pass.js";
import {
  parseRolloutStrategy,
  type FleetRolloutStrategy,
} from "../src/fleet/strategy.js";
import { compact } from "../src/compact.js";

/** A cluster with only a name and labels. */
export function cluster(
  name: string,
  labels: Labels = {},
  groups: readonly string[] = [],
): Cluster {
  return { name, labels, groups, nodePools: [] };
}

/** `n` clusters named c-000, c-001, … (zero-padded so byte order is numeric order). */
export function fleetOf(
  n: number,
  labels: (i: number) => Labels = () => ({}),
): Cluster[] {
  return Array.from({ length: n }, (_, i) =>
    cluster(`c-${String(i).padStart(3, "0")}`, labels(i)),
  );
}

/** A cluster group with labels and an optional struct selector. */
export function group(
  name: string,
  labels: Labels,
  selector?: unknown,
): ClusterGroup {
  if (selector === undefined) return { name, labels };
  const parsed = parseSelectorStruct(selector, "selector");
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return { name, labels, selector: parsed.value };
}

/** Parses a rolloutStrategy or fails the test. */
export function strategy(raw: unknown = {}): FleetRolloutStrategy {
  const parsed = parseRolloutStrategy(raw, "rolloutStrategy");
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

/** Ready at `revision`. */
export const readyAt = (revision: string): DeploymentObservation => ({
  releasedRevision: revision,
  appliedRevision: revision,
  ready: true,
  errored: false,
  modified: false,
  unreachable: false,
});

/** Applied at `revision`, resources not Ready. */
export const notReadyAt = (revision: string): DeploymentObservation => ({
  ...readyAt(revision),
  ready: false,
});

/** Released `revision`, the agent has not applied it yet (applied `previous`, if any). */
export const waitingFor = (
  revision: string,
  previous?: string,
): DeploymentObservation => ({
  releasedRevision: revision,
  ...compact({ appliedRevision: previous }),
  ready: previous !== undefined,
  errored: false,
  modified: false,
  unreachable: false,
});

/** Every given cluster Ready at `revision`. */
export function allReady(
  names: readonly string[],
  revision: string,
): Map<string, DeploymentObservation> {
  return new Map(names.map((n) => [n, readyAt(revision)]));
}

/** Applies a pass's releases: each released cluster is applied but not yet Ready. */
export function applyReleases(
  deployments: ReadonlyMap<string, DeploymentObservation>,
  result: PassResult,
): Map<string, DeploymentObservation> {
  const next = new Map(deployments);
  for (const r of result.release) next.set(r.cluster, notReadyAt(r.revision));
  return next;
}

/** Marks the given clusters Ready at the revision they were released. */
export function markReady(
  deployments: ReadonlyMap<string, DeploymentObservation>,
  names: Iterable<string>,
): Map<string, DeploymentObservation> {
  const next = new Map(deployments);
  for (const n of names) {
    const o = next.get(n);
    if (o?.releasedRevision !== undefined)
      next.set(n, readyAt(o.releasedRevision));
  }
  return next;
}

/** Sizes of the partitions of a pass or plan. */
export const sizes = (
  partitions: readonly { clusters: readonly string[] }[],
): number[] => partitions.map((p) => p.clusters.length);
