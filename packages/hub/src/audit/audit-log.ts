/**
 * The audit log port (docs/security.md): an append-only record of every
 * state-changing admin call, with who called, why, and how it ended. The JetStream adapter keeps
 * it in a stream (it survives hub restarts); the in-memory adapter serves unit tests. Both pass one
 * contract suite.
 */
import type { AuditEvent, AuditFilter, AuditRecord } from "@flotilla/protocol";

export type {
  AuditEvent,
  AuditFilter,
  AuditOutcome,
  AuditRecord,
} from "@flotilla/protocol";

/** One page of records, oldest first; `nextPageToken` is empty on the last page. */
export interface AuditPage {
  readonly events: readonly AuditEvent[];
  readonly nextPageToken: string;
}

export interface AuditListOptions {
  /** 1..1000, default 100. */
  readonly pageSize?: number;
  /** From a previous page's `nextPageToken`; a malformed token is `invalid_argument`. */
  readonly pageToken?: string;
  readonly signal?: AbortSignal;
}

export interface AuditWatchOptions {
  readonly signal: AbortSignal;
  /** Deliver records with a larger sequence (stored ones first); absent: only new records. */
  readonly afterSequence?: number;
}

/**
 * Errors are FlotillaErrors: `invalid_argument` for a bad filter or page token, `unavailable`
 * while the backend is unreachable or the log is not started.
 */
export interface AuditLog extends AsyncDisposable {
  start(options?: { readonly signal?: AbortSignal }): Promise<void>;
  stop(): Promise<void>;
  /** Stores a record; resolves with its sequence once it is durable. */
  append(record: AuditRecord): Promise<AuditEvent>;
  list(filter: AuditFilter, options?: AuditListOptions): Promise<AuditPage>;
  /**
   * Matching records in sequence order until `signal` aborts or the log stops (the iteration then
   * ends without an error). The watch is set up, and a bad filter or a stopped log reported, when
   * iteration begins.
   */
  watch(
    filter: AuditFilter,
    options: AuditWatchOptions,
  ): AsyncIterable<AuditEvent>;
}
