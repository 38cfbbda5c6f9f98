import { FlotillaError } from "@flotilla/core";
import { JetStreamApiError } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  TimeoutError,
} from "@nats-io/transport-node";

/**
 * nats.js errors → FlotillaError, shared by every hub adapter that talks to NATS (state store,
 * intent publisher).
 */

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

/**
 * Adds context to a nats.js error: `unavailable` for outages, `internal` for the unexpected.
 * FlotillaErrors and the reason of an aborted signal pass through unchanged.
 */
export function toNatsFlotillaError(
  error: unknown,
  what: string,
  signal: AbortSignal | undefined,
): unknown {
  if (signal?.aborted && error === signal.reason) return error;
  if (error instanceof FlotillaError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new FlotillaError(
    isNatsOutage(error) ? "unavailable" : "internal",
    `${what}: ${detail}`,
    { cause: error },
  );
}
