/**
 * Auto-upgrade profiles as operators write them (AKS Fleet's shape, docs/engine.md "Auto-upgrade
 * profiles"): a channel with its two TargetKubernetesVersion fields ({@link upgradeProfileField}'s
 * rules), the update strategy the generated runs use, the node-image selection and a `disabled`
 * flag. And what a profile resolves to right now: a target with a stable key, from which the name
 * of the run it generates is derived, so that generating twice finds the same run.
 */
import { z } from "zod";
import { compact } from "../compact.js";
import { parseWith, DNS_LABEL, strictObject } from "../schema.js";
import type { Result } from "../result.js";
import type { NodeImageSelection, UpgradePayload } from "../upgrade.js";
import type { UpdateStrategy } from "../update-strategy.js";
import {
  resolveChannel,
  upgradeProfileField,
  type ChannelResolution,
  type UpgradeProfile,
} from "./channels.js";
import type { Cluster } from "../cluster.js";
import {
  compareNodeImageVersions,
  isWindowsImageFamily,
  selectConsistentNodeImages,
  type AvailableVersions,
} from "./version.js";

/** Longest profile name: its runs are named `<profile>-<target>` and must stay DNS labels. */
export const MAX_PROFILE_NAME_LENGTH = 40;

/** A stored auto-upgrade profile's settings (its name is kept beside them). */
export interface AutoUpgradeProfileSpec extends UpgradeProfile {
  /** The stored update strategy its runs use; absent: every member at once (one stage, one group). */
  readonly strategy?: string;
  readonly nodeImageSelection: NodeImageSelection;
  readonly disabled: boolean;
}

const STRATEGY_ID = /\/updateStrategies\/([^/]+)$/i;

/** The strategy name in an AKS `updateStrategyId` (a resource ID ending in `/updateStrategies/NAME`), or the value itself. */
export function strategyNameOf(updateStrategyId: string): string {
  return STRATEGY_ID.exec(updateStrategyId)?.[1] ?? updateStrategyId;
}

const strategyName = z
  .string()
  .refine(
    (name) => name.length <= 63 && DNS_LABEL.test(name),
    "must name a stored update strategy (a DNS label)",
  );

const selectionField = z.union([
  z.enum(["Latest", "Consistent"]),
  z.strictObject({ type: z.enum(["Latest", "Consistent"]) }),
]);

/**
 * Schema of a profile in AKS's shape: `{channel, updateStrategyId | strategy, nodeImageSelection
 * ("Latest" | "Consistent" | {type}), disabled, targetKubernetesVersion, longTermSupport}`.
 * `updateStrategyId` may be a bare name or an AKS resource ID; only its last segment is kept.
 */
export const autoUpgradeProfileField: z.ZodType<AutoUpgradeProfileSpec> =
  strictObject({
    channel: z.unknown().optional(),
    targetKubernetesVersion: z.unknown().optional(),
    longTermSupport: z.unknown().optional(),
    updateStrategyId: z.string().optional(),
    strategy: strategyName.optional(),
    nodeImageSelection: selectionField.optional(),
    disabled: z.boolean().optional(),
  }).transform((value, ctx): AutoUpgradeProfileSpec => {
    const channel = upgradeProfileField.safeParse(
      compact({
        channel: value.channel,
        targetKubernetesVersion: value.targetKubernetesVersion,
        longTermSupport: value.longTermSupport,
      }),
      { reportInput: true },
    );
    if (!channel.success) {
      for (const issue of channel.error.issues) ctx.addIssue({ ...issue });
    }
    let strategy = value.strategy;
    if (value.updateStrategyId !== undefined) {
      const fromId = strategyNameOf(value.updateStrategyId);
      if (!strategyName.safeParse(fromId).success) {
        ctx.addIssue({
          code: "custom",
          path: ["updateStrategyId"],
          message:
            "must name a stored update strategy (a DNS label, or a resource ID ending in /updateStrategies/NAME)",
          input: value.updateStrategyId,
        });
      } else if (strategy !== undefined && strategy !== fromId) {
        ctx.addIssue({
          code: "custom",
          path: ["updateStrategyId"],
          message: `names strategy "${fromId}" but strategy is "${strategy}": give one of the two`,
          input: value.updateStrategyId,
        });
      }
      strategy = fromId;
    }
    if (!channel.success) return z.NEVER;
    const selection = value.nodeImageSelection;
    return {
      ...channel.data,
      ...compact({ strategy }),
      nodeImageSelection:
        typeof selection === "object"
          ? selection.type
          : (selection ?? "Latest"),
      disabled: value.disabled ?? false,
    };
  });

/** Parses a profile in AKS's shape; problems carry paths inside it (under `prefix`). */
export function parseAutoUpgradeProfile(
  raw: unknown,
  prefix = "",
): Result<AutoUpgradeProfileSpec> {
  return parseWith(autoUpgradeProfileField, raw, prefix);
}

