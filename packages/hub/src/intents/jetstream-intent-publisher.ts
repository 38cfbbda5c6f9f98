import {
  FlotillaError,
  formatProblem,
  showValue,
  type ClusterIntent,
} from "@flotilla/core";
import {
  jetstream,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { KvWatchInclude, type KV } from "@nats-io/kv";
import type { ObjectStore } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  bundleContentBucket,
  DEFAULT_INTENTS_PREFIX,
  intentKey,
  intentsBucketSettings,
  parseIntentDocument,
  sealedObjectName,
} from "@flotilla/protocol";
import {
  abortable,
  checkMaxPayload,
  createConnectionWatch,
  isWrongLastRevision,
  toNatsFlotillaError,
  type ConnectionWatch,
} from "@flotilla/node";
import {
  planPublish,
  prepareIntent,
  publishedIntent,
  publishWhat,
  type IntentOperationOptions,
  type IntentPublisher,
  type IntentWriteOptions,
  type PreparedIntent,
  type PublishedIntent,
  type PublishPlan,
  type PublishResult,
  type StoredContent,
} from "./intent-publisher.js";
import {
  applyFence,
  checkFence,
  isFenced,
  NO_FENCES,
  type Fence,
  type FenceMap,
} from "./intent-fences.js";
import { openIntentsBucket } from "./intents-bucket.js";
import {
  readStoredIntent,
  writeStoredIntent,
  type StoredIntent,
} from "./stored-intents.js";
import {
  listStoredContent,
  openBundleContentStore,
  putBundleContent,
  removeStoredContent,
  sealLegacyContent,
} from "./bundle-content-store.js";
import type { ContentKeys } from "../security/content-keys.js";

/** What {@link createJetStreamIntentPublisher} needs: a connection it uses but does not close. */
export interface JetStreamIntentPublisherDeps {
  /** Connect with `maxReconnectAttempts: -1` so that the publisher outlives NATS restarts. */
  readonly nc: NatsConnection;
  /** Seal bundle content (loaded before `start()`). */
  readonly contentKeys: ContentKeys;
  /** Told how many objects stored in clear by an earlier version were sealed at start. */
  readonly onLegacyContentSealed?: (count: number) => void;
}

/** Options of {@link createJetStreamIntentPublisher}. */
export interface JetStreamIntentPublisherOptions {
  /** Buckets and subjects start with this; default `flotilla` (see `@flotilla/protocol`). */
  prefix?: string;
  /** How long one JetStream request may take; default 5000 ms. */
  timeoutMs?: number;
  /** Bucket replicas when created (1 on a single server, 3 on an R3 cluster); default 1. */
  replicas?: number;
  /** Compare-and-set attempts before a publish gives up on a key that keeps changing; default 5. */
  maxAttempts?: number;
}

/**
 * The IntentPublisher on JetStream: intents in the KV bucket `<prefix>-intents` (file storage, one
 * value per key, republished on `<prefix>.intents.<cluster>` for agents), bundle content in the
 * object store `<prefix>-bundle-content`. Both are created on `start()` if missing.
 *
 * Every write (a remove too: its delete marker) is a compare-and-set on the key's revision
 * (`Nats-Expected-Last-Subject-Sequence`), and carries the key's fences in a header. The publisher
 * remembers the revision, generation and fences it last wrote or read per cluster, so the usual
 * publish (a new generation, fenced or not) is a single write, like a plain KV put; a read comes
 * first only for a same-or-lower generation, a fence the remembered map refuses, or after losing a
 * compare-and-set (a cluster it has not seen is tried as new). Reads are direct gets, headers
 * included. While the connection is down every call fails at once with `unavailable`.
 */
export function createJetStreamIntentPublisher(
  deps: JetStreamIntentPublisherDeps,
  options: JetStreamIntentPublisherOptions = {},
): IntentPublisher {
  const prefix = options.prefix ?? DEFAULT_INTENTS_PREFIX;
  return new JetStreamIntentPublisher(deps, {
    prefix,
    settings: intentsBucketSettings(prefix),
    timeoutMs: options.timeoutMs ?? 5_000,
    replicas: options.replicas ?? 1,
    maxAttempts: options.maxAttempts ?? 5,
  });
}

