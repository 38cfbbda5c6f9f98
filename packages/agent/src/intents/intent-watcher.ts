/**
 * The agent's view of its cluster's intent (docs/architecture.md).
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
import { FlotillaError, formatProblem, showValue } from "@flotilla/core";
import {
  jetstreamManager,
  RepublishHeaders,
  type JetStreamManager,
} from "@nats-io/jetstream";
import type {
  Msg,
  NatsConnection,
  Status,
  Subscription,
} from "@nats-io/transport-node";
import {
  DEFAULT_INTENTS_PREFIX,
  intentKey,
  intentKvSubject,
  intentsStream,
  intentSubject,
  MAX_INTENT_DOCUMENT_BYTES,
  parseIntentDocument,
} from "@flotilla/protocol";
import {
  isConnected,
  unwatchConnection,
  watchConnection,
} from "./connection-status.js";
import type {
  IntentEvent,
  IntentWatcher,
  IntentWatcherDeps,
  IntentWatcherOptions,
} from "./intent-watcher-api.js";
import { abortable, backoffCeilingMs, halfJitter } from "@flotilla/node";
import { deferred, toNatsError } from "./nats-helpers.js";

export type {
  IntentEvent,
  IntentWatcher,
  IntentWatcherDeps,
  IntentWatcherOptions,
};

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
        throw toNatsError(error, this.#what("start"));
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

  stop(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
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
    // A read in flight is not waited for: a JetStream request cannot be cancelled and may run to
    // its timeout, and whatever it returns is dropped now that the watcher is stopped.
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  async refresh(
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<void> {
    if (!this.#started || this.#stopped) return;
    this.#requestRead();
    await abortable(this.#reading ?? Promise.resolve(), options.signal);
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
      this.#report(toNatsError(error, this.#what("follow")));
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
        this.#report(toNatsError(error, this.#what("read")));
        // While disconnected, the reconnect will ask for a read; retrying now would only time out.
        if (!isConnected(this.#nc)) return;
        const { retryMinMs = 100, retryMaxMs = 5_000 } = this.#options;
        const ceilingMs = backoffCeilingMs(failures++, retryMinMs, retryMaxMs);
        try {
          await sleep(halfJitter(ceilingMs, this.#random), undefined, {
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
