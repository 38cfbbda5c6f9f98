/**
 * The per-member targets of an upgrade before its start, for people: members with the same target
 * on one line, then the members that wait for their target, skip or fail, by reason. `simulate`
 * and `plan --channel` print it.
 */
import type { RenderOptions } from "./options.js";
import type { UpgradePlan } from "./preview-types.js";
import { DEFAULT_MAX_LINES, labelledList } from "./wrap.js";

type PlannedMember = UpgradePlan["members"][number];

/** `Full upgrade to 1.31.2, node images Latest`: what an upgrade payload does, in words. */
export function upgradeWords(upgrade: UpgradePlan["upgrade"]): string {
  const images = `node images ${upgrade.nodeImageSelection}`;
  switch (upgrade.type) {
    case "Full":
      return `Full upgrade to ${upgrade.kubernetesVersion}, ${images}`;
    case "ControlPlaneOnly":
      return `control-plane upgrade to ${upgrade.kubernetesVersion}`;
    case "NodeImageOnly":
      return `${upgrade.securityPatchOnly === true ? "security-patch" : "node-image"} upgrade, ${images}`;
    default: {
      const never: never = upgrade;
      return never;
    }
  }
}

/** The label a member is listed under: its target, or what keeps it from one. */
function labelOf(m: PlannedMember): string {
  if (m.action === "skip" || m.action === "fail")
    return `${m.action}${m.reason === undefined ? "" : ` (${m.reason})`}`;
  if (m.reason !== undefined)
    return `waits until its target is offered (${m.reason})`;
  return targetWords(m);
}

/** `→ 1.31.2, system 202603.01.0`: the Kubernetes version, then each pool's new image. */
export function targetWords(target: {
  readonly kubernetesVersion?: string;
  readonly nodeImages?: readonly {
    readonly pool: string;
    readonly to: string;
  }[];
}): string {
  const parts = [
    ...(target.kubernetesVersion === undefined
      ? []
      : [target.kubernetesVersion]),
    ...(target.nodeImages ?? []).map((c) => `${c.pool} ${c.to}`),
  ];
  return parts.length === 0 ? "nothing to change" : `→ ${parts.join(", ")}`;
}

// Upgrades first (in order of appearance), then waits, skips and failures.
function rank(label: string): number {
  if (label.startsWith("waits")) return 1;
  if (label.startsWith("skip")) return 2;
  if (label.startsWith("fail")) return 3;
  return 0;
}

/** `Targets (…):` and one line (wrapped) per target, listing its members. */
export function upgradePlanLines(
  plan: UpgradePlan,
  options: RenderOptions,
): string[] {
  const lines = [`Targets (${upgradeWords(plan.upgrade)}):`];
  const list = (label: string, items: readonly string[]): string[] =>
    labelledList(label, items, {
      width: options.width,
      indent: 4,
      ...(options.all ? {} : { maxLines: DEFAULT_MAX_LINES }),
    });
  const consistent = Object.entries(plan.consistentNodeImages ?? {});
  if (consistent.length > 0)
    lines.push(
      ...list(
        "  Consistent node images: ",
        consistent.map(([f, v]) => `${f} ${v}`),
      ),
    );
  if ((plan.missingNodeImages ?? []).length > 0)
    lines.push(
      ...list(
        "  No node image offered to every member: ",
        plan.missingNodeImages ?? [],
      ),
    );
  const byLabel = new Map<string, string[]>();
  for (const m of plan.members) {
    const label = labelOf(m);
    byLabel.set(label, [...(byLabel.get(label) ?? []), m.name]);
  }
  if (byLabel.size === 0) lines.push("  (no members)");
  const ordered = [...byLabel].sort(([a], [b]) => rank(a) - rank(b));
  for (const [label, names] of ordered)
    lines.push(...list(`  ${label} (${String(names.length)}): `, names));
  return lines;
}

/**
 * Members that were started with another target than planned (Latest picks from what is offered
 * when each member starts, so a release during the run changes it), by the target they took.
 */
export function changedTargetLines(
  plan: UpgradePlan,
  members: readonly {
    readonly name: string;
    readonly target?: Parameters<typeof targetWords>[0];
  }[],
  options: RenderOptions,
): string[] {
  const planned = new Map(plan.members.map((m) => [m.name, labelOf(m)]));
  const byTarget = new Map<string, string[]>();
  for (const m of members) {
    if (m.target === undefined) continue;
    const taken = targetWords(m.target);
    const before = planned.get(m.name);
    if (before === undefined || before === taken) continue;
    byTarget.set(taken, [...(byTarget.get(taken) ?? []), m.name]);
  }
  if (byTarget.size === 0) return [];
  const lines = [
    "Targets taken at each member's start, where they differ from the plan:",
  ];
  for (const [label, names] of byTarget)
    lines.push(
      ...labelledList(`  ${label} (${String(names.length)}): `, names, {
        width: options.width,
        indent: 4,
        ...(options.all ? {} : { maxLines: DEFAULT_MAX_LINES }),
      }),
    );
  return lines;
}
