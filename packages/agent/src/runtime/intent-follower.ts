/**
 * Making the cluster what its intent says (docs/architecture.md): for every
 * intent generation, each bundle entry is applied (or kept, when its revision and content did not
 * change), bundles no longer in the intent are removed, and the upgrade entry is performed within
 * the owner's windows. Every status goes out against the generation of the newest intent: a newer
 * intent takes over the work of the older one rather than waiting for it.
 *
 * Progress survives restarts (progress-store.ts): once every item of a generation is finished
 * (Ready or Failed) it is recorded, and the first intent a restarted agent sees reuses the items
 * it had finished (same bundle revision and content, same upgrade run): they are reported again,
 * not redone.
 */
import {
  canonicalJson,
  FlotillaError,
  type ClusterIntent,
} from "@flotilla/core";
import type { StatusSubject } from "@flotilla/protocol";
import type { Logger } from "pino";
import type { StatusReportInput } from "../hub/status-outbox.js";
import type { IntentEvent } from "../intents/intent-watcher.js";
import type { BundleStatus } from "../kube/gateway.js";
import type { AgentMetrics } from "../metrics/agent-metrics.js";
import type { ProgressRecord, ProgressStore } from "./progress-store.js";
import type { Clock } from "@flotilla/node";
import type { AgentBackend } from "./agent-backend.js";
import { applyBundleItem } from "./bundle-work.js";
import {
  bundleItemStatus,
  handledItem,
  isFinished,
  isSameFinishedItem,
  restoredStatus,
  type BundleItem,
  type Item,
  type ItemStatus,
  type UpgradeItem,
} from "./item-status.js";
import { runUpgradeItem } from "./upgrade-work.js";
import type { WorkContext } from "./work-context.js";

/** Where the follower's statuses go: the hub session. */
export interface Reporter {
  report(report: StatusReportInput): void;
  /** The intent's items are now exactly these. */
  retain(subjects: Iterable<StatusSubject>): void;
  factsChanged(): void;
}

/** Dependencies of {@link IntentFollower}. */
export interface IntentFollowerDeps {
  readonly backend: AgentBackend;
  /** Already loaded. */
  readonly progress: ProgressStore;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
  readonly metrics: AgentMetrics;
  readonly reporter: Reporter;
  readonly fetchContent: WorkContext["fetchContent"];
}

/** Options of {@link IntentFollower}. */
export interface IntentFollowerOptions {
  readonly clusterName: string;
  readonly eventLevel?: "info" | "debug";
}

/** Follows one cluster's intents; see the module comment. */
export class IntentFollower {
  readonly #deps: IntentFollowerDeps;
  readonly #options: IntentFollowerOptions;
  readonly #log: Logger;
  readonly #ctx: WorkContext;
  readonly #lifetime = new AbortController();
  readonly #bundles = new Map<string, BundleItem>();
  /** Bundles that may apply only once their removal is done. */
  readonly #removals = new Map<string, Promise<void>>();
  readonly #tasks = new Set<Promise<void>>();
  /** Bundles whose gateway statuses belong to their item (applying or restored). */
  readonly #adopted = new WeakSet<BundleItem>();
  #upgrade: UpgradeItem | undefined;
  #intent: ClusterIntent | undefined;
  #restoring = true;
  #recordedKey: string | undefined;
  #lastApplied = 0;
  #unwatch: (() => void) | undefined;

