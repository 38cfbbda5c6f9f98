/**
 * The LeaseBucket port: a small key-value bucket whose entries expire a fixed time after their
 * last write (the lease TTL). Leases on units of scheduling work and the records of live replicas
 * live there (docs/high-availability.md). On NATS it is a JetStream KV bucket whose `max_age` is
 * the TTL, so expiry is the server's, not a clock of ours; in memory it is a map with a clock.
 *
 * Writes are compare-and-set on the entry's revision, and revisions only grow (they are the
 * bucket's sequence numbers), which is what makes a lease's revision usable as a fencing epoch.
 */
import type { OperationOptions } from "../store/state-store.js";

/** One live entry. */
export interface LeaseBucketEntry {
  readonly key: string;
  readonly value: unknown;
  readonly revision: number;
}

export interface LeaseBucket extends AsyncDisposable {
  /** How long an entry lives after its last write, in ms. */
  readonly ttlMs: number;
  /** Creates the bucket if missing (and sets its TTL). Idempotent. */
  start(options?: OperationOptions): Promise<void>;
  stop(): Promise<void>;
  /** Writes `key` only if it has no live entry; the new revision, or undefined if one exists. */
  create(
    key: string,
    value: unknown,
    options?: OperationOptions,
  ): Promise<number | undefined>;
  /**
   * Writes `key` only if its live entry is at `revision`; the new revision, or undefined when it
   * is not (written since, expired or deleted).
   */
  update(
    key: string,
    value: unknown,
    revision: number,
    options?: OperationOptions,
  ): Promise<number | undefined>;
  /** Writes `key` whatever is there (a replica's own record). */
  put(key: string, value: unknown, options?: OperationOptions): Promise<number>;
  /** Deletes `key` if its live entry is at `revision`; false when it is not. */
  delete(
    key: string,
    revision: number,
    options?: OperationOptions,
  ): Promise<boolean>;
  /** Every live entry whose key starts with `prefix`, sorted by key. */
  list(prefix: string, options?: OperationOptions): Promise<LeaseBucketEntry[]>;
}
