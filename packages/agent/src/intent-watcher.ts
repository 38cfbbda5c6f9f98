/**
 * The agent's view of its cluster's intent (ARCHITECTURE "Intents go hub → agent over NATS").
 *
 * Cheap for the NATS server at 10,000 agents: no JetStream consumer per agent. A watcher holds one
 * core subscription to `<prefix>.intents.<cluster>`, on which the intents bucket's stream
 * republishes every stored write with its revision (`Nats-Sequence`), and reads its key with one
 * direct get when it starts, after every reconnect (what was written while the connection was down
 * arrives that way), and now and then as a safety net, since core NATS delivery is at most once.
 * Both paths feed one ordering rule: a write is taken only if its revision is newer than the last
 * one seen, so a republished message racing the read is harmless; and within a cluster's life
 * (until its key is deleted) generations only go up.
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  FlotillaError,
  formatProblem,
  showValue,
  type ClusterIntent,
} from "@flotilla/core";
import {
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RepublishHeaders,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import {
  ClosedConnectionError,
  ConnectionError,
  NoRespondersError,
  TimeoutError,
  type Msg,
  type NatsConnection,
  type QueuedIterator,
  type Status,
  type Subscription,
} from "@nats-io/transport-node";
import {
  bundleContentBucket,
  bundleObjectName,
  DEFAULT_INTENTS_PREFIX,
  intentKey,
  intentKvSubject,
  intentsStream,
  intentSubject,
  MAX_BUNDLE_CONTENT_BYTES,
  MAX_INTENT_DOCUMENT_BYTES,
  parseIntentDocument,
  sha256Digest,
} from "@flotilla/protocol";

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

/** What {@link createIntentWatcher} needs: a connection it shares and does not close. */
export interface IntentWatcherDeps {
  /** Connect with `maxReconnectAttempts: -1`; many watchers may share one connection. */
  readonly nc: NatsConnection;
  /** Randomness for retry jitter, in [0, 1); default Math.random. */
  readonly random?: () => number;
}

/** Options of {@link createIntentWatcher}. */
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
  stop(): Promise<void>;
  /** The last event emitted, or undefined if the key was never written. */
  current(): IntentEvent | undefined;
  /**
   * The current event (if any), then each later one. Latest wins: a consumer slower than the
   * changes skips to the newest. Ends when `signal` aborts or the watcher stops.
   */
  events(options: { readonly signal: AbortSignal }): AsyncIterable<IntentEvent>;
}

/** Creates a watcher for one cluster; throws `invalid_argument` for a name that is not a key. */
export function createIntentWatcher(
  deps: IntentWatcherDeps,
  options: IntentWatcherOptions,
): IntentWatcher {
  intentKey(options.cluster);
  return new Watcher(deps, options);
}

const KV_OPERATION_HEADER = "KV-Operation";

interface StoredWrite {
  readonly revision: number;
  readonly deleted: boolean;
  readonly data: Uint8Array;
}

class Watcher implements IntentWatcher {
  readonly cluster: string;
  readonly #nc: NatsConnection;
  readonly #random: () => number;
  readonly #options: IntentWatcherOptions;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #stopping = new AbortController();
  readonly #sinks = new Set<(event: IntentEvent) => void>();
  readonly #firstRead = deferred();
  #started = false;
  #jsm: JetStreamManager | undefined;
  #subscription: Subscription | undefined;
  #reading: Promise<void> | undefined;
  #readAgain = false;
  #resyncTimer: NodeJS.Timeout | undefined;
  #lastRevision = 0;
  #lastGeneration = 0;
  #current: IntentEvent | undefined;

  constructor(deps: IntentWatcherDeps, options: IntentWatcherOptions) {
    this.cluster = options.cluster;
    this.#nc = deps.nc;
    this.#random = deps.random ?? Math.random;
    this.#options = options;
    this.#prefix = options.prefix ?? DEFAULT_INTENTS_PREFIX;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#firstRead.promise.catch(() => undefined);
  }

