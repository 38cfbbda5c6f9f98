/** The intent watcher's public shape; the implementation is intent-watcher.ts. */
import type { ClusterIntent, FlotillaError } from "@flotilla/core";
import type { NatsConnection } from "@nats-io/transport-node";

/** What a watcher reports: the cluster's new intent, or that the hub removed it. */
export type IntentEvent =
  | {
      readonly type: "IntentReceived";
      readonly cluster: string;
      readonly intent: ClusterIntent;
      readonly hash: string;
      readonly revision: number;
    }
  | {
      readonly type: "IntentDeleted";
      readonly cluster: string;
      readonly revision: number;
    };

/** What `createIntentWatcher` needs: a connection it shares and does not close. */
export interface IntentWatcherDeps {
  /** Connect with `maxReconnectAttempts: -1`; many watchers may share one connection. */
  readonly nc: NatsConnection;
  /** Randomness for retry jitter, in [0, 1); default Math.random. */
  readonly random?: () => number;
}

/** Options of `createIntentWatcher`. */
export interface IntentWatcherOptions {
  readonly cluster: string;
  /** Bucket and subject prefix, as the hub's; default `flotilla`. */
  readonly prefix?: string;
  /** Called with every event, in order, as it happens. */
  readonly onEvent?: (event: IntentEvent) => void;
  /** Called with what the watcher skipped (invalid values) or retries (failed reads). */
  readonly onError?: (error: FlotillaError) => void;
  /** Largest value accepted; default MAX_INTENT_DOCUMENT_BYTES. */
  readonly maxDocumentBytes?: number;
  /** How long one read may take; default 5000 ms. */
  readonly timeoutMs?: number;
  /** First and largest pause between failed reads (jittered, doubling); default 100 and 5000 ms. */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  /** Mean pause between safety-net re-reads (jittered ±25%); default 300000 ms; 0 disables. */
  readonly resyncIntervalMs?: number;
}

/** Follows one cluster's intent. Stop it (or `await using`) to unsubscribe. */
export interface IntentWatcher extends AsyncDisposable {
  readonly cluster: string;
  /**
   * Subscribes, then reads the stored intent (retrying until a read succeeds); resolves once that
   * first read is done, so `current()` is the stored state. Rejects if `signal` aborts first.
   */
  start(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Unsubscribes and ends `events()`; emits nothing afterwards. */
  stop(): Promise<void>;
  /**
   * Reads the stored intent again now (the hub asked for a resync, or a hub session restarted);
   * resolves once that read is done and its event, if any, emitted. While NATS is disconnected
   * it resolves without a read: the reconnect reads.
   */
  refresh(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** The last event emitted, or undefined if the key was never written. */
  current(): IntentEvent | undefined;
  /**
   * The current event (if any), then each later one. Latest wins: a consumer slower than the
   * changes skips to the newest. Ends when `signal` aborts or the watcher stops.
   */
  events(options: { readonly signal: AbortSignal }): AsyncIterable<IntentEvent>;
}