  constructor(deps: IntentFollowerDeps, options: IntentFollowerOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#log = deps.logger;
    this.#ctx = {
      backend: deps.backend,
      clock: deps.clock,
      random: deps.random,
      log: deps.logger,
      metrics: deps.metrics,
      setStatus: (item, status) => {
        this.#setStatus(item, status);
      },
      fetchContent: deps.fetchContent,
      gatewayOwns: (item) => {
        this.#adopted.add(item);
      },
      factsChanged: () => {
        deps.reporter.factsChanged();
      },
    };
  }

  /** Follows the gateway's statuses; reads the last finished generation. */
  start(): void {
    this.#lastApplied =
      this.#deps.progress.get(this.#options.clusterName)?.generation ?? 0;
    this.#unwatch ??= this.#deps.backend.kube.watch((status) => {
      this.#onGatewayStatus(status);
    });
  }

  /** Aborts every item's work and waits for it (and pending progress writes) to end. */
  async stop(): Promise<void> {
    this.#lifetime.abort();
    this.#unwatch?.();
    for (const item of this.#items()) item.work.abort();
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }

  /** The generation of the intent being followed; 0 before the first. */
  generation(): number {
    return this.#intent?.generation ?? 0;
  }

  /** The highest generation finished (every item Ready or Failed), from before a restart too. */
  lastAppliedGeneration(): number {
    return this.#lastApplied;
  }

  /** Takes an intent event; the same or an older generation again changes nothing. */
  handle(event: IntentEvent): void {
    if (this.#lifetime.signal.aborted) return;
    if (event.type === "IntentDeleted") {
      this.#deleted();
      return;
    }
    const { intent } = event;
    if (
      this.#intent !== undefined &&
      intent.generation <= this.#intent.generation
    )
      return;
    this.#deps.metrics.intentReceived();
    this.#log[this.#options.eventLevel ?? "info"](
      {
        generation: intent.generation,
        bundles: Object.keys(intent.bundles).length,
        ...(intent.upgrade === undefined
          ? {}
          : { runName: intent.upgrade.run }),
      },
      "Intent received",
    );
    this.#intent = intent;
    const record = this.#restoring
      ? this.#deps.progress.get(this.#options.clusterName)
      : undefined;
    this.#restoring = false;
    const toStart: Item[] = [];
    const adopt = (item: Item): void => {
      const handled = record?.items.find((h) => isSameFinishedItem(h, item));
      if (handled === undefined) toStart.push(item);
      else {
        item.status = restoredStatus(handled, this.#deps.clock.now());
        if (item.kind === "bundle") this.#adopted.add(item);
      }
    };

    for (const [name, item] of this.#bundles)
      if (!(name in intent.bundles)) {
        item.work.abort();
        this.#bundles.delete(name);
        this.#remove(name);
      }
    for (const [name, wanted] of Object.entries(intent.bundles)) {
      const held = this.#bundles.get(name);
      if (
        held?.revision === wanted.revision &&
        held.digest === wanted.digest &&
        held.key === wanted.key &&
        held.forceSync === (wanted.forceSync ?? 0)
      ) {
        if (held.correctDrift?.force !== wanted.correctDrift?.force) {
          // How drift is handled is no content: the gateway is told, nothing is applied again.
          held.correctDrift = wanted.correctDrift;
          this.#deps.backend.kube.setCorrectDrift(name, wanted.correctDrift);
        }
        continue;
      }
      held?.work.abort();
      const item: BundleItem = {
        kind: "bundle",
        name,
        revision: wanted.revision,
        digest: wanted.digest,
        key: wanted.key,
        forceSync: wanted.forceSync ?? 0,
        correctDrift: wanted.correctDrift,
        ...(held?.revision === wanted.revision &&
        held.digest === wanted.digest &&
        held.forceSync < (wanted.forceSync ?? 0)
          ? { redeploy: true as const }
          : {}),
        subject: { kind: "bundle", bundle: name, revision: wanted.revision },
        work: new AbortController(),
      };
      this.#bundles.set(name, item);
      adopt(item);
    }

    const identity =
      intent.upgrade === undefined ? undefined : canonicalJson(intent.upgrade);
    if (this.#upgrade !== undefined && this.#upgrade.identity !== identity) {
      this.#upgrade.work.abort();
      this.#upgrade = undefined;
    }
    if (
      intent.upgrade !== undefined &&
      identity !== undefined &&
      this.#upgrade === undefined
    ) {
      this.#upgrade = {
        kind: "upgrade",
        upgrade: intent.upgrade,
        identity,
        subject: { kind: "upgrade", upgradeId: intent.upgrade.run },
        work: new AbortController(),
      };
      adopt(this.#upgrade);
    }

    const items = this.#items();
    this.#deps.reporter.retain(items.map((i) => i.subject));
    // Kept and restored items speak for the new generation at once.
    for (const item of items) this.#report(item);
    for (const item of toStart) this.#start(item);
    this.#prune();
    void this.#maybeRecord();
  }

  #items(): Item[] {
    const items: Item[] = [...this.#bundles.values()];
    if (this.#upgrade !== undefined) items.push(this.#upgrade);
    return items;
  }

  #isCurrent(item: Item): boolean {
    return item.kind === "bundle"
      ? this.#bundles.get(item.name) === item
      : this.#upgrade === item;
  }

  #setStatus(item: Item, status: ItemStatus): void {
    if (!this.#isCurrent(item) || item.work.signal.aborted) return;
    item.status = status;
    const recorded = this.#maybeRecord();
    if (recorded === undefined) {
      this.#report(item);
      return;
    }
    // Progress is written before the last item's final report: an agent killed between the two
    // reports nothing finished that it would redo after a restart.
    void recorded.then(() => {
      if (this.#isCurrent(item) && item.status === status) this.#report(item);
    });
  }

  #report(item: Item): void {
    const intent = this.#intent;
    if (intent === undefined || item.status === undefined) return;
    this.#deps.reporter.report({
      generation: intent.generation,
      subject: item.subject,
      ...item.status,
    });
  }

  #onGatewayStatus(status: BundleStatus): void {
    const item = this.#bundles.get(status.bundle);
    if (item?.revision !== status.revision || !this.#adopted.has(item)) return;
    if (status.phase === "Modified" && item.status?.phase !== "Modified")
      this.#deps.metrics.driftDetected(item.name);
    this.#setStatus(item, bundleItemStatus(status));
  }

  #start(item: Item): void {
    const task =
      item.kind === "bundle"
        ? applyBundleItem(this.#ctx, item, this.#removals.get(item.name))
        : runUpgradeItem(this.#ctx, item);
    this.#track(task);
  }

  #track(task: Promise<void>): void {
    const tracked = task.catch((error: unknown) => {
      this.#log.error(
        { err: FlotillaError.from(error) },
        "An item's work failed unexpectedly",
      );
    });
    this.#tasks.add(tracked);
    void tracked.finally(() => this.#tasks.delete(tracked));
  }

  /** Removes a bundle from the cluster, after any removal of it still in flight. */
  #remove(bundle: string): void {
    const signal = this.#lifetime.signal;
    const before = this.#removals.get(bundle) ?? Promise.resolve();
    const removal = before
      .then(() => this.#deps.backend.kube.removeBundle(bundle, { signal }))
      .then(
        () => {
          this.#log.debug({ bundle }, "Bundle removed");
        },
        (error: unknown) => {
          if (!signal.aborted)
            this.#log.warn(
              { err: FlotillaError.from(error), bundle },
              "Cannot remove a bundle that left the intent",
            );
        },
      )
      .finally(() => {
        if (this.#removals.get(bundle) === removal)
          this.#removals.delete(bundle);
      });
    this.#removals.set(bundle, removal);
    this.#track(removal);
  }

  /** Removes bundles the cluster holds that the intent does not name (e.g. after a restart). */
  #prune(): void {
    const signal = this.#lifetime.signal;
    this.#track(
      this.#deps.backend.kube.listBundles({ signal }).then(
        (held) => {
          for (const { bundle } of held)
            if (!this.#bundles.has(bundle) && !this.#removals.has(bundle))
              this.#remove(bundle);
        },
        (error: unknown) => {
          if (!signal.aborted)
            this.#log.warn(
              { err: FlotillaError.from(error) },
              "Cannot list the cluster's bundles",
            );
        },
      ),
    );
  }

  #deleted(): void {
    if (this.#intent === undefined && this.#items().length === 0) return;
    this.#log.info("The hub removed this cluster's intent; its work stops");
    for (const item of this.#items()) item.work.abort();
    this.#bundles.clear();
    this.#upgrade = undefined;
    this.#intent = undefined;
    this.#deps.reporter.retain([]);
  }

  /**
   * Records the generation once every item is finished (and again if how they ended changes);
   * resolves when the record is written (or could not be), undefined when nothing is recorded.
   */
  #maybeRecord(): Promise<void> | undefined {
    const intent = this.#intent;
    if (intent === undefined) return undefined;
    const items = this.#items();
    const handled = items.flatMap((item) =>
      item.status !== undefined && isFinished(item.status)
        ? [handledItem(item, item.status)]
        : [],
    );
    if (handled.length < items.length) return undefined;
    const key = canonicalJson({ generation: intent.generation, handled });
    if (key === this.#recordedKey) return undefined;
    this.#recordedKey = key;
    this.#lastApplied = intent.generation;
    const outcome = handled.some((h) => h.phase === "Failed")
      ? "Failed"
      : "Succeeded";
    const record: ProgressRecord = {
      cluster: this.#options.clusterName,
      generation: intent.generation,
      outcome,
      items: handled,
      handledAtMs: this.#deps.clock.now(),
    };
    this.#log[this.#options.eventLevel ?? "info"](
      { generation: intent.generation, outcome },
      "Intent generation finished",
    );
    const written = this.#deps.progress.put(record).catch((error: unknown) => {
      this.#log.warn(
        { err: FlotillaError.from(error), generation: intent.generation },
        "Cannot record progress; a restart may redo this generation",
      );
    });
    this.#track(written);
    return written;
  }
}