interface Config {
  readonly prefix: string;
  readonly settings: ReturnType<typeof intentsBucketSettings>;
  readonly timeoutMs: number;
  readonly replicas: number;
  readonly maxAttempts: number;
}

/**
 * What the publisher last saw stored under a key: an intent, or nothing at that revision; and the
 * fences stored with it. Exact while the key's revision is still `revision`, since every write is a
 * compare-and-set on it.
 */
type Known = (
  | {
      readonly revision: number;
      readonly generation: number;
      readonly hash: string;
    }
  | { readonly revision: number; readonly generation: undefined }
) & { readonly fences: FenceMap };

/** A key the publisher has not seen: most likely a new cluster, so a publish tries to create it. */
const NEVER_SEEN: Known = {
  revision: 0,
  generation: undefined,
  fences: NO_FENCES,
};

/** The stored intent `known` describes, for {@link planPublish}. */
function storedOf(
  known: Known,
): { readonly generation: number; readonly hash: string } | undefined {
  return known.generation === undefined ? undefined : known;
}

class JetStreamIntentPublisher implements IntentPublisher {
  readonly #nc: NatsConnection;
  readonly #deps: JetStreamIntentPublisherDeps;
  readonly #js: JetStreamClient;
  readonly #config: Config;
  readonly #known = new Map<string, Known>();
  #jsm: JetStreamManager | undefined;
  #objects: ObjectStore | undefined;
  readonly #connection: ConnectionWatch;

  constructor(deps: JetStreamIntentPublisherDeps, config: Config) {
    this.#nc = deps.nc;
    this.#deps = deps;
    this.#config = config;
    this.#js = jetstream(deps.nc, { timeout: config.timeoutMs });
    this.#connection = createConnectionWatch(deps.nc);
  }

