/**
 * The LeaseBucket in memory, on a clock: an entry is gone once `ttlMs` has passed since its last
 * write, as on the server. For unit tests and single-process hubs with in-memory state.
 */
import type { Clock } from "@flotilla/node";
import type { LeaseBucket, LeaseBucketEntry } from "./lease-bucket.js";

interface Stored {
  readonly value: unknown;
  readonly revision: number;
  readonly writtenAtMs: number;
}

export function createMemoryLeaseBucket(options: {
  readonly ttlMs: number;
  readonly clock: Pick<Clock, "now">;
}): LeaseBucket {
  const entries = new Map<string, Stored>();
  let sequence = 0;
  let started = false;

  const live = (key: string): Stored | undefined => {
    const stored = entries.get(key);
    if (stored === undefined) return undefined;
    if (options.clock.now() - stored.writtenAtMs >= options.ttlMs) {
      entries.delete(key);
      return undefined;
    }
    return stored;
  };

  const write = (key: string, value: unknown): number => {
    sequence += 1;
    // A copy, as a server would hold: later changes to the caller's object do not leak in.
    entries.set(key, {
      value: structuredClone(value),
      revision: sequence,
      writtenAtMs: options.clock.now(),
    });
    return sequence;
  };

  const check = (what: string): void => {
    if (!started) throw new Error(`${what}: the lease bucket is not started`);
  };

  return {
    ttlMs: options.ttlMs,
    start() {
      started = true;
      return Promise.resolve();
    },
    stop() {
      started = false;
      return Promise.resolve();
    },
    [Symbol.asyncDispose]() {
      return this.stop();
    },
    create(key, value) {
      check("create");
      return Promise.resolve(
        live(key) === undefined ? write(key, value) : undefined,
      );
    },
    update(key, value, revision) {
      check("update");
      return Promise.resolve(
        live(key)?.revision === revision ? write(key, value) : undefined,
      );
    },
    put(key, value) {
      check("put");
      return Promise.resolve(write(key, value));
    },
    delete(key, revision) {
      check("delete");
      if (live(key)?.revision !== revision) return Promise.resolve(false);
      sequence += 1;
      entries.delete(key);
      return Promise.resolve(true);
    },
    list(prefix) {
      check("list");
      const out: LeaseBucketEntry[] = [];
      for (const key of [...entries.keys()].sort()) {
        if (!key.startsWith(prefix)) continue;
        const stored = live(key);
        if (stored === undefined) continue;
        out.push({
          key,
          value: structuredClone(stored.value),
          revision: stored.revision,
        });
      }
      return Promise.resolve(out);
    },
  };
}
