/**
 * Platform upgrades (docs/semantics.md#upgrades): the `upgrade` payload of a run and its schema,
 * the maintenance-window scope it honours, and the per-member decision (upgrade what, or skip why)
 * taken when a member's turn comes. The Consistent node-image selection made at run start lives
 * with the offers it reads, in `versions/version.ts`, and is re-exported here.
 */
import { z } from "zod";
import type { Cluster, NodePool } from "./cluster.js";
import { FlotillaError } from "./errors.js";
import {
  describeSkippedPools,
  ownEntry,
  planNodeImages,
  type NodeImageChange,
  type NodeImageSkip,
} from "./node-image-plan.js";
import { strictObject, unknownFieldMessage } from "./schema.js";
import {
  compareKubernetesVersions as compare,
  formatKubernetesVersion,
  isOfferedIn,
  isWindowsImageFamily,
  kubernetesVersionField,
  kubernetesVersionOf,
  minorDistance,
  parseKubernetesVersion,
  type AvailableVersions,
  type KubernetesVersion,
} from "./versions/version.js";

// Re-exported so run and scenario code can take everything about upgrades from this module.
export type {
  NodeImageChange,
  NodeImageSkip,
  NodeImageSkipReason,
} from "./node-image-plan.js";
export {
  availableVersionsField,
  isWindowsImageFamily,
  selectConsistentNodeImages,
  type AvailableVersions,
  type ConsistentNodeImages,
} from "./versions/version.js";

/** What an upgrade touches: control plane + node pools + images, the control plane, or images only. */
export type UpgradeType = "Full" | "ControlPlaneOnly" | "NodeImageOnly";

/**
 * How node-image targets are chosen: `Latest` (newest in the member's region when its own upgrade
 * starts) or `Consistent` (one version per family, picked at run start for all members).
 */
export type NodeImageSelection = "Latest" | "Consistent";

/** A run's upgrade goal. Kubernetes versions are full ("1.31.2") and normalized without "v". */
export type UpgradePayload =
  | {
      readonly type: "Full" | "ControlPlaneOnly";
      readonly kubernetesVersion: string;
      readonly nodeImageSelection: NodeImageSelection;
      /**
       * The target is a minor past standard support: a member whose cluster is not on the
       * `AKSLongTermSupport` plan fails ({@link longTermSupportFailure}). Set only when true.
       */
      readonly requiresLongTermSupport?: true;
    }
  | {
      readonly type: "NodeImageOnly";
      readonly nodeImageSelection: NodeImageSelection;
      /** SecurityPatch channel: Linux pools only; Windows pools are left alone. */
      readonly securityPatchOnly?: boolean;
    };

const SELECTIONS: readonly unknown[] = ["Latest", "Consistent"];

/** `nodeImageSelection`: "Latest" | "Consistent", or the AKS object form `{type: "Latest"}`. */
const nodeImageSelectionField = z
  .unknown()
  .transform((raw, ctx): NodeImageSelection => {
    const isObject =
      typeof raw === "object" && raw !== null && !Array.isArray(raw);
    const value: unknown = isObject
      ? (raw as Record<string, unknown>).type
      : raw;
    for (const key of isObject ? Object.keys(raw) : []) {
      if (key !== "type")
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: unknownFieldMessage(key, ["type"]),
        });
    }
    if (SELECTIONS.includes(value)) return value as NodeImageSelection;
    let message = 'must be "Latest" or "Consistent" (or {type: "Latest"})';
    if (value === "Custom")
      message =
        "Custom node-image versions are not supported: use Latest or Consistent";
    if (isObject && value === undefined) message = "is required";
    // An explicit `input` (even undefined) keeps zod from reporting the whole object as the value.
    ctx.addIssue({
      code: "custom",
      path: isObject ? ["type"] : [],
      message,
      input: value,
    });
    return z.NEVER;
  });

