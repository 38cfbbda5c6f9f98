/**
 * An audit record must not be lost because the audit stream cannot take it (its limits, a full
 * JetStream store, NATS down): the hub wraps its audit log so that a record whose append fails
 * is written whole to the hub's log instead, at error, under `audit`, and counted. The append
 * still rejects, so that callers know; the admin call it records answers its own outcome.
 */
import { FlotillaError, type FlotillaErrorCode } from "@flotilla/core";
import type { Logger } from "../logger.js";
import type { AuditLog } from "./audit-log.js";

/** What {@link withAuditFallback} writes to and counts with. */
export interface AuditFallbackDeps {
  /** The component logger the records go to. */
  readonly log: Logger;
  /** Called for every record that was not stored, with the append's error code (metrics). */
  readonly onWriteFailed?: (code: FlotillaErrorCode) => void;
}

/** `audit`, except that a record it fails to store goes to `deps.log` instead. */
export function withAuditFallback(
  audit: AuditLog,
  deps: AuditFallbackDeps,
): AuditLog {
  return {
    start: (options) => audit.start(options),
    stop: () => audit.stop(),
    list: (filter, options) => audit.list(filter, options),
    watch: (filter, options) => audit.watch(filter, options),
    [Symbol.asyncDispose]: () => audit[Symbol.asyncDispose](),
    async append(record) {
      try {
        return await audit.append(record);
      } catch (error) {
        deps.log.error(
          { err: error, audit: record },
          "Audit record not stored: written to the log instead",
        );
        deps.onWriteFailed?.(FlotillaError.from(error).code);
        throw error;
      }
    },
  };
}
