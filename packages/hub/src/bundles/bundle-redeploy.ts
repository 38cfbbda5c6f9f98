/**
 * Redeploying a bundle (docs/semantics.md#redeploying-a-bundle), Fleet's forceSyncGeneration: the
 * stored counters grow, the next pass carries each target's sum into its intent, and the agents
 * apply what they hold again. Nothing here changes the revision.
 */
import type { Problem } from "@flotilla/core";
import { nameProblem } from "../names.js";
import type { BundleRecord } from "./bundle-record.js";

/** Problems of the clusters named for a redeploy: bad names, repeats, and what `refusal` says. */
export function redeployProblems(
  bundle: string,
  clusters: readonly string[],
  refusal: (cluster: string) => string | undefined,
): Problem[] {
  const problems: Problem[] = [];
  const bad = nameProblem(bundle, "name");
  if (bad !== undefined) problems.push(bad);
  const seen = new Set<string>();
  clusters.forEach((cluster, i) => {
    const path = `clusters[${String(i)}]`;
    const badName = nameProblem(cluster, path);
    if (badName !== undefined) {
      problems.push(badName);
      return;
    }
    if (seen.has(cluster)) {
      problems.push({ path, message: "is named twice", value: cluster });
      return;
    }
    seen.add(cluster);
    const message = refusal(cluster);
    if (message !== undefined) problems.push({ path, message, value: cluster });
  });
  return problems;
}

/**
 * `record` with its redeploy counters grown: the bundle-wide one when `clusters` is empty, else
 * each named cluster's. Counters of clusters that are no longer `targets` are dropped.
 */
export function redeployed(
  record: BundleRecord,
  clusters: readonly string[],
  targets: ReadonlySet<string>,
): BundleRecord {
  const perCluster: Record<string, number> = {};
  for (const [cluster, count] of Object.entries(record.forceSyncClusters ?? {}))
    if (targets.has(cluster)) perCluster[cluster] = count;
  for (const cluster of clusters)
    perCluster[cluster] = (perCluster[cluster] ?? 0) + 1;
  const rest: { -readonly [K in keyof BundleRecord]: BundleRecord[K] } = {
    ...record,
  };
  delete rest.forceSyncClusters;
  return {
    ...rest,
    ...(clusters.length === 0
      ? { forceSyncGeneration: (record.forceSyncGeneration ?? 0) + 1 }
      : {}),
    ...(Object.keys(perCluster).length === 0
      ? {}
      : { forceSyncClusters: perCluster }),
  };
}