/** Schema of an upgrade payload; unknown fields are rejected with a suggestion. */
export const upgradeField: z.ZodType<UpgradePayload> = strictObject({
  type: z.enum(["Full", "ControlPlaneOnly", "NodeImageOnly"]),
  kubernetesVersion: kubernetesVersionField("full").optional(),
  nodeImageSelection: nodeImageSelectionField.optional(),
  securityPatchOnly: z.boolean().optional(),
  requiresLongTermSupport: z.boolean().optional(),
}).transform((value, ctx): UpgradePayload => {
  const {
    type,
    kubernetesVersion,
    securityPatchOnly,
    requiresLongTermSupport,
  } = value;
  const nodeImageSelection = value.nodeImageSelection ?? "Latest";
  const problem = (
    path: string,
    message: string,
    input: unknown,
  ): typeof z.NEVER => {
    ctx.addIssue({ code: "custom", path: [path], message, input });
    return z.NEVER;
  };
  if (type === "NodeImageOnly") {
    if (kubernetesVersion !== undefined) {
      const why =
        "is not allowed for NodeImageOnly (node-image upgrades keep the Kubernetes version)";
      return problem("kubernetesVersion", why, kubernetesVersion);
    }
    if (requiresLongTermSupport === true) {
      const why =
        "is only allowed for Full and ControlPlaneOnly (long-term support is about Kubernetes minors, not node images)";
      return problem("requiresLongTermSupport", why, requiresLongTermSupport);
    }
    return securityPatchOnly === true
      ? { type, nodeImageSelection, securityPatchOnly }
      : { type, nodeImageSelection };
  }
  if (securityPatchOnly !== undefined) {
    problem(
      "securityPatchOnly",
      "is only allowed for NodeImageOnly",
      securityPatchOnly,
    );
  }
  if (kubernetesVersion === undefined)
    return problem("kubernetesVersion", `is required for ${type}`, undefined);
  return {
    type,
    kubernetesVersion,
    nodeImageSelection,
    ...(requiresLongTermSupport === true
      ? { requiresLongTermSupport: true as const }
      : {}),
  };
});

/** The window scope an upgrade honours: `kubernetes` for Full/ControlPlaneOnly, `nodeImage` for NodeImageOnly. */
export function upgradeWindowScope(
  payload: UpgradePayload,
): "kubernetes" | "nodeImage" {
  switch (payload.type) {
    case "Full":
    case "ControlPlaneOnly":
      return "kubernetes";
    case "NodeImageOnly":
      return "nodeImage";
    default: {
      const unreachable: never = payload;
      return unreachable;
    }
  }
}

/** Why a member is skipped by an upgrade run. */
export type UpgradeSkipReason =
  | "AlreadyAtTarget"
  | "MinorVersionSkew"
  | "AheadOfTarget"
  | "NoConsistentImage"
  | "NoLinuxNodePools";

/** Why a member fails an upgrade run without being started. */
export type UpgradeFailReason = "NoLongTermSupport";

/**
 * What happens to one member when its turn comes: skip (with a reason), fail (with a reason; it
 * counts against the failure budget) or upgrade (with targets).
 */
export type MemberUpgradeDecision =
  | {
      readonly action: "skip";
      readonly reason: UpgradeSkipReason;
      readonly message: string;
    }
  | {
      readonly action: "fail";
      readonly reason: UpgradeFailReason;
      readonly message: string;
    }
  | {
      readonly action: "upgrade";
      /** The run's Kubernetes target (Full and ControlPlaneOnly). */
      readonly kubernetesVersion?: string;
      /** Pools whose image changes; pools already at their target are left out. */
      readonly nodeImages: readonly NodeImageChange[];
      /** Pools left on their image, with why; absent when there are none. */
      readonly skippedNodeImages?: readonly NodeImageSkip[];
      readonly message: string;
    };

type Skip = Extract<MemberUpgradeDecision, { action: "skip" }>;

const skip = (reason: UpgradeSkipReason, message: string): Skip => ({
  action: "skip",
  reason,
  message,
});

/** The per-pool plan of `pools`, or the NoConsistentImage skip when a pool's family has no selection. */
function imagePlan(
  cluster: Cluster,
  pools: readonly NodePool[],
  selection: NodeImageSelection,
  available: AvailableVersions,
  consistent: Readonly<Record<string, string>> | undefined,
): Omit<ReturnType<typeof planNodeImages>, "missing"> | Skip {
  const plan = planNodeImages(cluster, pools, selection, available, consistent);
  if (plan.missing.length === 0) return plan;
  const families = [...new Set(plan.missing.map((p) => p.imageFamily))];
  const names = plan.missing.map((p) => `"${p.name}"`).join(", ");
  return skip(
    "NoConsistentImage",
    `cluster "${cluster.name}": no version of image famil${families.length === 1 ? "y" : "ies"} ${families.map((f) => `"${f}"`).join(", ")} (node pool ${names}) was available to every member of the run when it was created; Consistent upgrades all members of a family to one common version`,
  );
}

