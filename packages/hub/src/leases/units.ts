/**
 * The units of scheduling work that leases are taken on (docs/high-availability.md), and the fence
 * an owner's intent writes carry.
 */
import type { Fence } from "../intents/intent-fences.js";

/** The lease unit of the bundle rollouts (one owner runs every bundle's passes). */
export const BUNDLES_UNIT = "bundles";

/** The lease unit of the auto-upgrade trigger (one owner turns catalogue changes into runs). */
export const AUTO_UPGRADE_UNIT = "auto-upgrade";

/** The lease unit of the git repositories (one owner polls and syncs them: docs/gitops.md). */
export const GITREPOS_UNIT = "gitrepos";

const RUN_UNIT_PREFIX = "run/";

/** The lease unit of an update run. */
export function runUnit(name: string): string {
  return `${RUN_UNIT_PREFIX}${name}`;
}

/** The run a unit is the lease of, or undefined for another unit. */
export function runOfUnit(unit: string): string | undefined {
  return unit.startsWith(RUN_UNIT_PREFIX)
    ? unit.slice(RUN_UNIT_PREFIX.length)
    : undefined;
}

/** The fence of writes made for `unit` under a lease of `epoch`. */
export function fenceOf(unit: string, epoch: number): Fence {
  return { unit, epoch };
}