  async start(options: IntentOperationOptions = {}): Promise<void> {
    if (this.#jsm !== undefined) return;
    const what = "Cannot start the intent publisher";
    const { settings, replicas, prefix } = this.#config;
    checkMaxPayload(
      this.#nc,
      settings.maxValueSize,
      what,
      `the ${String(settings.maxValueSize)} bytes an intent may take`,
    );
    this.#connection.start();
    try {
      const [, objects, jsm] = await abortable(
        Promise.all([
          openIntentsBucket(this.#js, settings, replicas, what),
          openBundleContentStore(this.#js, prefix, replicas),
          this.#js.jetstreamManager(false),
        ]),
        options.signal,
      );
      const sealed = await sealLegacyContent(
        objects,
        this.#deps.contentKeys,
        options.signal,
      );
      if (sealed > 0) this.#deps.onLegacyContentSealed?.(sealed);
      this.#objects = objects;
      this.#jsm = jsm;
    } catch (error) {
      this.#connection.stop();
      throw toNatsFlotillaError(error, what, options.signal);
    }
  }

  stop(): Promise<void> {
    this.#objects = undefined;
    this.#jsm = undefined;
    this.#known.clear();
    this.#connection.stop();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  async publish(
    intent: ClusterIntent,
    options: IntentWriteOptions = {},
  ): Promise<PublishResult> {
    const prepared = prepareIntent(intent);
    const fence = checkFence(options.fence);
    const { key } = prepared;
    const what = publishWhat(prepared);
    const jsm = this.#ready(what, options);
    let cached: Known | undefined = this.#known.get(key) ?? NEVER_SEEN;
    for (let attempt = 1; attempt <= this.#config.maxAttempts; attempt++) {
      try {
        let known = cached;
        let plan = known && planFromCache(prepared, known, fence, what);
        if (known === undefined || plan === undefined) {
          known = await abortable(
            this.#readKnown(jsm, key, what),
            options.signal,
          );
          plan = planPublish(
            prepared,
            storedOf(known),
            known.fences,
            fence,
            what,
          );
        }
        const { intent: next, hash } = prepared;
        if (plan.action === "unchanged") {
          return {
            ...publishedIntent(next, hash, known.revision, known.fences),
            written: false,
          };
        }
        const revision = await abortable(
          writeStoredIntent(
            this.#js,
            this.#config.prefix,
            { type: "put", prepared },
            plan.fences,
            known.revision,
          ),
          options.signal,
        );
        const { fences } = plan;
        const { generation } = next;
        this.#known.set(key, { revision, generation, hash, fences });
        return {
          ...publishedIntent(next, hash, revision, fences),
          written: true,
        };
      } catch (error) {
        if (!isWrongLastRevision(error)) {
          throw toNatsFlotillaError(error, what, options.signal);
        }
        // Another writer got there first: read what it stored and decide again.
        this.#known.delete(key);
        cached = undefined;
      }
    }
    throw changedEachTime(what, this.#config.maxAttempts);
  }

  async watch(
    signal: AbortSignal,
    onIntent: (cluster: string, stored: PublishedIntent | undefined) => void,
  ): Promise<void> {
    const what = "Cannot watch the intents";
    this.#ready(what, {});
    const { settings, replicas } = this.#config;
    let watcher: Awaited<ReturnType<KV["watch"]>>;
    try {
      const kv = await openIntentsBucket(this.#js, settings, replicas, what);
      watcher = await kv.watch({ include: KvWatchInclude.UpdatesOnly });
    } catch (error) {
      throw toNatsFlotillaError(error, what, undefined);
    }
    signal.addEventListener(
      "abort",
      () => {
        watcher.stop();
      },
      { once: true },
    );
    void (async () => {
      for await (const entry of watcher) {
        if (entry.operation !== "PUT") {
          onIntent(entry.key, undefined);
          continue;
        }
        const parsed = parseIntentDocument(entry.value, entry.key, Infinity);
        if (!parsed.ok) continue;
        const { intent, hash } = parsed.value;
        onIntent(entry.key, { intent, hash, revision: entry.revision });
      }
    })().catch(() => undefined);
  }

  async read(
    cluster: string,
    options: IntentOperationOptions = {},
  ): Promise<PublishedIntent | undefined> {
    const key = intentKey(cluster);
    const what = `Cannot read the intent of cluster ${showValue(key)}`;
    const jsm = this.#ready(what, options);
    let stored: StoredIntent | undefined;
    try {
      stored = await abortable(
        readStoredIntent(jsm, this.#config.prefix, key, what),
        options.signal,
      );
    } catch (error) {
      throw toNatsFlotillaError(error, what, options.signal);
    }
    if (stored === undefined || stored.deleted) return undefined;
    const parsed = parseIntentDocument(stored.data, key, Infinity);
    if (!parsed.ok) {
      // Only the hub's bug or a foreign writer can store a document that does not parse.
      throw new FlotillaError(
        "internal",
        `${what}: the stored document is invalid: ${parsed.problems.map(formatProblem).join("; ")}`,
        { problems: parsed.problems },
      );
    }
    const { intent, hash } = parsed.value;
    const { revision, fences } = stored;
    this.#known.set(key, {
      revision,
      generation: intent.generation,
      hash,
      fences,
    });
    return publishedIntent(intent, hash, revision, fences);
  }

  async remove(
    cluster: string,
    options: IntentWriteOptions = {},
  ): Promise<void> {
    const key = intentKey(cluster);
    const fence = checkFence(options.fence);
    const what = `Cannot remove the intent of cluster ${showValue(key)}`;
    const jsm = this.#ready(what, options);
    // Removing is rare, and usually of a stored intent: read first unless the key is known.
    let cached = this.#known.get(key);
    for (let attempt = 1; attempt <= this.#config.maxAttempts; attempt++) {
      try {
        let known = cached;
        let fences = known && fencesFromCache(known, fence, key, what);
        if (known === undefined || fences === undefined) {
          known = await abortable(
            this.#readKnown(jsm, key, what),
            options.signal,
          );
          fences = applyFence(known.fences, fence, key, what);
        }
        const revision = await abortable(
          writeStoredIntent(
            this.#js,
            this.#config.prefix,
            { type: "delete", key },
            fences,
            known.revision,
          ),
          options.signal,
        );
        this.#known.set(key, { revision, generation: undefined, fences });
        return;
      } catch (error) {
        if (!isWrongLastRevision(error)) {
          throw toNatsFlotillaError(error, what, options.signal);
        }
        this.#known.delete(key);
        cached = undefined;
      }
    }
    throw changedEachTime(what, this.#config.maxAttempts);
  }

  contentName(digest: string): string {
    return sealedObjectName(this.#deps.contentKeys.keyOf(digest));
  }

  async putBundleContent(
    content: Uint8Array,
    options: IntentOperationOptions = {},
  ): Promise<string> {
    const what = "Cannot store bundle content";
    this.#ready(what, options);
    const objects = this.#objects;
    if (objects === undefined) throw notStarted(what);
    try {
      return await putBundleContent(
        objects,
        this.#deps.contentKeys,
        content,
        options.signal,
      );
    } catch (error) {
      throw toNatsFlotillaError(error, what, options.signal);
    }
  }

  listBundleContent(
    options: IntentOperationOptions = {},
  ): Promise<readonly StoredContent[]> {
    return this.#onContent("Cannot list bundle content", options, (jsm, b) =>
      listStoredContent(jsm, b),
    );
  }

  removeBundleContent(
    ids: readonly string[],
    options: IntentOperationOptions = {},
  ): Promise<void> {
    return this.#onContent("Cannot remove bundle content", options, (jsm, b) =>
      removeStoredContent(jsm, b, ids),
    );
  }

  async #onContent<T>(
    what: string,
    options: IntentOperationOptions,
    run: (jsm: JetStreamManager, bucket: string) => Promise<T>,
  ): Promise<T> {
    this.#ready(what, options);
    const bucket = bundleContentBucket(this.#config.prefix);
    try {
      const jsm = await abortable(this.#js.jetstreamManager(), options.signal);
      return await abortable(run(jsm, bucket), options.signal);
    } catch (error) {
      throw toNatsFlotillaError(error, what, options.signal);
    }
  }

  /** Reads what is stored under `key` (remembering it); an unparsable value can be overwritten. */
  async #readKnown(
    jsm: JetStreamManager,
    key: string,
    what: string,
  ): Promise<Known> {
    const stored = await readStoredIntent(jsm, this.#config.prefix, key, what);
    let known: Known = stored
      ? {
          revision: stored.revision,
          generation: undefined,
          fences: stored.fences,
        }
      : NEVER_SEEN;
    if (stored !== undefined && !stored.deleted) {
      const parsed = parseIntentDocument(stored.data, key, Infinity);
      if (parsed.ok) {
        const { intent, hash } = parsed.value;
        known = { ...known, generation: intent.generation, hash };
      }
    }
    this.#known.set(key, known);
    return known;
  }

  #ready(what: string, options: IntentOperationOptions): JetStreamManager {
    options.signal?.throwIfAborted();
    const jsm = this.#jsm;
    if (jsm === undefined) throw notStarted(what);
    this.#connection.check(what);
    return jsm;
  }
}

/**
 * The plan of a publish decided on what the publisher remembers, or undefined when a fresh read
 * must decide: a same-or-lower generation, or a refusal, counts only on the word of a read.
 */
function planFromCache(
  prepared: PreparedIntent,
  known: Known,
  fence: Fence | undefined,
  what: string,
): PublishPlan | undefined {
  if (
    known.generation !== undefined &&
    prepared.intent.generation <= known.generation
  ) {
    return undefined;
  }
  try {
    return planPublish(prepared, storedOf(known), known.fences, fence, what);
  } catch (error) {
    if (isFenced(error)) return undefined;
    throw error;
  }
}

/** The fences a remove stores, decided on what the publisher remembers; undefined on a refusal. */
function fencesFromCache(
  known: Known,
  fence: Fence | undefined,
  key: string,
  what: string,
): FenceMap | undefined {
  try {
    return applyFence(known.fences, fence, key, what);
  } catch (error) {
    if (isFenced(error)) return undefined;
    throw error;
  }
}

function changedEachTime(what: string, attempts: number): FlotillaError {
  return new FlotillaError(
    "unavailable",
    `${what}: the stored intent changed during each of ${String(attempts)} attempts`,
  );
}

function notStarted(what: string): FlotillaError {
  return new FlotillaError(
    "unavailable",
    `${what}: the intent publisher is not started`,
  );
}
