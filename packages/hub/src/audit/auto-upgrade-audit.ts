/**
 * The audit records of runs a hub replica creates and starts on its own for an auto-upgrade
 * profile (docs/engine.md#auto-upgrade-profiles): the actor is `hub/<replica id>`, the target the
 * run, the reason names the profile and the message its channel and target.
 */
import type { RunOrigin } from "@flotilla/core";
import type { AuditRecord } from "./audit-log.js";
import { hubRunRecord } from "./takeover-audit.js";

/** The methods of these records (not RPCs: the hub acts on its own). */
export const AUTO_UPGRADE_METHODS = {
  create: "/flotilla.hub/AutoUpgradeCreateUpdateRun",
  start: "/flotilla.hub/AutoUpgradeStartUpdateRun",
} as const;

/** "Created by auto-upgrade profile X (channel C, target T)": how runs and records name their origin. */
export function originText(origin: RunOrigin): string {
  return `auto-upgrade profile ${origin.profile} (channel ${origin.channel}, target ${origin.target})`;
}

export function autoUpgradeRecord(record: {
  readonly atMs: number;
  readonly replica: string;
  readonly action: keyof typeof AUTO_UPGRADE_METHODS;
  readonly run: string;
  readonly origin: RunOrigin;
}): AuditRecord {
  const verb = record.action === "create" ? "Created" : "Started";
  return hubRunRecord({
    atMs: record.atMs,
    replica: record.replica,
    method: AUTO_UPGRADE_METHODS[record.action],
    run: record.run,
    reason: `auto-upgrade profile ${record.origin.profile}`,
    message: `${verb} by ${originText(record.origin)}`,
  });
}