  get #stopped(): boolean {
    return this.#stopping.signal.aborted;
  }

  async start(options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    const { signal } = options;
    signal?.throwIfAborted();
    if (this.#stopped) {
      throw new FlotillaError(
        "failed_precondition",
        `Cannot start the intent watcher of cluster ${showValue(this.cluster)}: it was stopped`,
      );
    }
    if (!this.#started) {
      this.#started = true;
      try {
        this.#jsm = await jetstreamManager(this.#nc, {
          checkAPI: false,
          timeout: this.#timeoutMs,
        });
        // Subscribe before the first read, so that no write falls between the two.
        this.#subscription = this.#nc.subscribe(
          intentSubject(this.cluster, this.#prefix),
          {
            callback: (error, msg) => {
              this.#onMessage(error, msg);
            },
          },
        );
      } catch (error) {
        await this.stop();
        throw toWatcherError(error, this.#what("start"));
      }
      watchConnection(this.#nc, this.#onStatus);
      this.#requestRead();
      this.#scheduleResync();
    }
    try {
      await abortable(this.#firstRead.promise, signal);
    } catch (error) {
      // A start given up on leaves nothing running behind it.
      if (signal?.aborted && error === signal.reason) await this.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopping.abort();
    this.#firstRead.reject(
      new FlotillaError(
        "unavailable",
        `${this.#what("start")}: it was stopped`,
      ),
    );
    clearTimeout(this.#resyncTimer);
    unwatchConnection(this.#nc, this.#onStatus);
    try {
      this.#subscription?.unsubscribe();
    } catch {
      // the connection is closed: nothing left to unsubscribe from
    }
    await this.#reading;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  current(): IntentEvent | undefined {
    return this.#current;
  }

  async *events(options: {
    readonly signal: AbortSignal;
  }): AsyncGenerator<IntentEvent> {
    const { signal } = options;
    let pending = this.#current;
    let wake: (() => void) | undefined;
    const sink = (event: IntentEvent): void => {
      pending = event;
      wake?.();
    };
    const end = (): void => wake?.();
    this.#sinks.add(sink);
    signal.addEventListener("abort", end);
    this.#stopping.signal.addEventListener("abort", end);
    try {
      while (!signal.aborted && !this.#stopped) {
        if (pending === undefined) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        const event = pending;
        pending = undefined;
        yield event;
      }
    } finally {
      this.#sinks.delete(sink);
      signal.removeEventListener("abort", end);
      this.#stopping.signal.removeEventListener("abort", end);
    }
  }

  readonly #onStatus = (status: Status): void => {
    if (status.type === "reconnect") this.#requestRead();
    else if (status.type === "close") {
      this.#firstRead.reject(
        new FlotillaError(
          "unavailable",
          `${this.#what("read")}: the NATS connection is closed`,
        ),
      );
    }
  };

  #onMessage(error: Error | null, msg: Msg): void {
    if (this.#stopped) return;
    if (error !== null) {
      this.#report(toWatcherError(error, this.#what("follow")));
      return;
    }
    const revision = Number(msg.headers?.get(RepublishHeaders.Sequence));
    if (!Number.isSafeInteger(revision) || revision < 1) {
      this.#report(
        new FlotillaError(
          "invalid_argument",
          `Ignoring a message for cluster ${showValue(this.cluster)}: it has no ${RepublishHeaders.Sequence} header, so it was not republished by the intents stream`,
        ),
      );
      return;
    }
    this.#accept({
      revision,
      deleted: (msg.headers?.get(KV_OPERATION_HEADER) ?? "") !== "",
      data: msg.data,
    });
  }

  /** Reads now, or once more after the read in flight (which may predate a reconnect). */
  #requestRead(): void {
    if (this.#stopped) return;
    if (this.#reading !== undefined) {
      this.#readAgain = true;
      return;
    }
    this.#reading = this.#readLoop().finally(() => {
      this.#reading = undefined;
    });
  }

  async #readLoop(): Promise<void> {
    let failures = 0;
    do {
      this.#readAgain = false;
      try {
        const write = await this.#readOnce();
        if (this.#stopped) return;
        if (write !== undefined) this.#accept(write);
        failures = 0;
        this.#firstRead.resolve();
      } catch (error) {
        if (this.#stopped) return;
        this.#report(toWatcherError(error, this.#what("read")));
        // While disconnected, the reconnect will ask for a read; retrying now would only time out.
        if (!isConnected(this.#nc)) return;
        const { retryMinMs = 100, retryMaxMs = 5_000 } = this.#options;
        const ceilingMs = Math.min(retryMaxMs, retryMinMs * 2 ** failures++);
        try {
          await sleep(ceilingMs * (0.5 + this.#random() / 2), undefined, {
            signal: this.#stopping.signal,
          });
        } catch {
          return;
        }
        this.#readAgain = true;
      }
    } while (this.#readAgain && !this.#stopped);
  }

  /** The key's last write (direct get: no consumer), or undefined if it was never written. */
  async #readOnce(): Promise<StoredWrite | undefined> {
    const jsm = this.#jsm;
    if (jsm === undefined) return undefined;
    const m = await jsm.direct.getMessage(intentsStream(this.#prefix), {
      last_by_subj: intentKvSubject(this.cluster, this.#prefix),
    });
    if (m === null) return undefined;
    const operation = m.header.get(KV_OPERATION_HEADER);
    return { revision: m.seq, deleted: operation !== "", data: m.data };
  }

  #accept(write: StoredWrite): void {
    if (write.revision <= this.#lastRevision) return;
    this.#lastRevision = write.revision;
    const { revision } = write;
    if (write.deleted) {
      if (this.#current?.type === "IntentDeleted") return;
      this.#lastGeneration = 0;
      this.#emit({ type: "IntentDeleted", cluster: this.cluster, revision });
      return;
    }
    const parsed = parseIntentDocument(
      write.data,
      this.cluster,
      this.#options.maxDocumentBytes ?? MAX_INTENT_DOCUMENT_BYTES,
    );
    const what = `Ignoring the intent of cluster ${showValue(this.cluster)} at revision ${String(revision)}`;
    if (!parsed.ok) {
      const detail = parsed.problems.map(formatProblem).join("; ");
      this.#report(
        new FlotillaError("invalid_argument", `${what}: ${detail}`, {
          problems: parsed.problems,
        }),
      );
      return;
    }
    const { intent, hash } = parsed.value;
    if (intent.generation <= this.#lastGeneration) {
      const current = this.#current;
      const same = current?.type === "IntentReceived" && current.hash === hash;
      if (!same || intent.generation < this.#lastGeneration) {
        this.#report(
          new FlotillaError(
            "failed_precondition",
            `${what}: its generation ${String(intent.generation)} is not newer than generation ${String(this.#lastGeneration)}, already received`,
          ),
        );
      }
      return;
    }
    this.#lastGeneration = intent.generation;
    this.#emit({
      type: "IntentReceived",
      cluster: this.cluster,
      intent,
      hash,
      revision,
    });
  }

  #emit(event: IntentEvent): void {
    this.#current = event;
    try {
      this.#options.onEvent?.(event);
    } catch (error) {
      this.#report(
        new FlotillaError(
          "internal",
          `The onEvent handler of the intent watcher of cluster ${showValue(this.cluster)} threw`,
          { cause: error },
        ),
      );
    }
    for (const sink of this.#sinks) sink(event);
  }

  #report(error: FlotillaError): void {
    try {
      this.#options.onError?.(error);
    } catch {
      // an error handler that throws has nowhere left to report to
    }
  }

  #scheduleResync(): void {
    const { resyncIntervalMs = 300_000 } = this.#options;
    if (resyncIntervalMs <= 0 || this.#stopped) return;
    const delayMs = resyncIntervalMs * (0.75 + this.#random() / 2);
    this.#resyncTimer = setTimeout(() => {
      this.#requestRead();
      this.#scheduleResync();
    }, delayMs);
    this.#resyncTimer.unref();
  }

  #what(action: string): string {
    return `Cannot ${action} the intent of cluster ${showValue(this.cluster)}`;
  }
}

