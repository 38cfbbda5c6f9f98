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
import type { KV } from "@nats-io/kv";
import type { ObjectStore } from "@nats-io/obj";
import { headers, type NatsConnection } from "@nats-io/transport-node";
import {
  bundleContentBucket,
  DEFAULT_INTENTS_PREFIX,
  INTENT_GENERATION_HEADER,
  INTENT_HASH_HEADER,
  intentKey,
  intentKvSubject,
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
  decidePublish,
  prepareIntent,
  type IntentOperationOptions,
  type IntentPublisher,
  type PreparedIntent,
  type PublishedIntent,
  type PublishResult,
  type StoredContent,
} from "./intent-publisher.js";
import { openIntentsBucket } from "./intents-bucket.js";
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
 * Every write is a compare-and-set on the key's revision (`Nats-Expected-Last-Subject-Sequence`).
 * The publisher remembers the revision and generation it last wrote or read per cluster, so the
 * usual publish (a new generation) is a single write, like a plain KV put; a read comes first only
 * for a cluster it has not seen, a same-or-lower generation, or after losing a compare-and-set.
 * While the connection is down every call fails at once with `unavailable`.
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

/** What the publisher last saw stored under a key: an intent, or nothing at that revision. */
type Known =
  | {
      readonly revision: number;
      readonly generation: number;
      readonly hash: string;
    }
  | { readonly revision: number; readonly generation: undefined };

