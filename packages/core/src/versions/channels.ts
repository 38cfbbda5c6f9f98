/**
 * Auto-upgrade channels (AKS Fleet auto-upgrade profiles): which upgrade a channel asks for, given
 * what the platform offers. Resolution is fleet-wide and ignores regions (a version offered in one
 * region is published; members elsewhere wait as Pending). Per-member rules — one minor at a time,
 * already at target — are {@link memberUpgradeDecision}'s.
 */
import { z } from "zod";
import { strictObject } from "../schema.js";
import type { NodeImageSelection, UpgradePayload } from "../upgrade.js";
import {
  compareKubernetesVersions,
  formatKubernetesVersion,
  kubernetesVersionField,
  kubernetesVersionOf,
  minorDistance,
  minorOf,
  type AvailableKubernetesVersion,
  type AvailableVersions,
  type KubernetesVersion,
} from "./version.js";
import { compact } from "../compact.js";

/** The channels of an auto-upgrade profile. */
export type UpgradeChannel =
  | "Rapid"
  | "Stable"
  | "TargetKubernetesVersion"
  | "NodeImage"
  | "SecurityPatch";

/** An auto-upgrade profile: a channel, plus the target minor and LTS opt-in for TargetKubernetesVersion. */
export interface UpgradeProfile {
  readonly channel: UpgradeChannel;
  /** "major.minor", e.g. "1.30"; only with TargetKubernetesVersion. */
  readonly targetKubernetesVersion?: string;
  /** Allows a target older than standard support (N−2); only with TargetKubernetesVersion. */
  readonly longTermSupport?: boolean;
}

const CHANNELS = [
  "Rapid",
  "Stable",
  "TargetKubernetesVersion",
  "NodeImage",
  "SecurityPatch",
] as const;

/** Schema of an auto-upgrade profile; the two TargetKubernetesVersion fields are checked against the channel. */
export const upgradeProfileField: z.ZodType<UpgradeProfile> = strictObject({
  channel: z.enum(CHANNELS),
  targetKubernetesVersion: kubernetesVersionField("minor").optional(),
  longTermSupport: z.boolean().optional(),
}).transform((value, ctx): UpgradeProfile => {
  const isTarget = value.channel === "TargetKubernetesVersion";
  if (isTarget && value.targetKubernetesVersion === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["targetKubernetesVersion"],
      message:
        'is required for channel TargetKubernetesVersion ("major.minor", e.g. "1.30")',
      input: undefined, // an explicit undefined keeps zod from reporting the whole object as the value
    });
  }
  for (const key of ["targetKubernetesVersion", "longTermSupport"] as const) {
    if (!isTarget && value[key] !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: `is only allowed with channel TargetKubernetesVersion (channel is ${value.channel})`,
        input: value[key],
      });
    }
  }
  return {
    channel: value.channel,
    ...compact({
      targetKubernetesVersion: value.targetKubernetesVersion,
      longTermSupport: value.longTermSupport,
    }),
  };
});

/** The outcome of resolving a channel: the upgrade to run, or why there is none. */
export type ChannelResolution =
  | {
      readonly type: "upgrade";
      readonly upgrade: UpgradePayload;
      /**
       * The target minor is past standard support and only LTS clusters may take it; the upgrade
       * carries it too, so the run fails the others (upgrade.ts, `longTermSupportFailure`).
       */
      readonly requiresLongTermSupport: boolean;
    }
  | { readonly type: "skip"; readonly reason: string };

/** Options of {@link resolveChannel}. */
export interface ResolveChannelOptions {
  /** Node-image selection of Rapid/Stable/TargetKubernetesVersion runs (default Latest). */
  readonly nodeImageSelection?: NodeImageSelection;
}

interface Offer {
  readonly version: KubernetesVersion;
  readonly lts: boolean;
}

/** Standard support: the newest GA minor N and the two before it. */
const STANDARD_SUPPORT_MINORS = 3;

function gaOffers(kubernetes: readonly AvailableKubernetesVersion[]): Offer[] {
  const offers: Offer[] = [];
  for (const k of kubernetes) {
    const version = kubernetesVersionOf(k.version);
    if (k.preview !== true && version?.patch !== undefined)
      offers.push({ version, lts: k.lts === true });
  }
  return offers;
}

