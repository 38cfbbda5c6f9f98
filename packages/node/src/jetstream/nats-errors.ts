/**
 * nats.js errors → FlotillaError, shared by every adapter that talks to NATS (the hub's state
 * store, audit log, intent publisher and bundle objects; the agent's intent reader).
 */
import { FlotillaError } from "@flotilla/core";
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  TimeoutError,
} from "@nats-io/transport-node";

/** True when `error`, or an error it wraps, means the server could not be reached or answer. */
export function isNatsOutage(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    if (
      e instanceof TimeoutError ||
      e instanceof NoRespondersError ||
      e instanceof ClosedConnectionError ||
      e instanceof DrainingConnectionError ||
      e instanceof ConnectionError ||
      e.name === "JetStreamNotEnabled" ||
      (e instanceof JetStreamApiError && e.status === 503)
    ) {
      return true;
    }
    e = e.cause;
  }
  return false;
}

/** JetStream's error codes for storage that is used up. */
const STORE_FULL_CODES: ReadonlySet<number> = new Set([
  // "insufficient resources": the server's JetStream store (max_file_store) is full.
  10023,
  // "resource limits exceeded for account": the account's JetStream storage is used up.
  10002,
  // "insufficient storage resources available": a stream's max_bytes cannot be reserved.
  10047,
]);
/** "stream store failed": only its text says that a stream's own limit refused a message. */
const STREAM_STORE_FAILED = 10077;

/**
 * True when `error` means a JetStream store is full: the server's or the account's storage, or a
 * stream's own limits (`maximum bytes exceeded` with discard "new"). JetStream answers some of
 * these with status 503, which must not read as an outage: retrying does not help, freeing
 * space does.
 */
export function isStoreFull(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    if (e instanceof JetStreamApiError) {
      if (STORE_FULL_CODES.has(e.code)) return true;
      if (
        e.code === STREAM_STORE_FAILED &&
        /maximum (bytes|messages) exceeded/.test(e.message)
      ) {
        return true;
      }
    }
    e = e.cause;
  }
  return false;
}

/**
 * Adds context to a nats.js error: `resource_exhausted` for a full store, `unavailable` for
 * outages, `internal` for the unexpected. FlotillaErrors and the reason of an aborted signal pass
 * through unchanged.
 */
export function toNatsFlotillaError(
  error: unknown,
  what: string,
  signal: AbortSignal | undefined,
): unknown {
  if (signal?.aborted && error === signal.reason) return error;
  if (error instanceof FlotillaError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  if (isStoreFull(error)) {
    return new FlotillaError(
      "resource_exhausted",
      `${what}: the JetStream store is full (${detail}): delete what is no longer needed, such as old bundles, or give JetStream more storage`,
      { cause: error },
    );
  }
  return new FlotillaError(
    isNatsOutage(error) ? "unavailable" : "internal",
    `${what}: ${detail}`,
    { cause: error },
  );
}

/** True when a compare-and-set write lost: the subject's last sequence was not the one expected. */
export function isWrongLastRevision(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** True when JetStream answered that the stream (or the KV bucket or object store on it) does not exist. */
export function isStreamNotFound(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    error.code === JetStreamApiCodes.StreamNotFound
  );
}