/**
 * One status listener per connection, shared by all its watchers: a thousand watchers on one
 * connection should not mean a thousand status iterators.
 */
interface SharedStatus {
  readonly statuses: QueuedIterator<Status>;
  readonly listeners: Set<(status: Status) => void>;
  connected: boolean;
}
const shared = new WeakMap<NatsConnection, SharedStatus>();

function watchConnection(
  nc: NatsConnection,
  listener: (status: Status) => void,
): void {
  let entry = shared.get(nc);
  if (entry === undefined) {
    const created: SharedStatus = {
      statuses: nc.status() as QueuedIterator<Status>,
      listeners: new Set(),
      connected: true,
    };
    entry = created;
    shared.set(nc, created);
    void (async () => {
      for await (const status of created.statuses) {
        if (status.type === "disconnect") created.connected = false;
        else if (status.type === "reconnect") created.connected = true;
        for (const l of created.listeners) l(status);
      }
    })().catch(() => undefined);
  }
  entry.listeners.add(listener);
}

function unwatchConnection(
  nc: NatsConnection,
  listener: (status: Status) => void,
): void {
  const entry = shared.get(nc);
  if (entry === undefined) return;
  entry.listeners.delete(listener);
  if (entry.listeners.size === 0) {
    entry.statuses.stop();
    shared.delete(nc);
  }
}

