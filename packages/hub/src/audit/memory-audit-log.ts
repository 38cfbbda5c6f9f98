import { FlotillaError } from "@flotilla/core";
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
  checkAuditWatch,
  encodeAuditPageToken,
  matchesAuditFilter,
  parseAuditQuery,
} from "./audit-query.js";
import { validAuditRecord } from "./audit-record.js";
import { AsyncQueue } from "@flotilla/node";

/**
 * An AuditLog in process memory, for unit tests and the hub's offline tools. Records are kept
 * (and validated) as the JetStream adapter keeps them, and survive `stop()`/`start()`; they do
 * not survive the process.
 */
export function createMemoryAuditLog(): AuditLog {
  return new MemoryAuditLog();
}

class MemoryAuditLog implements AuditLog {
  readonly #events: AuditEvent[] = [];
  readonly #watchers = new Set<AsyncQueue<AuditEvent>>();
  #started = false;

  start(options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    options.signal?.throwIfAborted();
    this.#started = true;
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.#started = false;
    for (const queue of this.#watchers) queue.end();
    this.#watchers.clear();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  append(record: AuditRecord): Promise<AuditEvent> {
    return settle(() => {
      this.#checkStarted("append to");
      const valid = validAuditRecord(record);
      const event: AuditEvent = {
        ...valid,
        sequence: this.#events.length + 1,
      };
      this.#events.push(event);
      for (const queue of this.#watchers) queue.push(event);
      return event;
    });
  }

  list(
    filter: AuditFilter,
    options: AuditListOptions = {},
  ): Promise<AuditPage> {
    return settle(() => {
      options.signal?.throwIfAborted();
      const query = parseAuditQuery(filter, options);
      this.#checkStarted("list");
      const events: AuditEvent[] = [];
      for (let i = query.startSequence - 1; i < this.#events.length; i++) {
        const event = this.#events[i];
        if (event === undefined || !matchesAuditFilter(event, filter)) continue;
        if (events.length === query.pageSize) {
          return {
            events,
            nextPageToken: encodeAuditPageToken(event.sequence),
          };
        }
        events.push(event);
      }
      return { events, nextPageToken: "" };
    });
  }

  watch(
    filter: AuditFilter,
    options: AuditWatchOptions,
  ): AsyncIterable<AuditEvent> {
    const { signal, afterSequence } = options;
    const watchers = this.#watchers;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the generator reads the log
    const log = this;
    return (async function* (): AsyncGenerator<AuditEvent> {
      if (signal.aborted) return;
      checkAuditWatch(filter, afterSequence);
      log.#checkStarted("watch");
      const queue = new AsyncQueue<AuditEvent>();
      // Stored records and the subscription are taken in the same tick: none is missed or doubled.
      const stored = log.#events;
      for (const event of stored.slice(afterSequence ?? stored.length)) {
        queue.push(event);
      }
      watchers.add(queue);
      const end = (): void => {
        queue.end();
      };
      signal.addEventListener("abort", end, { once: true });
      try {
        for (;;) {
          const event = await queue.next();
          if (event === undefined) return;
          if (matchesAuditFilter(event, filter)) yield event;
        }
      } finally {
        watchers.delete(queue);
        signal.removeEventListener("abort", end);
      }
    })();
  }

  #checkStarted(action: string): void {
    if (!this.#started) {
      throw new FlotillaError(
        "unavailable",
        `Cannot ${action} the audit log: it is not started`,
      );
    }
  }
}

/** The promise of `run()`'s result: a throw becomes a rejection, as in an async method. */
function settle<T>(run: () => T): Promise<T> {
  return new Promise((resolve) => {
    resolve(run());
  });
}