/** What a profile should move the fleet to now: the upgrade, and a key naming the target. */
export interface ProfileTarget {
  readonly upgrade: UpgradePayload;
  /** Stable across calls with the same offers: the version, or a hash of the newest images. */
  readonly key: string;
  /** For people: "1.30.5", or "AKSUbuntu-2204gen2 202603.01.0, …". */
  readonly description: string;
  /** Kubernetes channels: the target minor is past standard support (the upgrade carries it too). */
  readonly requiresLongTermSupport: boolean;
}

/**
 * The strategy of a profile's run when the profile names none: one stage holding every member, all
 * at once (AKS's rule for auto-upgrade without a strategy), within the stage ceiling of 50 in flight
 * (docs/semantics.md#order-and-concurrency).
 */
export const ALL_MEMBERS_AT_ONCE: UpdateStrategy = {
  stages: [
    {
      name: "all-members",
      memberSelector: { requirements: [], source: "" },
      maxConcurrency: { kind: "percent", value: 100 },
      afterStageWaitInSeconds: 0,
      beforeGates: [],
      afterGates: [],
    },
  ],
};

/** 32-bit FNV-1a of `text`'s UTF-16 code units, as 8 hex digits: short, stable, not secret. */
export function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/** Why a node-image channel has no target now, or the newest image of each family for all. */
function fleetImages(
  clusters: readonly Cluster[],
  available: AvailableVersions,
  linuxOnly: boolean,
): { readonly images: [string, string][] } | { readonly reason: string } {
  const fleet = clusters.map((c) => ({
    ...c,
    nodePools: c.nodePools.filter(
      (p) => !linuxOnly || !isWindowsImageFamily(p.imageFamily),
    ),
  }));
  const { selected } = selectConsistentNodeImages(fleet, available);
  const images = Object.entries(selected).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const kind = linuxOnly ? "Linux node image" : "node image";
  if (images.length === 0)
    return { reason: `no ${kind} is offered to every cluster of its family` };
  const behind = fleet.some((c) =>
    c.nodePools.some((p) => {
      const version = selected[p.imageFamily];
      return (
        version !== undefined &&
        compareNodeImageVersions(p.imageVersion, version) < 0
      );
    }),
  );
  if (!behind) {
    return {
      reason: `every node pool already runs the newest ${kind} offered to every cluster of its family`,
    };
  }
  return { images };
}

/**
 * Resolves `profile` against the offers ({@link resolveChannel}) to a target with a key. Kubernetes
 * channels: the version (a member not offered it yet waits Pending in the run). NodeImage and
 * SecurityPatch: per image family used in `clusters`, the newest version offered to every cluster
 * of the fleet ({@link selectConsistentNodeImages}: an image some clusters' agents have not
 * reported yet is not a target, since those members would be skipped), hashed, so a new image in
 * any family is a new target; none while no pool is behind it. The node-image selection of the
 * profile is the run's. Skips carry the reason.
 */
export function resolveProfileTarget(
  profile: AutoUpgradeProfileSpec,
  available: AvailableVersions,
  clusters: readonly Cluster[],
):
  { type: "target"; target: ProfileTarget } | { type: "skip"; reason: string } {
  const resolution: ChannelResolution = resolveChannel(profile, available, {
    nodeImageSelection: profile.nodeImageSelection,
  });
  if (resolution.type === "skip") return resolution;
  const { upgrade, requiresLongTermSupport } = resolution;
  if (upgrade.type !== "NodeImageOnly") {
    const version = upgrade.kubernetesVersion;
    return {
      type: "target",
      target: {
        upgrade,
        key: version,
        description: version,
        requiresLongTermSupport,
      },
    };
  }
  const found = fleetImages(
    clusters,
    available,
    upgrade.securityPatchOnly === true,
  );
  if ("reason" in found) return { type: "skip", reason: found.reason };
  const { images } = found;
  const description = images.map(([f, v]) => `${f} ${v}`).join(", ");
  return {
    type: "target",
    target: {
      upgrade: { ...upgrade, nodeImageSelection: profile.nodeImageSelection },
      key: shortHash(images.map(([f, v]) => `${f}=${v}`).join("\n")),
      description,
      requiresLongTermSupport,
    },
  };
}

/**
 * The name of the run a profile generates for a target: `<profile>-<version with dashes>`
 * ("rapid-1-30-5") or `<profile>-img-<hash>` for node images. Always a DNS label for a profile name
 * of at most {@link MAX_PROFILE_NAME_LENGTH} characters.
 */
export function profileRunName(profile: string, target: ProfileTarget): string {
  return target.upgrade.type === "NodeImageOnly"
    ? `${profile}-img-${target.key}`
    : `${profile}-${target.key.replaceAll(".", "-")}`;
}

/** Why `name` cannot name a profile (DNS label of at most {@link MAX_PROFILE_NAME_LENGTH}), or undefined. */
export function profileNameProblem(name: string): string | undefined {
  if (name === "") return "is required";
  if (name.length > MAX_PROFILE_NAME_LENGTH || !DNS_LABEL.test(name)) {
    return `must be a DNS label of at most ${String(MAX_PROFILE_NAME_LENGTH)} characters (lower-case letters, digits and '-', starting and ending alphanumeric): the names of its runs add the target`;
  }
  return undefined;
}
