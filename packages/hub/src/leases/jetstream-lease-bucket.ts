/**
 * The LeaseBucket on JetStream KV: bucket `<prefix>-leases`, whose `max_age` is the lease TTL, so
 * an entry nobody rewrites disappears on the server's clock. An existing bucket with another TTL
 * is updated to this one (every replica must run with the same TTL; see lease-keeper.ts).
 */
import { FlotillaError } from "@flotilla/core";
import {
  abortable,
  createConnectionWatch,
  isWrongLastRevision,
  toNatsFlotillaError,
  type ConnectionWatch,
} from "@flotilla/node";
import {
  jetstream,
  StorageType,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  keyFilterForPrefix,
  kvStreamName,
  kvSubject,
  leasesBucketName,
} from "../store/keys.js";
import type { OperationOptions } from "../store/state-store.js";
import type { LeaseBucket, LeaseBucketEntry } from "./lease-bucket.js";

export interface JetStreamLeaseBucketOptions {
  /** Bucket names start with this; default `flotilla`. */
  readonly prefix?: string;
  readonly ttlMs: number;
  /** Bucket replicas (1 on a single server, 3 on an R3 cluster); default 1. */
  readonly replicas?: number;
  /** How long one JetStream request may take; default 5000 ms. */
  readonly timeoutMs?: number;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

export function createJetStreamLeaseBucket(
  nc: NatsConnection,
  options: JetStreamLeaseBucketOptions,
): LeaseBucket {
  const name = leasesBucketName(options.prefix ?? "flotilla");
  const js = jetstream(nc, { timeout: options.timeoutMs ?? 5_000 });
  const connection: ConnectionWatch = createConnectionWatch(nc);
  let kv: KV | undefined;
  let jsm: JetStreamManager | undefined;

  const ready = (what: string, opts: OperationOptions): KV => {
    opts.signal?.throwIfAborted();
    if (kv === undefined) {
      throw new FlotillaError(
        "unavailable",
        `${what}: the lease bucket is not started`,
      );
    }
    connection.check(what);
    return kv;
  };

  const call = async <T>(
    what: string,
    opts: OperationOptions,
    task: (bucket: KV) => Promise<T>,
  ): Promise<T> => {
    const bucket = ready(what, opts);
    try {
      return await abortable(task(bucket), opts.signal);
    } catch (error) {
      throw toNatsFlotillaError(error, what, opts.signal);
    }
  };

  const conditional = async (
    task: () => Promise<number>,
  ): Promise<number | undefined> => {
    try {
      return await task();
    } catch (error) {
      if (isWrongLastRevision(error)) return undefined;
      throw error;
    }
  };

  return {
    ttlMs: options.ttlMs,

    async start(opts = {}) {
      if (kv !== undefined) return;
      const what = `Cannot open the lease bucket ${name}`;
      connection.start();
      try {
        const opened = await abortable(
          new Kvm(js).create(name, {
            history: 1,
            ttl: options.ttlMs,
            replicas: options.replicas ?? 1,
            storage: StorageType.File,
            description: "flotilla hub: leases and live replicas",
          }),
          opts.signal,
        );
        const status = await abortable(opened.status(), opts.signal);
        if (status.ttl !== options.ttlMs) {
          jsm ??= await js.jetstreamManager();
          const info = await jsm.streams.info(status.streamInfo.config.name);
          const maxAge = options.ttlMs * 1_000_000;
          await jsm.streams.update(info.config.name, {
            ...info.config,
            max_age: maxAge,
            // The server refuses a duplicates window longer than the entries live.
            duplicate_window: Math.min(info.config.duplicate_window, maxAge),
          });
        }
        kv = opened;
      } catch (error) {
        connection.stop();
        throw toNatsFlotillaError(error, what, opts.signal);
      }
    },

    stop() {
      kv = undefined;
      connection.stop();
      return Promise.resolve();
    },

    [Symbol.asyncDispose]() {
      return this.stop();
    },

    create(key, value, opts = {}) {
      return call(`Cannot create ${key} in ${name}`, opts, (bucket) =>
        conditional(() => bucket.create(key, encode(value))),
      );
    },

    update(key, value, revision, opts = {}) {
      return call(`Cannot update ${key} in ${name}`, opts, (bucket) =>
        conditional(() => bucket.update(key, encode(value), revision)),
      );
    },

    put(key, value, opts = {}) {
      return call(`Cannot write ${key} in ${name}`, opts, (bucket) =>
        bucket.put(key, encode(value)),
      );
    },

    delete(key, revision, opts = {}) {
      return call(`Cannot delete ${key} in ${name}`, opts, async (bucket) => {
        try {
          await bucket.delete(key, { previousSeq: revision });
          return true;
        } catch (error) {
          if (isWrongLastRevision(error)) return false;
          throw error;
        }
      });
    },

    list(prefix, opts = {}) {
      return call(`Cannot list ${name}`, opts, async (bucket) => {
        // The stream's per-subject counts name the keys without creating a consumer: a round
        // lists twice, and consumer creation goes through the cluster's meta leader, which is
        // slow or unavailable for seconds when a NATS node dies (docs/high-availability.md).
        jsm ??= await js.jetstreamManager();
        const subjectPrefix = kvSubject(name, "");
        const info = await jsm.streams.info(kvStreamName(name), {
          subjects_filter: kvSubject(name, keyFilterForPrefix(prefix)),
        });
        const keys = Object.keys(info.state.subjects ?? {})
          .map((subject) => subject.slice(subjectPrefix.length))
          .filter((key) => key.startsWith(prefix));
        const entries = await Promise.all(keys.map((key) => bucket.get(key)));
        const out: LeaseBucketEntry[] = [];
        for (const entry of entries) {
          if (entry === null || entry.operation !== "PUT") continue;
          out.push({
            key: entry.key,
            value: decode(entry.value),
            revision: entry.revision,
          });
        }
        return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      });
    },
  };
}

function encode(value: unknown): Uint8Array {
  return utf8.encode(JSON.stringify(value));
}

/** A value that is not JSON (a foreign writer) reads as undefined; callers check shapes. */
function decode(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(fromUtf8.decode(bytes)) as unknown;
  } catch {
    return undefined;
  }
}
