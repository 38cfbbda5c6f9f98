/**
 * Reading one page of the audit stream through a consumer positioned at the page's first
 * sequence: messages are decoded one by one (a message that is not a record is skipped by the
 * decoder and does not count toward the page), until the page is full and one more match is
 * seen, the range ends, or `maxScan` messages were read.
 */
import { FlotillaError } from "@flotilla/core";
import type { Consumer, JsMsg } from "@nats-io/jetstream";
import type { AuditEvent, AuditPage } from "./audit-log.js";
import {
  encodeAuditPageToken,
  matchesAuditFilter,
  type AuditQuery,
} from "./audit-query.js";

/** Which messages a page reads: from the consumer's first to `lastSequence`. */
export interface AuditPageRange extends AuditQuery {
  readonly lastSequence: number;
}

/** How a page is read. */
export interface AuditPageReading {
  /** The event a message holds, or undefined when it is skipped. */
  readonly decode: (m: JsMsg) => AuditEvent | undefined;
  /** No message for this long means the connection or the consumer is gone. */
  readonly idleMs: number;
  /** Messages one page reads at most (matching or not). */
  readonly maxScan: number;
  readonly signal?: AbortSignal;
}

/** Reads records from `consumer` up to `range.lastSequence` until a page is full. */
export async function readAuditPage(
  consumer: Consumer,
  range: AuditPageRange,
  reading: AuditPageReading,
): Promise<AuditPage> {
  const { signal } = reading;
  const messages = await consumer.consume({
    max_messages: Math.min(256, range.pageSize + 1),
  });
  const stop = (): void => {
    messages.stop();
  };
  const idle = setTimeout(stop, reading.idleMs);
  signal?.addEventListener("abort", stop, { once: true });
  const events: AuditEvent[] = [];
  let scanned = 0;
  try {
    for await (const m of messages) {
      idle.refresh();
      scanned++;
      const event = reading.decode(m);
      if (event !== undefined && matchesAuditFilter(event, range.filter)) {
        if (events.length === range.pageSize) {
          return { events, nextPageToken: encodeAuditPageToken(m.seq) };
        }
        events.push(event);
      }
      // Nothing pending: the messages up to lastSequence are gone (expired meanwhile).
      if (m.seq >= range.lastSequence || m.info.pending === 0) {
        return { events, nextPageToken: "" };
      }
      if (scanned >= reading.maxScan) {
        return { events, nextPageToken: encodeAuditPageToken(m.seq + 1) };
      }
    }
  } finally {
    clearTimeout(idle);
    signal?.removeEventListener("abort", stop);
    messages.stop();
  }
  signal?.throwIfAborted();
  throw new FlotillaError(
    "unavailable",
    `the read stopped after ${String(scanned)} records, before sequence ${String(range.lastSequence)}`,
  );
}
