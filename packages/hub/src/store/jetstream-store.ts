import { FlotillaError, compact } from "@flotilla/core";
import {
  DeliverPolicy,
  jetstream,
  StorageType,
  type JetStreamClient,
  type JsMsg,
} from "@nats-io/jetstream";
import { Kvm, KvWatchInclude, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  bucketName,
  COLLECTION_NAMES,
  DEFAULT_BUCKET_PREFIX,
  keyFilterForPrefix,
  kvStreamName,
  kvSubject,
  type CollectionName,
} from "./keys.js";
import {
  abortable,
  checkBucketPrefix,
  checkMaxPayload,
  createConnectionWatch,
  isWrongLastRevision,
  toNatsFlotillaError,
  type ConnectionWatch,
} from "@flotilla/node";
import {
  checkKey,
  checkPrefix,
  checkRevision,
  decodeValue,
  DEFAULT_MAX_VALUE_BYTES,
  encodeValue,
  KV_OVERHEAD_BYTES,
  ref,
  RevisionConflictError,
  type Change,
  type Collection,
  type DeleteOptions,
  type Entry,
  type ListOptions,
  type OperationOptions,
  type PutOptions,
  type StateStore,
  type WatchOptions,
} from "./state-store.js";

/** What {@link createJetStreamStore} needs: a connection it uses but does not own or close. */
export interface JetStreamStoreDeps {
  /** Connect with `maxReconnectAttempts: -1` so that the store outlives NATS restarts. */
  readonly nc: NatsConnection;
}

/** Options of {@link createJetStreamStore}. */
export interface JetStreamStoreOptions {
  /** Buckets are named `<bucketPrefix>-<collection>`; default `flotilla`. */
  bucketPrefix?: string;
  /** Largest document in bytes of UTF-8 JSON; default `DEFAULT_MAX_VALUE_BYTES`. */
  maxValueBytes?: number;
  /** How long one JetStream request may take; default 5000 ms. */
  timeoutMs?: number;
  /** Values kept per key (≥ 1) when a bucket is created; default 1. */
  history?: number;
  /** Bucket replicas when created (1 on a single server, 3 on an R3 cluster); default 1. */
  replicas?: number;
}

/**
 * The StateStore on NATS JetStream KV: one file-backed bucket per collection, created on `start()`
 * if missing (existing buckets are used as they are). Compare-and-set uses the KV revision
 * (`create` for expectedRevision 0, `update` otherwise). While the connection is down every call
 * fails at once with `unavailable` (a request sent then would be lost and time out); calls succeed
 * again once nats.js has reconnected, and watches resume by themselves.
 */
export function createJetStreamStore(
  deps: JetStreamStoreDeps,
  options: JetStreamStoreOptions = {},
): StateStore {
  const bucketPrefix = options.bucketPrefix ?? DEFAULT_BUCKET_PREFIX;
  checkBucketPrefix(
    bucketPrefix,
    "Cannot create the JetStream state store",
    "bucketPrefix",
  );
  return new JetStreamStore(deps.nc, {
    bucketPrefix,
    maxValueBytes: options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES,
    timeoutMs: options.timeoutMs ?? 5_000,
    history: options.history ?? 1,
    replicas: options.replicas ?? 1,
  });
}

const KV_OPERATION_HEADER = "KV-Operation";

class JetStreamStore implements StateStore {
  readonly maxValueBytes: number;
  readonly #nc: NatsConnection;
  readonly #js: JetStreamClient;
  readonly #options: Required<JetStreamStoreOptions>;
  #buckets: Map<CollectionName, KV> | undefined;
  readonly #connection: ConnectionWatch;
  readonly #watches = new Set<() => void>();

  constructor(nc: NatsConnection, options: Required<JetStreamStoreOptions>) {
    this.#nc = nc;
    this.#options = options;
    this.maxValueBytes = options.maxValueBytes;
    this.#js = jetstream(nc, { timeout: options.timeoutMs });
    this.#connection = createConnectionWatch(nc);
  }

