import { FlotillaError } from "@flotilla/core";
import type { CollectionName } from "./keys.js";
import {
  checkKey,
  checkPrefix,
  checkRevision,
  decodeValue,
  DEFAULT_MAX_VALUE_BYTES,
  encodeValue,
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
import { AsyncQueue } from "@flotilla/node";

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Largest document in bytes of UTF-8 JSON; default `DEFAULT_MAX_VALUE_BYTES`. */
  maxValueBytes?: number;
}

/**
 * A StateStore in process memory, for unit tests and offline tools. It mirrors JetStream KV
 * exactly where the contract suite looks: documents are stored as JSON bytes (so reads return
 * fresh copies and size limits match), revisions are one counter per collection, and a delete
 * is a write with its own revision (a tombstone) that compare-and-set sees.
 */
export function createMemoryStore(
  options: MemoryStoreOptions = {},
): StateStore {
  return new MemoryStore(options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES);
}

/** The last write of a key: a document, or a tombstone (`bytes` undefined). */
interface Slot {
  readonly bytes: Uint8Array | undefined;
  readonly revision: number;
}

interface RawChange {
  readonly key: string;
  readonly slot: Slot;
}

interface Bucket {
  revision: number;
  readonly slots: Map<string, Slot>;
  readonly watchers: Set<AsyncQueue<RawChange>>;
}

class MemoryStore implements StateStore {
  readonly #buckets = new Map<CollectionName, Bucket>();
  #started = false;

  constructor(readonly maxValueBytes: number) {}

  start(options: OperationOptions = {}): Promise<void> {
    options.signal?.throwIfAborted();
    this.#started = true;
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.#started = false;
    for (const bucket of this.#buckets.values()) {
      for (const queue of bucket.watchers) queue.end();
      bucket.watchers.clear();
    }
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  get<T>(
    collection: Collection<T>,
    key: string,
    options: OperationOptions = {},
  ): Promise<Entry<T> | undefined> {
    return attempt(() => {
      const bucket = this.#open("get", collection.name, options);
      checkKey("get", collection.name, key);
      const slot = bucket.slots.get(key);
      if (slot?.bytes === undefined) return undefined;
      return {
        key,
        value: decodeValue(collection, key, slot.bytes),
        revision: slot.revision,
      };
    });
  }

  put<T>(
    collection: Collection<T>,
    key: string,
    value: T,
    options: PutOptions = {},
  ): Promise<number> {
    return attempt(() => {
      const { name } = collection;
      const bucket = this.#open("put", name, options);
      checkKey("put", name, key);
      checkRevision("put", name, key, options.expectedRevision, 0);
      const bytes = encodeValue(name, key, value, this.maxValueBytes);
      const current = bucket.slots.get(key);
      const expected = options.expectedRevision;
      if (expected !== undefined) {
        // Like KV `create`: a tombstone counts as absent for expectedRevision 0.
        const holds =
          expected === 0
            ? current?.bytes === undefined
            : current?.revision === expected;
        if (!holds) throw new RevisionConflictError(name, key, expected, "put");
      }
      return this.#write(bucket, key, bytes);
    });
  }

  delete(
    collection: Collection<unknown>,
    key: string,
    options: DeleteOptions = {},
  ): Promise<void> {
    return attempt(() => {
      const { name } = collection;
      const bucket = this.#open("delete", name, options);
      checkKey("delete", name, key);
      checkRevision("delete", name, key, options.expectedRevision, 1);
      const expected = options.expectedRevision;
      if (
        expected !== undefined &&
        bucket.slots.get(key)?.revision !== expected
      ) {
        throw new RevisionConflictError(name, key, expected, "delete");
      }
      this.#write(bucket, key, undefined);
    });
  }

  list<T>(
    collection: Collection<T>,
    options: ListOptions = {},
  ): Promise<Entry<T>[]> {
    return attempt(() => {
      const bucket = this.#open("list", collection.name, options);
      const prefix = options.prefix ?? "";
      checkPrefix(collection.name, prefix);
      const entries: Entry<T>[] = [];
      for (const [key, slot] of bucket.slots) {
        if (slot.bytes === undefined || !key.startsWith(prefix)) continue;
        const value = decodeValue(collection, key, slot.bytes);
        entries.push({ key, value, revision: slot.revision });
      }
      return entries.sort((a, b) =>
        a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
      );
    });
  }

  watch<T>(
    collection: Collection<T>,
    options: WatchOptions,
  ): Promise<AsyncIterable<Change<T>>> {
    return attempt(() => {
      const { signal } = options;
      const bucket = this.#open("watch", collection.name, { signal });
      const prefix = options.prefix ?? "";
      checkPrefix(collection.name, prefix);
      const queue = new AsyncQueue<RawChange>();
      bucket.watchers.add(queue);
      const onAbort = (): void => {
        bucket.watchers.delete(queue);
        queue.end();
      };
      signal.addEventListener("abort", onAbort, { once: true });
      return changes(collection, queue, prefix);
    });
  }

  #open(
    action: string,
    name: CollectionName,
    options: OperationOptions,
  ): Bucket {
    options.signal?.throwIfAborted();
    if (!this.#started) {
      throw new FlotillaError(
        "unavailable",
        `Cannot ${action} in "${name}": the state store is not started`,
      );
    }
    let bucket = this.#buckets.get(name);
    if (bucket === undefined) {
      bucket = { revision: 0, slots: new Map(), watchers: new Set() };
      this.#buckets.set(name, bucket);
    }
    return bucket;
  }

  #write(bucket: Bucket, key: string, bytes: Uint8Array | undefined): number {
    const slot = { bytes, revision: ++bucket.revision };
    bucket.slots.set(key, slot);
    for (const queue of bucket.watchers) queue.push({ key, slot });
    return slot.revision;
  }
}

/**
 * Runs a synchronous operation on a later microtask, as a real store would answer later: errors
 * reject rather than throw, and each operation still runs whole (compare-and-set is atomic).
 */
async function attempt<T>(operation: () => T): Promise<T> {
  await Promise.resolve();
  return operation();
}

async function* changes<T>(
  collection: Collection<T>,
  queue: AsyncQueue<RawChange>,
  prefix: string,
): AsyncGenerator<Change<T>> {
  for (;;) {
    const change = await queue.next();
    if (change === undefined) return;
    const { key, slot } = change;
    if (!key.startsWith(prefix)) continue;
    yield slot.bytes === undefined
      ? { type: "delete", key, revision: slot.revision }
      : {
          type: "put",
          key,
          value: decodeValue(collection, key, slot.bytes),
          revision: slot.revision,
        };
  }
}