function describe(changes: readonly NodeImageChange[]): string {
  return changes.map((c) => `pool "${c.pool}" ${c.from} → ${c.to}`).join(", ");
}

/** The decision's own `skippedNodeImages` field and message tail: nothing when no pool is skipped. */
function skippedPart(
  skipped: readonly NodeImageSkip[],
  keepsKubelet: boolean,
): { field: { skippedNodeImages?: readonly NodeImageSkip[] }; text: string } {
  return skipped.length === 0
    ? { field: {}, text: "" }
    : {
        field: { skippedNodeImages: skipped },
        text: `; ${describeSkippedPools(skipped, keepsKubelet)}`,
      };
}

function targetOf(payload: {
  readonly kubernetesVersion: string;
}): KubernetesVersion {
  const parsed = parseKubernetesVersion(payload.kubernetesVersion, "full");
  if (parsed.ok) return parsed.value;
  // Payloads come through upgradeField; a bad one here is a programming error, not a member outcome.
  throw FlotillaError.invalid(
    "upgrade",
    parsed.problems.map((p) => ({ ...p, path: "kubernetesVersion" })),
  );
}

/**
 * Why `cluster` fails a run whose target is a minor past standard support, or undefined when it
 * may take the target: only clusters on the `AKSLongTermSupport` plan may (docs/semantics.md#upgrades;
 * a cluster that reports no plan is on `KubernetesOfficial`).
 */
export function longTermSupportFailure(
  cluster: Pick<Cluster, "name" | "supportPlan">,
  payload: UpgradePayload,
): string | undefined {
  if (
    payload.type === "NodeImageOnly" ||
    payload.requiresLongTermSupport !== true ||
    cluster.supportPlan === "AKSLongTermSupport"
  )
    return undefined;
  return `cluster "${cluster.name}" cannot take ${payload.kubernetesVersion}: it is past standard support and the cluster does not have long-term support enabled`;
}

/**
 * Decides what `cluster` does under `payload` when its own upgrade starts; `available` is the offer
 * at that moment and `consistent` the run's {@link selectConsistentNodeImages} choice (required for
 * Consistent: without it every pool lacks a selection). Full/ControlPlaneOnly check, in order:
 * AheadOfTarget (flotilla decision: Kubernetes does not downgrade), MinorVersionSkew (more than one
 * minor below the target; only the control plane counts), NoConsistentImage, AlreadyAtTarget. A
 * member that reports no Kubernetes version is upgraded: its agent applies the same skew rule to
 * the live version before acting.
 * A member that would be upgraded fails instead when the target is past standard support and the
 * cluster has no long-term support ({@link longTermSupportFailure}, reason `NoLongTermSupport`).
 */
