/**
 * The target each member of an upgrade run gets, decided before the start with the same code the
 * run uses when the member's turn comes ({@link memberUpgradeDecision}): where `Consistent`'s choice
 * is shown before the start, and what `Latest` would pick from today's offers.
 */
import type { PlannedMember, UpgradePlan } from "../preview-types.js";
import { isoTime } from "../staged/context.js";
import { memberAsCluster, type Run } from "../staged/run.js";
import {
  isTargetAvailable,
  memberUpgradeDecision,
  type AvailableVersions,
} from "../upgrade.js";
import { compact } from "../compact.js";

const NOTHING: AvailableVersions = { kubernetes: [], nodeImages: [] };

/**
 * Every member's target from the run's offers (decided at `nowMs`, when given), or undefined for a
 * bundle run. A member
 * whose target is not yet offered to it is planned with reason `TargetNotAvailable` (it will wait).
 */
export function planUpgradeTargets(
  run: Run,
  nowMs?: number,
): UpgradePlan | undefined {
  if (run.payload.kind !== "upgrade") return undefined;
  const { upgrade } = run.payload;
  const available = run.available ?? NOTHING;
  const consistent = run.consistentNodeImages;
  const members: PlannedMember[] = [];
  const families = new Set<string>();
  for (const stage of run.stages)
    for (const group of stage.groups)
      for (const member of group.members) {
        for (const pool of member.nodePools ?? [])
          families.add(pool.imageFamily);
        const where = {
          name: member.name,
          wave: stage.name,
          group: group.name,
        };
        // Skipped when the run was created (already at target, skew, ...): that decision stands.
        if (member.state === "Skipped") {
          members.push({
            ...where,
            action: "skip",
            ...compact({ reason: member.reason }),
            message: member.message,
          });
          continue;
        }
        const cluster = memberAsCluster(member);
        const decision = memberUpgradeDecision(
          cluster,
          upgrade,
          available,
          consistent,
        );
        if (decision.action !== "upgrade") {
          members.push({
            ...where,
            action: decision.action,
            reason: decision.reason,
            message: decision.message,
          });
          continue;
        }
        const missing =
          run.available === undefined
            ? undefined
            : isTargetAvailable(cluster, upgrade, available, consistent);
        members.push({
          ...where,
          action: "upgrade",
          ...compact({ kubernetesVersion: decision.kubernetesVersion }),
          nodeImages: decision.nodeImages,
          ...(missing === undefined ? {} : { reason: "TargetNotAvailable" }),
          message: missing ?? decision.message,
        });
      }
  return {
    ...(nowMs === undefined ? {} : { at: isoTime(nowMs) }),
    upgrade,
    ...(consistent === undefined
      ? {}
      : {
          consistentNodeImages: consistent,
          missingNodeImages: [...families]
            .filter((f) => !Object.hasOwn(consistent, f))
            .sort(),
        }),
    members,
  };
}
