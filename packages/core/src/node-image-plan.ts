/**
 * The node-pool side of an upgrade (docs/engine.md#node-pools-inside-a-member): which pools of a
 * member move to a new image, which are left as they are and why, and the words member messages
 * use for both. AKS reports pools it leaves out as "Skipped upgrade of following agent pool(s)";
 * flotilla keeps that wording so the plan survives to the member's final message.
 */
import type { Cluster, NodePool } from "./cluster.js";
import {
  compareNodeImageVersions,
  newestNodeImageAt,
  type AvailableVersions,
} from "./versions/version.js";
import { compact } from "./compact.js";

/** One node pool moving to a new image. */
export interface NodeImageChange {
  readonly pool: string;
  readonly from: string;
  readonly to: string;
}

/**
 * Why a pool keeps its image: it is at the target, newer than it (no downgrades), no image of its
 * family is offered where the member runs (Latest), or it runs Windows under a Linux-only
 * security-patch upgrade.
 */
export type NodeImageSkipReason =
  "AlreadyAtTarget" | "AheadOfTarget" | "NotOffered" | "LinuxOnly";

/** One node pool an upgrade leaves on its image, with the reason. */
export interface NodeImageSkip {
  readonly pool: string;
  /** The pool's image now. */
  readonly version: string;
  readonly reason: NodeImageSkipReason;
  /** AheadOfTarget: the target it is newer than. */
  readonly target?: string;
  /** NotOffered: the family nothing is offered for, and the member's region (if it reports one). */
  readonly imageFamily?: string;
  readonly region?: string;
}

/** The per-pool plan of one member, and the pools whose family has no Consistent selection. */
export interface NodeImagePlan {
  readonly changes: readonly NodeImageChange[];
  readonly skipped: readonly NodeImageSkip[];
  readonly missing: readonly NodePool[];
}

/** `record[key]` only when it is the record's own entry (family names are data, e.g. "constructor"). */
export function ownEntry(
  record: Readonly<Record<string, string>> | undefined,
  key: string,
): string | undefined {
  return record !== undefined && Object.hasOwn(record, key)
    ? record[key]
    : undefined;
}

/**
 * Plans the images of `pools` of `cluster`: Consistent takes the run's selection per family, Latest
 * the newest image offered in the member's region. Pools are never downgraded.
 */
export function planNodeImages(
  cluster: Cluster,
  pools: readonly NodePool[],
  selection: "Latest" | "Consistent",
  available: AvailableVersions,
  consistent: Readonly<Record<string, string>> | undefined,
): NodeImagePlan {
  const changes: NodeImageChange[] = [];
  const skipped: NodeImageSkip[] = [];
  const missing: NodePool[] = [];
  for (const pool of pools) {
    const { name, imageVersion: version } = pool;
    const target =
      selection === "Consistent"
        ? ownEntry(consistent, pool.imageFamily)
        : newestNodeImageAt(available, pool.imageFamily, [
            { region: cluster.region, cluster: cluster.name },
          ]);
    if (target === undefined && selection === "Consistent") missing.push(pool);
    else if (target === undefined)
      skipped.push({
        pool: name,
        version,
        reason: "NotOffered",
        imageFamily: pool.imageFamily,
        ...compact({ region: cluster.region }),
      });
    else {
      const order = compareNodeImageVersions(target, version);
      if (order > 0) changes.push({ pool: name, from: version, to: target });
      else if (order === 0)
        skipped.push({ pool: name, version, reason: "AlreadyAtTarget" });
      else
        skipped.push({ pool: name, version, reason: "AheadOfTarget", target });
    }
  }
  return { changes, skipped, missing };
}

/** `"a" 2026.10 → 2026.11, "b" …` */
export function describeImageChanges(
  changes: readonly NodeImageChange[],
): string {
  return changes.map((c) => `"${c.pool}" ${c.from} → ${c.to}`).join(", ");
}

function why(skip: NodeImageSkip): string {
  switch (skip.reason) {
    case "AlreadyAtTarget":
      return `already at ${skip.version}`;
    case "AheadOfTarget":
      return `at ${skip.version}, newer than the target ${skip.target ?? "?"}`;
    case "NotOffered":
      return `no ${skip.imageFamily ?? "?"} image is offered${skip.region === undefined ? "" : ` in region "${skip.region}"`}`;
    case "LinuxOnly":
      return "Windows: security patches are for Linux pools only";
    default: {
      const never: never = skip.reason;
      return never;
    }
  }
}

/**
 * `skipped upgrade of node pool(s) "b" (already at 2026.11)`, AKS's wording; `keepsKubelet` (Full
 * upgrades, whose pools still move to the new Kubernetes version) says only the image is kept.
 */
export function describeSkippedPools(
  skipped: readonly NodeImageSkip[],
  keepsKubelet = false,
): string {
  const pools = skipped.map((s) => `"${s.pool}" (${why(s)})`).join(", ");
  return keepsKubelet
    ? `kept the node image of node pool(s) ${pools}`
    : `skipped upgrade of node pool(s) ${pools}`;
}

/**
 * A member's message once its upgrade succeeded: what its agent reported (or, without a report,
 * what the plan upgraded), followed by the pools the plan skipped. When no pool was skipped the
 * report (or "Succeeded") says it all: the changes are in the member's target.
 */
export function upgradeSucceededMessage(
  target: {
    readonly kubernetesVersion?: string;
    readonly nodeImages?: readonly NodeImageChange[];
  },
  skipped: readonly NodeImageSkip[],
  reported: string | undefined,
): string {
  if (skipped.length === 0) return reported ?? "Succeeded";
  const changes = target.nodeImages ?? [];
  const kubernetes = target.kubernetesVersion;
  const upgraded =
    kubernetes === undefined
      ? changes.length === 0
        ? "Succeeded"
        : `Upgraded node pool(s) ${describeImageChanges(changes)}`
      : [
          `Upgraded to Kubernetes ${kubernetes}`,
          ...(changes.length === 0
            ? []
            : [
                `upgraded the node image of node pool(s) ${describeImageChanges(changes)}`,
              ]),
        ].join("; ");
  return `${reported ?? upgraded}; ${describeSkippedPools(skipped, kubernetes !== undefined)}`;
}