export function memberUpgradeDecision(
  cluster: Cluster,
  payload: UpgradePayload,
  available: AvailableVersions,
  consistent?: Readonly<Record<string, string>>,
): MemberUpgradeDecision {
  const name = `cluster "${cluster.name}"`;
  if (payload.type === "NodeImageOnly") {
    const linuxOnly = payload.securityPatchOnly === true;
    const windows = (p: NodePool): boolean =>
      linuxOnly && isWindowsImageFamily(p.imageFamily);
    const pools = cluster.nodePools.filter((p) => !windows(p));
    if (pools.length === 0 && cluster.nodePools.length > 0) {
      return skip(
        "NoLinuxNodePools",
        `${name} has only Windows node pools: security patches apply to Linux pools only`,
      );
    }
    const plan = imagePlan(
      cluster,
      pools,
      payload.nodeImageSelection,
      available,
      consistent,
    );
    if ("action" in plan) return plan;
    const skipped: NodeImageSkip[] = [
      ...plan.skipped,
      ...cluster.nodePools.filter(windows).map((p): NodeImageSkip => ({
        pool: p.name,
        version: p.imageVersion,
        reason: "LinuxOnly",
      })),
    ];
    if (plan.changes.length === 0) {
      const pools =
        skipped.length === 0 ? "" : `: ${describeSkippedPools(skipped)}`;
      return skip(
        "AlreadyAtTarget",
        `${name} has no node pool to upgrade${pools}`,
      );
    }
    const rest = skippedPart(skipped, false);
    return {
      action: "upgrade",
      nodeImages: plan.changes,
      ...rest.field,
      message: `upgrade ${name}: ${describe(plan.changes)}${rest.text}`,
    };
  }
  const target = targetOf(payload);
  const to = formatKubernetesVersion(target);
  const current = kubernetesVersionOf(cluster.kubernetesVersion);
  const from =
    current === undefined
      ? "an unreported version"
      : formatKubernetesVersion(current);
  if (current !== undefined && compare(current, target) > 0) {
    return skip(
      "AheadOfTarget",
      `${name} is on ${from}, newer than the target ${to}: Kubernetes does not downgrade`,
    );
  }
  if (current !== undefined && minorDistance(current, target) > 1) {
    return skip(
      "MinorVersionSkew",
      `${name} is on ${from}; ${to} is more than one minor version ahead: upgrade one minor at a time`,
    );
  }
  const full = payload.type === "Full";
  const plan = full
    ? imagePlan(
        cluster,
        cluster.nodePools,
        payload.nodeImageSelection,
        available,
        consistent,
      )
    : { changes: [], skipped: [] };
  if ("action" in plan) return plan;
  const { changes } = plan;
  const kubeletsAtTarget = cluster.nodePools.every((p) => {
    const kubelet = kubernetesVersionOf(p.kubernetesVersion);
    return kubelet === undefined || compare(kubelet, target) === 0;
  });
  if (
    current !== undefined &&
    compare(current, target) === 0 &&
    (!full || (kubeletsAtTarget && changes.length === 0))
  ) {
    return skip(
      "AlreadyAtTarget",
      `${name} is already on ${to}${full ? " with every node pool at its target image" : ""}`,
    );
  }
  const noLts = longTermSupportFailure(cluster, payload);
  if (noLts !== undefined)
    return { action: "fail", reason: "NoLongTermSupport", message: noLts };
  const images = changes.length === 0 ? "" : `; ${describe(changes)}`;
  const rest = skippedPart(plan.skipped, true);
  return {
    action: "upgrade",
    kubernetesVersion: to,
    nodeImages: changes,
    ...rest.field,
    message: `upgrade ${name} from ${from} to ${to}${images}${rest.text}`,
  };
}

/**
 * Why the target is not yet available to `cluster` (docs/semantics.md#order-and-concurrency: such a
 * member is Pending), or undefined when it is. Checks the Kubernetes target in the member's region
 * and, for Consistent, each selected image its pools need. Latest always has a target: whatever is
 * offered there.
 */
export function isTargetAvailable(
  cluster: Cluster,
  payload: UpgradePayload,
  available: AvailableVersions,
  consistent?: Readonly<Record<string, string>>,
): string | undefined {
  const where =
    cluster.region === undefined
      ? `cluster "${cluster.name}" (which reports no region)`
      : `region "${cluster.region}" of cluster "${cluster.name}"`;
  if (payload.type !== "NodeImageOnly") {
    const target = targetOf(payload);
    const offers = available.kubernetes.filter((k) => {
      const version = kubernetesVersionOf(k.version);
      return version !== undefined && compare(version, target) === 0;
    });
    const to = formatKubernetesVersion(target);
    if (offers.length === 0) return `Kubernetes ${to} is not yet available`;
    if (!offers.some((k) => isOfferedIn(k, cluster.region, cluster.name)))
      return `Kubernetes ${to} is not yet available in ${where}`;
  }
  if (
    payload.type === "ControlPlaneOnly" ||
    payload.nodeImageSelection !== "Consistent"
  )
    return undefined;
  for (const pool of cluster.nodePools) {
    const version = ownEntry(consistent, pool.imageFamily);
    if (version === undefined) continue; // memberUpgradeDecision reports it as NoConsistentImage
    const offered = available.nodeImages.some(
      (i) =>
        i.family === pool.imageFamily &&
        i.version === version &&
        isOfferedIn(i, cluster.region, cluster.name),
    );
    if (!offered)
      return `node image ${pool.imageFamily} ${version} is not yet available in ${where}`;
  }
  return undefined;
}