class JetStreamIntentPublisher implements IntentPublisher {
  readonly #nc: NatsConnection;
  readonly #deps: JetStreamIntentPublisherDeps;
  readonly #js: JetStreamClient;
  readonly #config: Config;
  readonly #known = new Map<string, Known>();
  #kv: KV | undefined;
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
    if (this.#kv !== undefined) return;
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
      const [kv, objects] = await abortable(
        Promise.all([
          openIntentsBucket(this.#js, settings, replicas, what),
          openBundleContentStore(this.#js, prefix, replicas),
        ]),
        options.signal,
      );
      const sealed = await sealLegacyContent(
        objects,
        this.#deps.contentKeys,
        options.signal,
      );
      if (sealed > 0) this.#deps.onLegacyContentSealed?.(sealed);
      this.#kv = kv;
      this.#objects = objects;
    } catch (error) {
      this.#connection.stop();
      throw toNatsFlotillaError(error, what, options.signal);
    }
  }

  stop(): Promise<void> {
    this.#kv = undefined;
    this.#objects = undefined;
    this.#known.clear();
    this.#connection.stop();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  async publish(
    intent: ClusterIntent,
    options: IntentOperationOptions = {},
  ): Promise<PublishResult> {
    const prepared = prepareIntent(intent);
    const { key } = prepared;
    const what = `Cannot publish intent generation ${String(prepared.intent.generation)} for cluster ${showValue(key)}`;
    const kv = this.#ready(what, options);
    let expected = this.#expectedRevision(prepared);
    for (let attempt = 1; attempt <= this.#config.maxAttempts; attempt++) {
      try {
        if (expected === undefined) {
          const stored = await abortable(
            this.#readKnown(kv, key),
            options.signal,
          );
          if (stored.generation !== undefined) {
            if (decidePublish(prepared, stored) === "unchanged") {
              return {
                intent: prepared.intent,
                hash: prepared.hash,
                revision: stored.revision,
                written: false,
              };
            }
          }
          expected = stored.revision;
        }
        const revision = await abortable(
          this.#write(prepared, expected),
          options.signal,
        );
        const { generation } = prepared.intent;
        this.#known.set(key, { revision, generation, hash: prepared.hash });
        return { ...this.#published(prepared, revision), written: true };
      } catch (error) {
        if (!isWrongLastRevision(error)) {
          throw toNatsFlotillaError(error, what, options.signal);
        }
        // Another writer got there first: read what it stored and decide again.
        this.#known.delete(key);
        expected = undefined;
      }
    }
    throw new FlotillaError(
      "unavailable",
      `${what}: the stored intent changed during each of ${String(this.#config.maxAttempts)} attempts`,
    );
  }

  async read(
    cluster: string,
    options: IntentOperationOptions = {},
  ): Promise<PublishedIntent | undefined> {
    const key = intentKey(cluster);
    const what = `Cannot read the intent of cluster ${showValue(key)}`;
    const kv = this.#ready(what, options);
    let entry: Awaited<ReturnType<KV["get"]>>;
    try {
      entry = await abortable(kv.get(key), options.signal);
    } catch (error) {
      throw toNatsFlotillaError(error, what, options.signal);
    }
    if (entry === null || entry.operation !== "PUT") return undefined;
    const parsed = parseIntentDocument(entry.value, key, Infinity);
    if (!parsed.ok) {
      // Only the hub's bug or a foreign writer can store a document that does not parse.
      throw new FlotillaError(
        "internal",
        `${what}: the stored document is invalid: ${parsed.problems.map(formatProblem).join("; ")}`,
        { problems: parsed.problems },
      );
    }
    const { intent, hash } = parsed.value;
    const { revision } = entry;
    this.#known.set(key, { revision, generation: intent.generation, hash });
    return { intent, hash, revision };
  }

  async remove(
    cluster: string,
    options: IntentOperationOptions = {},
  ): Promise<void> {
    const key = intentKey(cluster);
    const what = `Cannot remove the intent of cluster ${showValue(key)}`;
    const kv = this.#ready(what, options);
    this.#known.delete(key);
    try {
      await abortable(kv.delete(key), options.signal);
    } catch (error) {
      throw toNatsFlotillaError(error, what, options.signal);
    }
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

  /** The revision to write against without reading first, or undefined when a read must decide. */
  #expectedRevision(prepared: PreparedIntent): number | undefined {
    const known = this.#known.get(prepared.key);
    // Never seen: most likely a new cluster, so try to create; a conflict reads and retries.
    if (known === undefined) return 0;
    if (known.generation === undefined) return known.revision;
    // A same-or-lower generation is refused or a no-op only on the word of a fresh read.
    return prepared.intent.generation > known.generation
      ? known.revision
      : undefined;
  }

  /** Reads what is stored under `key` (remembering it); an unparsable value can be overwritten. */
  async #readKnown(kv: KV, key: string): Promise<Known> {
    const entry = await kv.get(key);
    let known: Known = {
      revision: entry?.revision ?? 0,
      generation: undefined,
    };
    if (entry?.operation === "PUT") {
      const parsed = parseIntentDocument(entry.value, key, Infinity);
      if (parsed.ok) {
        const { intent, hash } = parsed.value;
        known = {
          revision: entry.revision,
          generation: intent.generation,
          hash,
        };
      }
    }
    this.#known.set(key, known);
    return known;
  }

  async #write(prepared: PreparedIntent, expected: number): Promise<number> {
    const h = headers();
    h.set(INTENT_HASH_HEADER, prepared.hash);
    h.set(INTENT_GENERATION_HEADER, String(prepared.intent.generation));
    const ack = await this.#js.publish(
      intentKvSubject(prepared.key, this.#config.prefix),
      prepared.bytes,
      { headers: h, expect: { lastSubjectSequence: expected } },
    );
    return ack.seq;
  }

  #published(prepared: PreparedIntent, revision: number): PublishedIntent {
    return { intent: prepared.intent, hash: prepared.hash, revision };
  }

  #ready(what: string, options: IntentOperationOptions): KV {
    options.signal?.throwIfAborted();
    const kv = this.#kv;
    if (kv === undefined) throw notStarted(what);
    this.#connection.check(what);
    return kv;
  }
}

function notStarted(what: string): FlotillaError {
  return new FlotillaError(
    "unavailable",
    `${what}: the intent publisher is not started`,
  );
}
