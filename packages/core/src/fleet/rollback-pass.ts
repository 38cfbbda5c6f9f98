/**
 * One pass of a bundle rollback (docs/semantics.md#rolling-back-a-bundle): which clusters that
 * still hold the revision rolled back from get the revision rolled back to now. Pure and
 * recomputed from scratch each pass, like the partition rollout (rollout-pass.ts), but paced only
 * by the bundle-wide maxUnavailable, counting as unavailable only the clusters released the
 * target revision and not yet Ready at it: clusters still on the bad revision do not count, or a
 * failed rollout could never be rolled back.
 */
import { compareNames, type Cluster } from "../cluster.js";
import { isUnavailable, type DeploymentObservation } from "./rollout-pass.js";

/** Inputs of one rollback pass. */
export interface RollbackPassInput {
  /** The revision rolled back from: clusters holding it are moved. */
  readonly from: string;
  /** The revision rolled back to (now the bundle's current one). */
  readonly to: string;
  readonly targets: readonly Cluster[];
  /** Observations by cluster name; a target without one holds nothing. */
  readonly deployments: ReadonlyMap<string, DeploymentObservation>;
  /** The bundle-wide maxUnavailable, resolved (a count). */
  readonly maxUnavailable: number;
  /** Release every holder of `from` this pass. */
  readonly allAtOnce: boolean;
  /** A paused bundle releases nothing. */
  readonly paused?: boolean;
}

/** A holder of the bad revision not moved this pass, and why. */
export interface RollbackHeld {
  readonly cluster: string;
  readonly message: string;
}

/** The outcome of one rollback pass. */
export interface RollbackPassResult {
  /** Clusters to release `to` now, in the order decided. */
  readonly release: readonly string[];
  /** Holders of `from` left for a later pass, by name. */
  readonly held: readonly RollbackHeld[];
  /** Clusters released `to` and not Ready at it, after this pass's releases. */
  readonly unavailable: number;
  /** True when no target holds `from` any more (before this pass's releases). */
  readonly complete: boolean;
}

/**
 * Decides which holders of the bad revision get the good one now: all of them with `allAtOnce`,
 * else one at a time while fewer than max(maxUnavailable, 1) clusters are released the good
 * revision and not Ready at it (docs/semantics.md#limit-zero). Holders already failing at the bad
 * revision go first (they are down anyway), then by name. Paused clusters are left alone.
 */
export function rollbackPass(input: RollbackPassInput): RollbackPassResult {
  const observe = (name: string): DeploymentObservation | undefined =>
    input.deployments.get(name);
  const names = input.targets.map((c) => c.name).sort(compareNames);
  const pausedCluster = new Set(
    input.targets.filter((c) => c.paused === true).map((c) => c.name),
  );
  const holders = names.filter(
    (n) => observe(n)?.releasedRevision === input.from,
  );
  let unavailable = names.filter((n) => {
    const o = observe(n);
    return o?.releasedRevision === input.to && isUnavailable(o);
  }).length;
  const failing = (n: string): boolean => {
    const o = observe(n);
    return o !== undefined && isUnavailable(o);
  };
  const ordered = [
    ...holders.filter(failing),
    ...holders.filter((n) => !failing(n)),
  ];
  const gate = Math.max(input.maxUnavailable, 1);
  const release: string[] = [];
  const held: RollbackHeld[] = [];
  for (const n of ordered) {
    if (input.paused === true)
      held.push({ cluster: n, message: "bundle is paused" });
    else if (pausedCluster.has(n))
      held.push({ cluster: n, message: "cluster is paused" });
    else if (!input.allAtOnce && unavailable >= gate)
      held.push({
        cluster: n,
        message: `rollback has ${String(unavailable)} cluster(s) released revision ${input.to} and not Ready at it, limit ${String(input.maxUnavailable)}`,
      });
    else {
      release.push(n);
      unavailable++;
    }
  }
  held.sort((a, b) => compareNames(a.cluster, b.cluster));
  return { release, held, unavailable, complete: holders.length === 0 };
}
