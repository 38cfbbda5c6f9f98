/**
 * Clusters (members) and cluster groups as the engine sees them, and the parsers for the clusters
 * and cluster-groups files of `flotilla plan` / `simulate` (docs/semantics.md#offline-planning).
 */
import { z } from "zod";
import {
  matchesSelector,
  parseLabels,
  type LabelSelector,
  type Labels,
} from "./label-selector.js";
import { maintenanceField, type Maintenance } from "./maintenance/windows.js";
import { fail, ok, type Problem, type Result } from "./result.js";
import {
  DNS_LABEL,
  parseWith,
  selectorStructField,
  strictObject,
} from "./schema.js";
import { compact } from "./compact.js";

/** A node pool as the agent reports it. */
export interface NodePool {
  readonly name: string;
  /** Image family, e.g. `AKSUbuntu-2204gen2containerd` or `ubuntu-22.04`. */
  readonly imageFamily: string;
  readonly imageVersion: string;
  /** The pool's kubelet version when it differs from the control plane's. */
  readonly kubernetesVersion?: string;
}

/**
 * AKS's support plans (docs/semantics.md#upgrades): only `AKSLongTermSupport` clusters may take a
 * minor past standard support. A cluster that reports none is on `KubernetesOfficial`.
 */
export const SUPPORT_PLANS = [
  "KubernetesOfficial",
  "AKSLongTermSupport",
] as const;

/** A cluster's support plan. */
export type SupportPlan = (typeof SUPPORT_PLANS)[number];

/** A member cluster: identity, labels, membership hints, platform facts and owner-set windows. */
export interface Cluster {
  readonly name: string;
  readonly labels: Labels;
  /** AKS-style update group (a plain string). */
  readonly updateGroup?: string;
  /** Cluster groups the cluster is listed in explicitly. */
  readonly groups: readonly string[];
  readonly maintenance?: Maintenance;
  readonly kubernetesVersion?: string;
  readonly nodePools: readonly NodePool[];
  readonly region?: string;
  /** AKS's support plan: `AKSLongTermSupport` clusters may take a long-term-support minor. */
  readonly supportPlan?: SupportPlan;
  /**
   * Fleet's Cluster `spec.paused`: the cluster receives no new bundle revision and does not count
   * as unavailable in partitioned rollouts (docs/semantics.md#paused-clusters). Set only when true.
   */
  readonly paused?: true;
}

/** A named label selector over clusters (Fleet ClusterGroup); its own labels feed clusterGroupSelector. */
export interface ClusterGroup {
  readonly name: string;
  readonly labels: Labels;
  readonly selector?: LabelSelector;
}

const labelsField = z.unknown().transform((raw, ctx): Labels => {
  const parsed = parseLabels(raw, "");
  if (parsed.ok) return parsed.value;
  for (const p of parsed.problems) {
    ctx.addIssue({
      code: "custom",
      message: p.message,
      path: p.path === "" ? [] : [p.path],
      input: p.value,
    });
  }
  return z.NEVER;
});

const nameField = z
  .string()
  .min(1, "must not be empty")
  .max(63, "must be at most 63 characters")
  .regex(
    DNS_LABEL,
    "must be a DNS label: lower-case letters, digits and '-', starting and ending alphanumeric",
  );

const nodePoolSchema = strictObject({
  name: z.string().min(1),
  imageFamily: z.string().min(1),
  imageVersion: z.string().min(1),
  kubernetesVersion: z.string().optional(),
});

const clusterSchema = strictObject({
  name: nameField,
  labels: labelsField.optional(),
  updateGroup: z.string().min(1).optional(),
  groups: z.array(z.string().min(1)).optional(),
  maintenance: maintenanceField.optional(),
  kubernetesVersion: z
    .string()
    .regex(/^v?[0-9]+\.[0-9]+(\.[0-9]+)?$/, 'must look like "1.30" or "1.30.5"')
    .optional(),
  nodePools: z.array(nodePoolSchema).optional(),
  region: z.string().min(1).optional(),
  supportPlan: z.enum(SUPPORT_PLANS).optional(),
  paused: z.boolean().optional(),
});

const clusterGroupSchema = strictObject({
  name: nameField,
  labels: labelsField.optional(),
  selector: selectorStructField.optional(),
});

function listOf(raw: unknown, key: string): unknown {
  // Accept a bare list or an object wrapping it ({clusters: [...]}, {clusterGroups: [...]}).
  if (
    raw !== null &&
    typeof raw === "object" &&
    !Array.isArray(raw) &&
    key in raw
  ) {
    return (raw as Record<string, unknown>)[key];
  }
  return raw;
}

/**
 * Names used twice in a raw list. Read from the raw items so duplicates are reported together with
 * any schema problems, in one round.
 */
function duplicateNames(items: unknown): Problem[] {
  const seen = new Map<string, number>();
  const problems: Problem[] = [];
  const at = (i: number): string => `[${String(i)}].name`;
  (Array.isArray(items) ? items : []).forEach((item: unknown, index) => {
    const name =
      item !== null && typeof item === "object"
        ? (item as Record<string, unknown>)["name"]
        : undefined;
    if (typeof name !== "string") return;
    const first = seen.get(name);
    if (first === undefined) seen.set(name, index);
    else
      problems.push({
        path: at(index),
        message: `duplicate name; first defined at ${at(first)}`,
        value: name,
      });
  });
  return problems;
}

/** Parses a clusters file's content (a list, or `{clusters: [...]}`). */
export function parseClusters(raw: unknown): Result<Cluster[]> {
  const items = listOf(raw, "clusters");
  const parsed = parseWith(z.array(clusterSchema), items);
  const dup = duplicateNames(items);
  if (!parsed.ok) return fail([...parsed.problems, ...dup]);
  if (dup.length > 0) return fail(dup);
  return ok(
    parsed.value.map((c) => ({
      name: c.name,
      labels: c.labels ?? {},
      ...compact({ updateGroup: c.updateGroup }),
      groups: c.groups ?? [],
      ...compact({ maintenance: c.maintenance }),
      ...(c.kubernetesVersion === undefined
        ? {}
        : { kubernetesVersion: c.kubernetesVersion.replace(/^v/, "") }),
      nodePools: c.nodePools ?? [],
      ...compact({ region: c.region, supportPlan: c.supportPlan }),
      ...(c.paused === true ? { paused: true as const } : {}),
    })),
  );
}

/** Parses a cluster-groups file's content (a list, or `{clusterGroups: [...]}`). */
export function parseClusterGroups(raw: unknown): Result<ClusterGroup[]> {
  const items = listOf(raw, "clusterGroups");
  const parsed = parseWith(z.array(clusterGroupSchema), items);
  const dup = duplicateNames(items);
  if (!parsed.ok) return fail([...parsed.problems, ...dup]);
  if (dup.length > 0) return fail(dup);
  return ok(
    parsed.value.map((g) => ({
      name: g.name,
      labels: g.labels ?? {},
      ...compact({ selector: g.selector }),
    })),
  );
}

/** The cluster groups `cluster` belongs to: listed explicitly, or selected by the group's selector. */
export function groupsOfCluster(
  cluster: Cluster,
  groups: readonly ClusterGroup[],
): ClusterGroup[] {
  return groups.filter(
    (g) =>
      cluster.groups.includes(g.name) ||
      (g.selector !== undefined && matchesSelector(g.selector, cluster.labels)),
  );
}

/** Byte-order comparison of names (`c-10` before `c-2`), the order every rollout walks clusters in. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
