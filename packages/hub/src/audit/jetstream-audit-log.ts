import { FlotillaError, compact } from "@flotilla/core";
import {
  DeliverPolicy,
  jetstream,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  abortable,
  checkBucketPrefix,
  createConnectionWatch,
  toNatsFlotillaError,
  type ConnectionWatch,
} from "@flotilla/node";
import { DEFAULT_BUCKET_PREFIX } from "../store/keys.js";
import { componentLogger, createLogger, type Logger } from "../logger.js";
import type {
  AuditEvent,
  AuditFilter,
  AuditListOptions,
  AuditLog,
  AuditPage,
  AuditRecord,
  AuditWatchOptions,
} from "./audit-log.js";
import {
  auditStreamName,
  auditSubject,
  DEFAULT_AUDIT_MAX_AGE_MS,
  DEFAULT_AUDIT_MAX_BYTES,
  decodeAuditMessage,
  ensureAuditStream,
  type AuditStreamSettings,
} from "./audit-stream.js";
import {
  checkAuditWatch,
  matchesAuditFilter,
  parseAuditQuery,
} from "./audit-query.js";
import { readAuditPage } from "./audit-page.js";
import {
  encodeAuditRecord,
  validAuditRecord,
  type AuditSkipReason,
} from "./audit-record.js";

/** What {@link createJetStreamAuditLog} needs: a connection it uses but does not close. */
export interface JetStreamAuditLogDeps {
  /** Connect with `maxReconnectAttempts: -1` so that the log outlives NATS restarts. */
  readonly nc: NatsConnection;
  /** Where skipped (foreign or damaged) records are reported; default a root logger at info. */
  readonly log?: Logger;
  /** Called for every stored message a list or watch skipped (metrics). */
  readonly onSkipped?: (reason: AuditSkipReason) => void;
}

/** Options of {@link createJetStreamAuditLog}. */
export interface JetStreamAuditLogOptions {
  /** The hub's state prefix; the stream is `<prefix>-audit`; default `flotilla`. */
  prefix?: string;
  /** Records older than this are dropped by the server; default 90 days. */
  maxAgeMs?: number;
  /** The oldest records are dropped past this size; default 1 GiB. */
  maxBytes?: number;
  /** Stream replicas when created (1 on a single server, 3 on an R3 cluster); default 1. */
  replicas?: number;
  /** How long one JetStream request may take; default 5000 ms. */
  timeoutMs?: number;
  /**
   * Records one `list` call reads at most (matching or not). A selective filter over a long log
   * then returns a short page with a `nextPageToken` instead of reading everything; default 10000.
   */
  maxScan?: number;
}

/**
 * The AuditLog on a JetStream stream (file storage, limits retention by age and size, deletes and
 * purges denied). `sequence` is the stream sequence; `list` reads a sequence range through a
 * short-lived ordered consumer and `watch` follows one, so both resume across NATS restarts
 * without gaps or repeats. The stream is created on `start()` if missing; an existing one is
 * used as it is. While the connection is down `append` and `list` fail at once with
 * `unavailable`; watches wait and resume.
 */
export function createJetStreamAuditLog(
  deps: JetStreamAuditLogDeps,
  options: JetStreamAuditLogOptions = {},
): AuditLog {
  const prefix = options.prefix ?? DEFAULT_BUCKET_PREFIX;
  checkBucketPrefix(prefix, "Cannot create the JetStream audit log", "prefix");
  const config: Config = {
    stream: auditStreamName(prefix),
    subject: auditSubject(prefix),
    maxAgeMs: options.maxAgeMs ?? DEFAULT_AUDIT_MAX_AGE_MS,
    maxBytes: options.maxBytes ?? DEFAULT_AUDIT_MAX_BYTES,
    replicas: options.replicas ?? 1,
    timeoutMs: options.timeoutMs ?? 5_000,
    maxScan: options.maxScan ?? 10_000,
  };
  for (const key of [
    "maxAgeMs",
    "maxBytes",
    "replicas",
    "timeoutMs",
    "maxScan",
  ] as const) {
    if (!Number.isSafeInteger(config[key]) || config[key] < 1) {
      throw new FlotillaError(
        "invalid_argument",
        `Cannot create the JetStream audit log: ${key} must be a positive integer, not ${String(config[key])}`,
      );
    }
  }
  const log = componentLogger(deps.log ?? createLogger("info"), "audit-log");
  return new JetStreamAuditLog(deps.nc, log, config, deps.onSkipped);
}

