/**
 * `flotilla plan --channel` (docs/plan-and-simulate.md): what an auto-upgrade profile resolves to
 * with a catalogue of offered versions ({@link resolveChannel}, the resolution auto-upgrade profiles
 * use), and what the run it generates would do to each member: upgrade to which targets, skip and
 * why ({@link memberUpgradeDecision}), or fail because a long-term-support target reaches a cluster
 * without long-term support.
 */
import { planStaged } from "./plan.js";
import {
  parseFleetInputs,
  parseStrategyDocument,
  tag,
} from "./preview/inputs.js";
import { planUpgradeTargets } from "./preview/upgrade-plan.js";
import type {
  ChannelPlanOutput,
  ChannelTarget,
  InputProblem,
  PlanWarning,
} from "./preview-types.js";
import type { Result } from "./result.js";
import { parseWith } from "./schema.js";
import { resolveRun } from "./staged/resolve.js";
import type { NodeImageSelection } from "./upgrade.js";
import type { UpdateStrategy } from "./update-strategy.js";
import {
  resolveChannel,
  upgradeProfileField,
  type ChannelResolution,
  type UpgradeChannel,
  type UpgradeProfile,
} from "./versions/channels.js";
import {
  availableVersionsField,
  type AvailableVersions,
} from "./versions/version.js";
import { compact } from "./compact.js";

/** The raw documents and options of `plan --channel`. */
export interface ChannelPlanInputs {
  readonly clusters: unknown;
  /** An update strategy; absent: members one by one. */
  readonly strategy?: unknown;
  readonly clusterGroups?: unknown;
  /** `{channel, targetKubernetesVersion?, longTermSupport?}`, as an AKS auto-upgrade profile. */
  readonly profile: unknown;
  /** Node-image selection of the runs the profile generates (default Latest). */
  readonly nodeImageSelection?: NodeImageSelection;
  /** What the platform offers: `{kubernetes?, nodeImages?}`, the scenario's `available` shape. */
  readonly catalogue: unknown;
}

const CHANNELS: readonly UpgradeChannel[] = [
  "Rapid",
  "Stable",
  "TargetKubernetesVersion",
  "NodeImage",
  "SecurityPatch",
];

function targetOf(
  channel: UpgradeChannel,
  resolution: ChannelResolution,
): ChannelTarget {
  if (resolution.type === "skip") return { channel, reason: resolution.reason };
  return {
    channel,
    upgrade: resolution.upgrade,
    ...(resolution.requiresLongTermSupport
      ? { requiresLongTermSupport: true }
      : {}),
  };
}

/** Every channel against the catalogue; TargetKubernetesVersion only with the profile's target. */
function everyChannel(
  profile: UpgradeProfile,
  catalogue: AvailableVersions,
  nodeImageSelection: NodeImageSelection,
): ChannelTarget[] {
  return CHANNELS.flatMap((channel) => {
    if (channel === "TargetKubernetesVersion") {
      if (profile.channel !== channel) return [];
      return [
        targetOf(
          channel,
          resolveChannel(profile, catalogue, { nodeImageSelection }),
        ),
      ];
    }
    return [
      targetOf(
        channel,
        resolveChannel({ channel }, catalogue, { nodeImageSelection }),
      ),
    ];
  });
}

/** `plan --channel`: every problem of every input at once, or the channel plan. */
export function planChannel(
  inputs: ChannelPlanInputs,
): Result<ChannelPlanOutput, InputProblem> {
  const problems: InputProblem[] = [];
  const fleet = parseFleetInputs(inputs, problems);
  const strategy =
    inputs.strategy === undefined
      ? undefined
      : parseStrategyDocument(inputs.strategy);
  if (strategy !== undefined && !strategy.ok)
    problems.push(...tag("strategy", strategy.problems));
  if (strategy?.ok === true && strategy.value.dialect === "fleet")
    problems.push({
      source: "strategy",
      path: "",
      message:
        "a Fleet rolloutStrategy rolls out bundle revisions; an auto-upgrade channel needs an update strategy with stages (or none: members one by one)",
    });
  const profile = parseWith(upgradeProfileField, inputs.profile);
  if (!profile.ok) problems.push(...tag("profile", profile.problems));
  const catalogue = parseWith(availableVersionsField, inputs.catalogue);
  if (!catalogue.ok) problems.push(...tag("catalogue", catalogue.problems));
  if (
    problems.length > 0 ||
    fleet === undefined ||
    !profile.ok ||
    !catalogue.ok
  )
    return { ok: false, problems };
  const { clusters } = fleet;
  const staged: UpdateStrategy | undefined =
    strategy?.ok === true && strategy.value.dialect === "staged"
      ? strategy.value.strategy
      : undefined;

  const nodeImageSelection = inputs.nodeImageSelection ?? "Latest";
  const resolution = resolveChannel(profile.value, catalogue.value, {
    nodeImageSelection,
  });
  const head = {
    apiVersion: "flotilla.dev/v1" as const,
    profile: { ...profile.value, nodeImageSelection },
  };
  const channels = everyChannel(
    profile.value,
    catalogue.value,
    nodeImageSelection,
  );
  const warnings: PlanWarning[] = [];
  let unassigned: readonly string[] = [];
  if (staged !== undefined) {
    const planned = planStaged(staged, clusters);
    if (!planned.ok)
      return { ok: false, problems: tag("strategy", planned.problems) };
    warnings.push(...planned.value.warnings);
    unassigned = planned.value.unassigned;
  }
  if (resolution.type === "skip") {
    return {
      ok: true,
      value: {
        ...head,
        reason: resolution.reason,
        channels,
        unassigned,
        warnings,
      },
    };
  }
  const run = resolveRun({
    name: "auto-upgrade",
    ...compact({ strategy: staged }),
    clusters,
    payload: { kind: "upgrade", upgrade: resolution.upgrade },
    createdAtMs: 0,
    available: catalogue.value,
  });
  if (!run.ok) return { ok: false, problems: tag("strategy", run.problems) };
  const plan = planUpgradeTargets(run.value);
  const failing = (plan?.members ?? [])
    .filter((m) => m.reason === "NoLongTermSupport")
    .map((m) => m.name);
  if (failing.length > 0 && resolution.upgrade.type !== "NodeImageOnly") {
    warnings.push({
      code: "LongTermSupportRequired",
      message: `${resolution.upgrade.kubernetesVersion} is past standard support: ${String(failing.length)} cluster(s) without supportPlan AKSLongTermSupport would fail the run: ${failing.join(", ")}`,
    });
  }
  return {
    ok: true,
    value: {
      ...head,
      upgrade: resolution.upgrade,
      ...(resolution.requiresLongTermSupport
        ? { requiresLongTermSupport: true }
        : {}),
      channels,
      ...compact({ plan }),
      unassigned: run.value.unassigned,
      warnings,
    },
  };
}