  async start(options: OperationOptions = {}): Promise<void> {
    if (this.#buckets !== undefined) return;
    const what = "Cannot start the JetStream state store";
    checkMaxPayload(
      this.#nc,
      this.maxValueBytes + KV_OVERHEAD_BYTES,
      what,
      `maxValueBytes (${String(this.maxValueBytes)}) plus ${String(KV_OVERHEAD_BYTES)} bytes for headers`,
    );
    this.#connection.start();
    const kvm = new Kvm(this.#js);
    const { bucketPrefix, history, replicas } = this.#options;
    try {
      const opened = await abortable(
        Promise.all(
          COLLECTION_NAMES.map(async (name) => {
            const kv = await kvm.create(bucketName(bucketPrefix, name), {
              history,
              replicas,
              storage: StorageType.File,
              maxValueSize: this.maxValueBytes + KV_OVERHEAD_BYTES,
              description: `flotilla hub state: ${name}`,
            });
            return [name, kv] as const;
          }),
        ),
        options.signal,
      );
      this.#buckets = new Map(opened);
    } catch (error) {
      this.#connection.stop();
      throw toNatsFlotillaError(error, what, options.signal);
    }
  }

  stop(): Promise<void> {
    this.#buckets = undefined;
    this.#connection.stop();
    for (const stopWatch of this.#watches) stopWatch();
    this.#watches.clear();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  async get<T>(
    collection: Collection<T>,
    key: string,
    options: OperationOptions = {},
  ): Promise<Entry<T> | undefined> {
    const { name } = collection;
    checkKey("get", name, key);
    const entry = await this.#call("get", name, key, options, (kv) =>
      kv.get(key),
    );
    if (entry === null || entry.operation !== "PUT") return undefined;
    return {
      key,
      value: decodeValue(collection, key, entry.value),
      revision: entry.revision,
    };
  }

  async put<T>(
    collection: Collection<T>,
    key: string,
    value: T,
    options: PutOptions = {},
  ): Promise<number> {
    const { name } = collection;
    const expected = options.expectedRevision;
    checkKey("put", name, key);
    checkRevision("put", name, key, expected, 0);
    const bytes = encodeValue(name, key, value, this.maxValueBytes);
    return this.#call("put", name, key, options, async (kv) => {
      try {
        if (expected === undefined) return await kv.put(key, bytes);
        if (expected === 0) return await kv.create(key, bytes);
        return await kv.update(key, bytes, expected);
      } catch (error) {
        if (isWrongLastRevision(error)) {
          throw new RevisionConflictError(name, key, expected ?? 0, "put", {
            cause: error,
          });
        }
        throw error;
      }
    });
  }