function isConnected(nc: NatsConnection): boolean {
  return !nc.isClosed() && (shared.get(nc)?.connected ?? true);
}

/** Options of {@link getBundleContent}. */
export interface GetBundleContentOptions {
  readonly prefix?: string;
  readonly signal?: AbortSignal;
  /** Largest content accepted; default MAX_BUNDLE_CONTENT_BYTES. */
  readonly maxBytes?: number;
  /** How long each JetStream request may take; default 5000 ms. */
  readonly timeoutMs?: number;
}

/**
 * Fetches bundle content by digest from the object store and checks that it hashes to that
 * digest: `not_found` if absent, `failed_precondition` if larger than `maxBytes`, `internal` if
 * the stored bytes are not the content the digest names.
 */
export async function getBundleContent(
  deps: { readonly nc: NatsConnection },
  digest: string,
  options: GetBundleContentOptions = {},
): Promise<Uint8Array> {
  const { signal, maxBytes = MAX_BUNDLE_CONTENT_BYTES } = options;
  const name = bundleObjectName(digest);
  const what = `Cannot fetch bundle content ${digest}`;
  signal?.throwIfAborted();
  const js = jetstream(deps.nc, { timeout: options.timeoutMs ?? 5_000 });
  const bucket = bundleContentBucket(options.prefix ?? DEFAULT_INTENTS_PREFIX);
  let bytes: Uint8Array | null;
  try {
    // Not checked on open: a missing bucket shows in info() as a missing stream (not_found).
    const store = await abortable(new Objm(js).open(bucket, false), signal);
    const info = await abortable(store.info(name), signal);
    if (info === null || info.deleted) {
      throw new FlotillaError("not_found", `${what}: it is not stored`);
    }
    if (info.size > maxBytes) throw tooLarge(what, info.size, maxBytes);
    bytes = await abortable(store.getBlob(name), signal);
  } catch (error) {
    if (signal?.aborted && error === signal.reason) throw error;
    throw toWatcherError(error, what);
  }
  if (bytes === null) {
    throw new FlotillaError("not_found", `${what}: it is not stored`);
  }
  if (bytes.byteLength > maxBytes)
    throw tooLarge(what, bytes.byteLength, maxBytes);
  const actual = sha256Digest(bytes);
  if (actual !== digest) {
    throw new FlotillaError(
      "internal",
      `${what}: the stored bytes hash to ${actual}; refusing them`,
    );
  }
  return bytes;
}

function deferred(): {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
} {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function tooLarge(what: string, size: number, maxBytes: number): FlotillaError {
  return new FlotillaError(
    "failed_precondition",
    `${what}: it is ${String(size)} bytes, more than the ${String(maxBytes)} accepted`,
  );
}

async function abortable<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  if (signal === undefined) return promise;
  signal.throwIfAborted();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      reject(signal.reason as Error);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

/** Adds context to a nats.js error: `unavailable` for outages, `not_found` for a missing bucket. */
function toWatcherError(error: unknown, what: string): FlotillaError {
  if (error instanceof FlotillaError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  const code =
    error instanceof TimeoutError ||
    error instanceof NoRespondersError ||
    error instanceof ClosedConnectionError ||
    error instanceof ConnectionError ||
    (error instanceof JetStreamApiError && error.status === 503)
      ? "unavailable"
      : error instanceof JetStreamApiError &&
          error.code === JetStreamApiCodes.StreamNotFound
        ? "not_found"
        : "internal";
  return new FlotillaError(code, `${what}: ${detail}`, { cause: error });
}