interface Config extends AuditStreamSettings {
  readonly timeoutMs: number;
  readonly maxScan: number;
}

class JetStreamAuditLog implements AuditLog {
  readonly #js: JetStreamClient;
  readonly #log: Logger;
  readonly #config: Config;
  #jsm: JetStreamManager | undefined;
  readonly #connection: ConnectionWatch;
  readonly #watches = new Set<() => void>();
  readonly #onSkipped: ((reason: AuditSkipReason) => void) | undefined;

  constructor(
    nc: NatsConnection,
    log: Logger,
    config: Config,
    onSkipped: ((reason: AuditSkipReason) => void) | undefined,
  ) {
    this.#log = log;
    this.#config = config;
    this.#onSkipped = onSkipped;
    this.#js = jetstream(nc, { timeout: config.timeoutMs });
    this.#connection = createConnectionWatch(nc);
  }

  async start(options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    if (this.#jsm !== undefined) return;
    const what = "Cannot start the JetStream audit log";
    this.#connection.start();
    try {
      const jsm = await abortable(this.#js.jetstreamManager(), options.signal);
      const state = await abortable(
        ensureAuditStream(jsm, this.#config, what),
        options.signal,
      );
      if (state.maxBytes !== this.#config.maxBytes) {
        this.#log.warn(
          {
            stream: this.#config.stream,
            maxBytes: state.maxBytes,
            configuredMaxBytes: this.#config.maxBytes,
          },
          "The existing audit stream keeps its own size limit",
        );
      }
      this.#jsm = jsm;
    } catch (error) {
      this.#connection.stop();
      throw toNatsFlotillaError(error, what, options.signal);
    }
  }

  stop(): Promise<void> {
    this.#jsm = undefined;
    this.#connection.stop();
    for (const stopWatch of this.#watches) stopWatch();
    this.#watches.clear();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  async append(record: AuditRecord): Promise<AuditEvent> {
    const valid = validAuditRecord(record);
    const what = `Cannot append to the audit log (${valid.method} by "${valid.actor}")`;
    this.#ready(what);
    try {
      const ack = await this.#js.publish(
        this.#config.subject,
        encodeAuditRecord(valid),
        {
          expect: { streamName: this.#config.stream },
          timeout: this.#config.timeoutMs,
        },
      );
      return { ...valid, sequence: ack.seq };
    } catch (error) {
      throw toNatsFlotillaError(error, what, undefined);
    }
  }

  async list(
    filter: AuditFilter,
    options: AuditListOptions = {},
  ): Promise<AuditPage> {
    const { signal } = options;
    signal?.throwIfAborted();
    const query = parseAuditQuery(filter, options);
    const what = "Cannot list the audit log";
    const jsm = this.#ready(what);
    try {
      return await abortable(
        (async (): Promise<AuditPage> => {
          const { state } = await jsm.streams.info(this.#config.stream);
          const start = Math.max(query.startSequence, state.first_seq);
          if (state.messages === 0 || start > state.last_seq) {
            return { events: [], nextPageToken: "" };
          }
          const consumer = await this.#orderedConsumer(start);
          try {
            return await readAuditPage(
              consumer,
              { ...query, lastSequence: state.last_seq },
              {
                decode: (m) => this.#decode(m),
                idleMs: this.#config.timeoutMs,
                maxScan: this.#config.maxScan,
                ...compact({ signal }),
              },
            );
          } finally {
            // Ordered consumers are ephemeral; delete at once rather than wait for the server to.
            await consumer.delete().catch(() => undefined);
          }
        })(),
        signal,
      );
    } catch (error) {
      throw toNatsFlotillaError(error, what, signal);
    }
  }

  watch(
    filter: AuditFilter,
    options: AuditWatchOptions,
  ): AsyncIterable<AuditEvent> {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the generator reads the log
    const log = this;
    const { signal, afterSequence } = options;
    return (async function* (): AsyncGenerator<AuditEvent> {
      if (signal.aborted) return;
      checkAuditWatch(filter, afterSequence);
      const what = "Cannot watch the audit log";
      const jsm = log.#ready(what);
      let consumer: Consumer;
      try {
        // Absent afterSequence: "new" means after the last record now. A start sequence (rather
        // than DeliverPolicy.New) keeps a consumer recreated after an outage from replaying.
        const after =
          afterSequence ??
          (await jsm.streams.info(log.#config.stream)).state.last_seq;
        consumer = await log.#orderedConsumer(after + 1);
      } catch (error) {
        throw toNatsFlotillaError(error, what, undefined);
      }
      yield* log.#follow(consumer, filter, signal);
    })();
  }

  /** Yields matching records from `consumer` until `signal` aborts or the log stops. */
  async *#follow(
    consumer: Consumer,
    filter: AuditFilter,
    signal: AbortSignal,
  ): AsyncGenerator<AuditEvent> {
    let messages: ConsumerMessages | undefined;
    const stopWatch = (): void => {
      messages?.stop();
    };
    this.#watches.add(stopWatch);
    signal.addEventListener("abort", stopWatch, { once: true });
    try {
      if (signal.aborted || !this.#watches.has(stopWatch)) return;
      messages = await consumer.consume({ max_messages: 100 });
      // Stopped or aborted while the consumer was being set up: nothing would stop it later.
      if (signal.aborted || !this.#watches.has(stopWatch)) return;
      for await (const m of messages) {
        // Messages already buffered are still delivered after stop(): cut them off here.
        if (signal.aborted || !this.#watches.has(stopWatch)) return;
        const event = this.#decode(m);
        if (event !== undefined && matchesAuditFilter(event, filter)) {
          yield event;
        }
      }
    } catch (error) {
      if (signal.aborted || !this.#watches.has(stopWatch)) return;
      throw toNatsFlotillaError(error, "Cannot watch the audit log", undefined);
    } finally {
      messages?.stop();
      this.#watches.delete(stopWatch);
      signal.removeEventListener("abort", stopWatch);
      await consumer.delete().catch(() => undefined);
    }
  }

  /**
   * Reads every message of the stream, not only those on the audit subject: a push consumer
   * that delivers onto the subject stores messages under their own subjects, and a read filtered
   * by subject would wait forever for the stream's last sequence when one of them is last.
   */
  #orderedConsumer(startSequence: number): Promise<Consumer> {
    return this.#js.consumers.get(this.#config.stream, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(1, startSequence),
    });
  }

  /**
   * The event a message holds, or undefined when it is not a valid record: then it is logged
   * with its sequence, counted, and skipped, so that no message can stop a list or a watch.
   */
  #decode(m: JsMsg): AuditEvent | undefined {
    const decoded = decodeAuditMessage(m, this.#config.subject);
    if (decoded.type === "event") return decoded.event;
    this.#log.warn(
      {
        stream: this.#config.stream,
        sequence: m.seq,
        reason: decoded.reason,
        detail: decoded.detail,
      },
      "Skipped an audit record that is not valid",
    );
    this.#onSkipped?.(decoded.reason);
    return undefined;
  }

  /** The manager while started and connected; throws `unavailable` otherwise. */
  #ready(what: string): JetStreamManager {
    if (this.#jsm === undefined) {
      throw new FlotillaError(
        "unavailable",
        `${what}: the audit log is not started`,
      );
    }
    this.#connection.check(what);
    return this.#jsm;
  }
}