  async delete(
    collection: Collection<unknown>,
    key: string,
    options: DeleteOptions = {},
  ): Promise<void> {
    const { name } = collection;
    const expected = options.expectedRevision;
    checkKey("delete", name, key);
    checkRevision("delete", name, key, expected, 1);
    await this.#call("delete", name, key, options, async (kv) => {
      try {
        await kv.delete(key, compact({ previousSeq: expected }));
      } catch (error) {
        if (expected !== undefined && isWrongLastRevision(error)) {
          throw new RevisionConflictError(name, key, expected, "delete", {
            cause: error,
          });
        }
        throw error;
      }
    });
  }

  async list<T>(
    collection: Collection<T>,
    options: ListOptions = {},
  ): Promise<Entry<T>[]> {
    const { name } = collection;
    const prefix = options.prefix ?? "";
    checkPrefix(name, prefix);
    const messages = await this.#call("list", name, undefined, options, () =>
      this.#lastPerKey(name, keyFilterForPrefix(prefix), options.signal),
    );
    const bucket = bucketName(this.#options.bucketPrefix, name);
    const subjectPrefixLength = kvSubject(bucket, "").length;
    const entries: Entry<T>[] = [];
    for (const m of messages) {
      const key = m.subject.slice(subjectPrefixLength);
      const operation = m.headers?.get(KV_OPERATION_HEADER) ?? "";
      if (operation !== "" || !key.startsWith(prefix)) continue;
      entries.push({
        key,
        value: decodeValue(collection, key, m.data),
        revision: m.seq,
      });
    }
    return entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async watch<T>(
    collection: Collection<T>,
    options: WatchOptions,
  ): Promise<AsyncIterable<Change<T>>> {
    const { name } = collection;
    const { signal } = options;
    const prefix = options.prefix ?? "";
    checkPrefix(name, prefix);
    signal.throwIfAborted();
    // Not raced against the signal: creating the consumer is one request, bounded by timeoutMs,
    // and a watcher created after its caller gave up would leak.
    const watcher = await this.#call("watch", name, undefined, {}, (kv) =>
      kv.watch({
        key: keyFilterForPrefix(prefix),
        include: KvWatchInclude.UpdatesOnly,
      }),
    );
    if (signal.aborted) {
      watcher.stop();
      throw signal.reason;
    }
    const stopWatch = (): void => {
      watcher.stop();
    };
    this.#watches.add(stopWatch);
    signal.addEventListener("abort", stopWatch, { once: true });
    const watches = this.#watches;
    return (async function* (): AsyncGenerator<Change<T>> {
      try {
        for await (const e of watcher) {
          if (!e.key.startsWith(prefix)) continue;
          yield e.operation === "PUT"
            ? {
                type: "put",
                key: e.key,
                value: decodeValue(collection, e.key, e.value),
                revision: e.revision,
              }
            : { type: "delete", key: e.key, revision: e.revision };
        }
      } finally {
        stopWatch();
        watches.delete(stopWatch);
        signal.removeEventListener("abort", stopWatch);
      }
    })();
  }

  /** Runs one operation on a bucket, failing fast while disconnected and mapping nats.js errors. */
  async #call<R>(
    action: string,
    name: CollectionName,
    key: string | undefined,
    options: OperationOptions,
    operation: (kv: KV) => Promise<R>,
  ): Promise<R> {
    const { signal } = options;
    signal?.throwIfAborted();
    const what = `Cannot ${action} ${key === undefined ? `in "${name}"` : ref(name, key)}`;
    const kv = this.#buckets?.get(name);
    if (kv === undefined) {
      throw new FlotillaError(
        "unavailable",
        `${what}: the state store is not started`,
      );
    }
    this.#connection.check(what);
    try {
      return await abortable(operation(kv), signal);
    } catch (error) {
      throw toNatsFlotillaError(error, what, signal);
    }
  }

  /**
   * The last message of every subject matching `keyFilter` (documents and tombstones), read with
   * one short-lived ordered consumer rather than one request per key.
   */
  async #lastPerKey(
    name: CollectionName,
    keyFilter: string,
    signal: AbortSignal | undefined,
  ): Promise<JsMsg[]> {
    const bucket = bucketName(this.#options.bucketPrefix, name);
    const consumer = await this.#js.consumers.getPushConsumer(
      kvStreamName(bucket),
      {
        filter_subjects: kvSubject(bucket, keyFilter),
        deliver_policy: DeliverPolicy.LastPerSubject,
      },
    );
    try {
      const info = await consumer.info(true);
      if (info.num_pending === 0) return [];
      const messages = await consumer.consume();
      const stop = (): void => {
        messages.stop();
      };
      // No message for timeoutMs means the connection or the consumer is gone.
      const idle = setTimeout(stop, this.#options.timeoutMs);
      signal?.addEventListener("abort", stop, { once: true });
      const received: JsMsg[] = [];
      try {
        for await (const m of messages) {
          idle.refresh();
          received.push(m);
          if (m.info.pending === 0) return received;
        }
      } finally {
        clearTimeout(idle);
        signal?.removeEventListener("abort", stop);
        messages.stop();
      }
      signal?.throwIfAborted();
      // The consumer stopped delivering before the last entry: an outage, usually.
      throw new FlotillaError(
        "unavailable",
        `the listing stopped after ${String(received.length)} of ${String(info.num_pending)} entries`,
      );
    } finally {
      // Ordered consumers are ephemeral; delete at once rather than wait for the server to.
      await consumer.delete().catch(() => undefined);
    }
  }
}
