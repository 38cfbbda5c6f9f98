/**
 * Collecting bundle content that nothing references: what an apply that failed halfway stored,
 * uploads (PutObject) no apply used, and the content of deleted bundles and of revisions no
 * cluster holds any more. Without it the bundle-content store only grows, until JetStream is full.
 *
 * A collection runs at start, every `intervalMs`, right after a failed apply (for what that apply
 * stored), after a delete, and when a delete finds the store full. It removes stored content
 * that is not referenced (content-references.ts) and was stored at least `graceMs` ago: the
 * grace keeps an upload whose apply is still to come. Content an apply stored is not waited for
 * when that apply failed or its bundle was deleted; an upload is kept for the grace whatever
 * references it. Removal writes nothing, so it works on a full store.
 *
 * Writes that store content and then reference it (an apply: content first, the record last) run
 * under {@link ContentCollector.writeOrCollect}; a collection waits for them to finish, and they
 * for it, so that no collection removes content between its write and the record referencing it.
 * This holds within one hub, which is the one that writes bundles (bundle-manager.ts).
 */
import type { IntentPublisher } from "../intents/intent-publisher.js";
import type { Logger } from "../logger.js";
import { createReadWriteLock } from "@flotilla/node";
import { compact } from "@flotilla/core";

/** When and what is collected. */
export interface ContentGcOptions {
  /** Time between two collections. */
  readonly intervalMs: number;
  /** Content younger than this is kept (an upload waiting for its apply). */
  readonly graceMs: number;
}

/** Ten minutes between collections; an hour of grace. */
export const DEFAULT_CONTENT_GC: ContentGcOptions = {
  intervalMs: 10 * 60_000,
  graceMs: 60 * 60_000,
};

/** What a collector reads and removes. */
export interface ContentCollectorDeps {
  readonly content: Pick<
    IntentPublisher,
    | "putBundleContent"
    | "listBundleContent"
    | "removeBundleContent"
    | "contentName"
  >;
  /** The names of the objects to keep, leaving out what bundle `except` references. */
  readonly references: (except: string | undefined) => Promise<Set<string>>;
  readonly now: () => number;
  readonly log: Logger;
  /** Starts a repeating timer and returns its cancel. */
  readonly every: (intervalMs: number, tick: () => void) => () => void;
}

/** What one collection may remove beyond content past its grace. */
export interface CollectOptions {
  /** A bundle being deleted: what only it references goes. */
  readonly except?: string;
  /** Object names to remove without waiting for the grace, when nothing references them. */
  readonly fresh?: ReadonlySet<string>;
}

/** What a collection removed. */
export interface Collected {
  readonly objects: number;
  readonly sizeBytes: number;
}

export interface ContentCollector {
  /** Collects now (in the background) and then every `intervalMs`, until `stop()`. */
  start(): void;
  /** Stops the interval and waits for the collections running in the background. */
  stop(): Promise<void>;
  /**
   * Runs `task`, which stores content and then references it, with no collection meanwhile. The
   * task reports each digest it stores; when it fails, what it stored is collected at once
   * (unless referenced): it would wait for the grace otherwise, and on a full store the caller's
   * next call (a delete) needs the space now.
   */
  writeOrCollect<T>(
    task: (onStored: (digest: string) => void) => Promise<T>,
  ): Promise<T>;
  /** Stores an upload; it is kept for the grace period whatever references it. */
  putUpload(
    content: Uint8Array,
    options?: { readonly signal?: AbortSignal },
  ): Promise<string>;
  /** Removes unreferenced content now. */
  collect(options?: CollectOptions): Promise<Collected>;
  /** The name content `digest` is stored under (the store's `contentName`). */
  contentName(digest: string): string;
  /** {@link collect}, logging a failure instead of throwing it (a background collection). */
  collectQuietly(options?: CollectOptions): Promise<void>;
}

/** A collector over `deps` with `options`. */
export function createContentCollector(
  deps: ContentCollectorDeps,
  options: ContentGcOptions,
): ContentCollector {
  const { log } = deps;
  const lock = createReadWriteLock();
  /** Uploads by object name: kept until this time whatever references them. */
  const uploads = new Map<string, number>();
  let cancel: (() => void) | undefined;
  let running: Promise<void> | undefined;
  /** Background collections (periodic, or after a delete), for stop() to wait for. */
  const background = new Set<Promise<void>>();

  const collect = (collectOptions: CollectOptions = {}): Promise<Collected> =>
    lock.exclusive(async () => {
      const stored = await deps.content.listBundleContent();
      const keep = await deps.references(collectOptions.except);
      const nowMs = deps.now();
      for (const [name, untilMs] of uploads) {
        if (untilMs <= nowMs) uploads.delete(name);
      }
      const doomed = stored.filter(({ name, storedAtMs }) => {
        if (name !== undefined && (keep.has(name) || uploads.has(name))) {
          return false;
        }
        if (name !== undefined && collectOptions.fresh?.has(name) === true) {
          return true;
        }
        return nowMs - storedAtMs >= options.graceMs;
      });
      await deps.content.removeBundleContent(doomed.map((item) => item.id));
      const collected = {
        objects: doomed.length,
        sizeBytes: doomed.reduce((sum, item) => sum + item.sizeBytes, 0),
      };
      log.info(
        {
          ...collected,
          kept: stored.length - doomed.length,
          ...compact({ bundle: collectOptions.except }),
        },
        "Collected unreferenced bundle content",
      );
      return collected;
    });

  const collectQuietly = (
    collectOptions: CollectOptions = {},
  ): Promise<void> => {
    const done = collect(collectOptions).then(
      () => undefined,
      (err: unknown) => {
        log.warn({ err }, "Cannot collect unreferenced bundle content");
      },
    );
    background.add(done);
    void done.then(() => background.delete(done));
    return done;
  };

  const tick = (): void => {
    // One periodic collection at a time: a slow one is not stacked up behind.
    if (running !== undefined) return;
    running = collectQuietly().finally(() => {
      running = undefined;
    });
  };

  return {
    start() {
      cancel?.();
      cancel = deps.every(options.intervalMs, tick);
      tick();
    },
    async stop() {
      cancel?.();
      cancel = undefined;
      await Promise.all(background);
    },
    async writeOrCollect(task) {
      const stored = new Set<string>();
      try {
        return await lock.shared(() =>
          task((digest) => {
            stored.add(deps.content.contentName(digest));
          }),
        );
      } catch (error) {
        if (stored.size > 0) await collectQuietly({ fresh: stored });
        throw error;
      }
    },
    putUpload(content, putOptions = {}) {
      return lock.shared(async () => {
        const digest = await deps.content.putBundleContent(content, putOptions);
        uploads.set(
          deps.content.contentName(digest),
          deps.now() + options.graceMs,
        );
        return digest;
      });
    },
    collect,
    collectQuietly,
    contentName: (digest) => deps.content.contentName(digest),
  };
}