function latestOf(offers: readonly Offer[]): KubernetesVersion | undefined {
  let best: KubernetesVersion | undefined;
  for (const { version } of offers)
    if (best === undefined || compareKubernetesVersions(version, best) > 0)
      best = version;
  return best;
}

function sameMinor(a: KubernetesVersion, b: KubernetesVersion): boolean {
  return a.major === b.major && a.minor === b.minor;
}

/**
 * Resolves a profile to an upgrade. Rapid: latest GA patch of the newest GA minor N. Stable: latest
 * GA patch of N−1. TargetKubernetesVersion: latest GA patch of the given minor (never the next one);
 * a minor older than N−2 needs `longTermSupport` and counts only patches marked `lts`. NodeImage and
 * SecurityPatch: a NodeImageOnly upgrade with Latest images (SecurityPatch: Linux pools only).
 */
export function resolveChannel(
  profile: UpgradeProfile,
  available: AvailableVersions,
  options: ResolveChannelOptions = {},
): ChannelResolution {
  const nodeImageSelection = options.nodeImageSelection ?? "Latest";
  if (profile.channel === "NodeImage") {
    return {
      type: "upgrade",
      upgrade: { type: "NodeImageOnly", nodeImageSelection: "Latest" },
      requiresLongTermSupport: false,
    };
  }
  if (profile.channel === "SecurityPatch") {
    const upgrade: UpgradePayload = {
      type: "NodeImageOnly",
      nodeImageSelection: "Latest",
      securityPatchOnly: true,
    };
    return { type: "upgrade", upgrade, requiresLongTermSupport: false };
  }
  const offers = gaOffers(available.kubernetes);
  const newest = latestOf(offers);
  if (newest === undefined)
    return {
      type: "skip",
      reason: "no generally available Kubernetes version is offered",
    };
  const full = (
    version: KubernetesVersion,
    requiresLongTermSupport: boolean,
  ): ChannelResolution => ({
    type: "upgrade",
    upgrade: {
      type: "Full",
      kubernetesVersion: formatKubernetesVersion(version),
      nodeImageSelection,
      ...(requiresLongTermSupport
        ? { requiresLongTermSupport: true as const }
        : {}),
    },
    requiresLongTermSupport,
  });
  if (profile.channel === "Rapid") return full(newest, false);
  if (profile.channel === "Stable") {
    const minor = { major: newest.major, minor: newest.minor - 1 };
    const stable = latestOf(offers.filter((o) => sameMinor(o.version, minor)));
    if (stable === undefined) {
      return {
        type: "skip",
        reason: `Stable follows ${minorOf(minor)} (one minor before ${minorOf(newest)}), and no GA patch of it is offered`,
      };
    }
    return full(stable, false);
  }
  const target = kubernetesVersionOf(profile.targetKubernetesVersion);
  if (target === undefined) {
    return {
      type: "skip",
      reason:
        'channel TargetKubernetesVersion needs targetKubernetesVersion ("major.minor")',
    };
  }
  const behind = minorDistance(target, newest);
  const ofMinor = offers.filter((o) => sameMinor(o.version, target));
  if (behind < STANDARD_SUPPORT_MINORS) {
    const latest = latestOf(ofMinor);
    if (latest === undefined)
      return {
        type: "skip",
        reason: `no GA patch of ${minorOf(target)} is offered yet`,
      };
    return full(latest, false);
  }
  const oldestSupported = minorOf({
    major: newest.major,
    minor: newest.minor - STANDARD_SUPPORT_MINORS + 1,
  });
  if (profile.longTermSupport !== true) {
    return {
      type: "skip",
      reason: `${minorOf(target)} is older than standard support (${oldestSupported}–${minorOf(newest)}): set longTermSupport: true to follow an LTS minor`,
    };
  }
  const lts = latestOf(ofMinor.filter((o) => o.lts));
  if (lts === undefined) {
    return {
      type: "skip",
      reason: `${minorOf(target)} is older than standard support and no long-term-support patch of it is offered`,
    };
  }
  return full(lts, true);
}
