/**
 * The agent's own enforcement of its owner's maintenance windows
 * (docs/semantics.md#maintenance-windows): before it starts an upgrade, or releases a new bundle
 * revision (scope `workloads`), it asks whether the scope is open now and otherwise answers Pending
 * with the next opening, whatever the hub decided.
 */
import {
  isOpenAt,
  nextOpening,
  type Maintenance,
  type UpgradeType,
  type WindowScope,
  compact,
} from "@flotilla/core";

/** Why work of a scope may not start now, and when it may. */
export interface WindowHold {
  readonly reason: "MaintenanceWindow";
  readonly message: string;
  /** The next opening; undefined when none is within core's MAINTENANCE_HORIZON_MS. */
  readonly pendingUntilMs?: number;
}

function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}

/** `undefined` when `scope` is open at `nowMs`, else the hold with the next opening. */
export function checkWindow(
  maintenance: Maintenance | undefined,
  scope: WindowScope,
  nowMs: number,
): WindowHold | undefined {
  if (isOpenAt(maintenance, scope, nowMs)) return undefined;
  const opening = nextOpening(maintenance, scope, nowMs);
  const freeze = maintenance?.freezes.find(
    (f) => f.scopes.includes(scope) && f.startMs <= nowMs && nowMs < f.endMs,
  );
  const closed =
    freeze === undefined
      ? `Maintenance window for ${scope} closed`
      : `Maintenance for ${scope} frozen${freeze.reason === undefined ? "" : ` ("${freeze.reason}")`}`;
  const until =
    opening === undefined
      ? "; no opening in sight"
      : ` until ${isoTime(opening)}`;
  return {
    reason: "MaintenanceWindow",
    message: `${closed}${until}`,
    ...compact({ pendingUntilMs: opening }),
  };
}

/** The scope an upgrade type honours: `kubernetes` for Full/ControlPlaneOnly, `nodeImage` for NodeImageOnly. */
export function upgradeScope(type: UpgradeType): "kubernetes" | "nodeImage" {
  switch (type) {
    case "Full":
    case "ControlPlaneOnly":
      return "kubernetes";
    case "NodeImageOnly":
      return "nodeImage";
    default: {
      const unreachable: never = type;
      return unreachable;
    }
  }
}
