/**
 * The items of an intent as the agent tracks them, and their statuses in report form: what is
 * sent to the hub (with the intent's generation added) and what the progress store remembers.
 */
import type { UpgradeIntent } from "@flotilla/core";
import type {
  ResourceReason,
  StatusPhase,
  StatusSubject,
} from "@flotilla/protocol";
import type { BundleStatus, DriftCorrectionMode } from "../kube/gateway.js";
import type { HandledItem } from "./progress-store.js";
import { compact } from "@flotilla/core";

/** An item's status, everything of a report but its sequence, generation and subject. */
export interface ItemStatus {
  readonly phase: StatusPhase;
  readonly reasons: readonly ResourceReason[];
  readonly reasonsTruncated: number;
  readonly error?: string;
  readonly message?: string;
  readonly progressPercent?: number;
  readonly pendingUntilMs?: number;
  readonly observedAtMs: number;
}

/** What an item is about and where it stands. */
interface ItemBase {
  readonly subject: StatusSubject;
  /** Aborts the item's work: superseded, removed from the intent, or the agent stopped. */
  readonly work: AbortController;
  status?: ItemStatus;
}

/** One bundle of the intent at one revision. */
export interface BundleItem extends ItemBase {
  readonly kind: "bundle";
  readonly name: string;
  readonly revision: string;
  readonly digest: string;
  /** The key that opens the content (absent in intents of hubs that stored it in clear). */
  readonly key: string | undefined;
  /** The intent's redeploy counter (0 when absent): a higher one applies the same revision again. */
  readonly forceSync: number;
  /** Set when the item replaces one of the same content with a lower forceSync: a redeploy. */
  readonly redeploy?: true;
  /**
   * The intent's `correctDrift` (docs/agent.md#drift-correction); it may change while the item
   * stands: that is no new apply.
   */
  correctDrift: DriftCorrectionMode | undefined;
}

/** The intent's upgrade. */
export interface UpgradeItem extends ItemBase {
  readonly kind: "upgrade";
  readonly upgrade: UpgradeIntent;
  /** Canonical JSON of `upgrade`: a changed target is a different item. */
  readonly identity: string;
}

/** Either kind of item. */
export type Item = BundleItem | UpgradeItem;

/** Whether an item's work is over: Ready or Failed (NotReady, Modified and Pending are not). */
export function isFinished(status: ItemStatus | undefined): boolean {
  return status?.phase === "Ready" || status?.phase === "Failed";
}

/** A simple status: no per-resource reasons. */
export function plainStatus(
  phase: StatusPhase,
  observedAtMs: number,
  details: Pick<
    ItemStatus,
    "error" | "message" | "progressPercent" | "pendingUntilMs"
  > = {},
): ItemStatus {
  return { phase, reasons: [], reasonsTruncated: 0, ...details, observedAtMs };
}

/** A gateway's bundle status as an item status (resources become per-resource reasons). */
export function bundleItemStatus(status: BundleStatus): ItemStatus {
  return {
    phase: status.phase,
    reasons: status.resources.map((r) => ({
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
      state: r.state,
      message: r.message,
    })),
    reasonsTruncated: status.resourcesTruncated,
    ...compact({ error: status.error, message: status.message }),
    observedAtMs: status.observedAtMs,
  };
}

/** What the progress store keeps of a finished item. */
export function handledItem(item: Item, status: ItemStatus): HandledItem {
  return {
    subject: item.subject,
    ...(item.kind === "bundle"
      ? {
          digest: item.digest,
          ...(item.forceSync === 0 ? {} : { forceSync: item.forceSync }),
        }
      : {}),
    phase: status.phase,
    ...compact({ message: status.message, error: status.error }),
  };
}

/** The status a restarted agent reports for an item it finished before the restart. */
export function restoredStatus(
  handled: HandledItem,
  observedAtMs: number,
): ItemStatus {
  return plainStatus(handled.phase, observedAtMs, {
    ...compact({ error: handled.error, message: handled.message }),
  });
}

/** Whether `handled` (from the progress store) is this very item, finished. */
export function isSameFinishedItem(handled: HandledItem, item: Item): boolean {
  if (handled.phase !== "Ready" && handled.phase !== "Failed") return false;
  const s = handled.subject;
  return item.kind === "bundle"
    ? s.kind === "bundle" &&
        s.bundle === item.name &&
        s.revision === item.revision &&
        handled.digest === item.digest &&
        (handled.forceSync ?? 0) === item.forceSync
    : s.kind === "upgrade" && s.upgradeId === item.upgrade.run;
}
