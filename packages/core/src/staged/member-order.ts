/**
 * The order of members inside a group (docs/semantics.md#order-and-concurrency). By name (byte
 * order), or, when the stage sets KubeFleet's `sortingLabelKey`, by the integer value of that label
 * first: ascending, compared exactly however many digits it has, ties by name; members without an
 * integer value go after those with one, by name. The order is frozen when the run is created; the
 * maintenance-window category still comes first when members are picked, since picking walks
 * members in this order within each category.
 */
import { compareNames, type Cluster } from "../cluster.js";

const DIGITS = /^[0-9]+$/;

/** The label's value as canonical digits (no leading zeros), or undefined when it is not an integer. */
export function sortingValue(
  cluster: Cluster,
  key: string,
): string | undefined {
  const raw = cluster.labels[key];
  if (raw === undefined || !DIGITS.test(raw)) return undefined;
  return raw.replace(/^0+(?=\d)/, "");
}

/** Compares canonical digit strings as the integers they spell. */
function compareIntegers(a: string, b: string): number {
  return a.length - b.length || compareNames(a, b);
}

/** Orders clusters (already sorted by name) for a group of a stage with `key`, or keeps them. */
export function orderMembers(
  clusters: readonly Cluster[],
  key: string | undefined,
): Cluster[] {
  if (key === undefined) return [...clusters];
  const keyed = clusters.map((cluster) => ({
    cluster,
    value: sortingValue(cluster, key),
  }));
  // Stable: equal values keep the name order the clusters came in.
  keyed.sort((a, b) => {
    if (a.value === undefined || b.value === undefined)
      return a.value === b.value ? 0 : a.value === undefined ? 1 : -1;
    return compareIntegers(a.value, b.value);
  });
  return keyed.map((k) => k.cluster);
}
