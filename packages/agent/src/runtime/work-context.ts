/** What an item's work (bundle-work.ts, upgrade-work.ts) needs from the agent that runs it. */
import type { BundleContent } from "@flotilla/protocol";
import type { Logger } from "pino";
import type { AgentMetrics } from "../metrics/agent-metrics.js";
import type { Clock } from "@flotilla/node";
import type { AgentBackend } from "./agent-backend.js";
import type { BundleItem, Item, ItemStatus } from "./item-status.js";

/** The agent's side of an item's work. */
export interface WorkContext {
  readonly backend: AgentBackend;
  readonly clock: Clock;
  /** Uniform in [0, 1), for retry jitter. */
  readonly random: () => number;
  readonly log: Logger;
  readonly metrics: AgentMetrics;
  /** Records the item's new status and reports it, unless the item left the intent. */
  readonly setStatus: (item: Item, status: ItemStatus) => void;
  /** Fetches, opens and decodes a bundle revision's content. */
  readonly fetchContent: (
    ref: { readonly digest: string; readonly key: string | undefined },
    options: { readonly signal: AbortSignal },
  ) => Promise<BundleContent>;
  /**
   * From now on the gateway's statuses for this bundle revision are the item's (called just
   * before the apply; until then they may be left over from an earlier item).
   */
  readonly gatewayOwns: (item: BundleItem) => void;
  /** The platform changed (an upgrade succeeded): the hub gets the new facts. */
  readonly factsChanged: () => void;
}
