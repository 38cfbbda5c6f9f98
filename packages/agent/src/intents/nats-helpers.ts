/**
 * Small helpers the intent watcher and the bundle-content reader share: nats.js errors turned into
 * FlotillaErrors with context, and a deferred.
 */
import { FlotillaError } from "@flotilla/core";
import { isStreamNotFound } from "@flotilla/node";
import { JetStreamApiError } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  ConnectionError,
  NoRespondersError,
  TimeoutError,
} from "@nats-io/transport-node";

/** Adds context to a nats.js error: `unavailable` for outages, `not_found` for a missing bucket. */
export function toNatsError(error: unknown, what: string): FlotillaError {
  if (error instanceof FlotillaError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  const code =
    error instanceof TimeoutError ||
    error instanceof NoRespondersError ||
    error instanceof ClosedConnectionError ||
    error instanceof ConnectionError ||
    (error instanceof JetStreamApiError && error.status === 503)
      ? "unavailable"
      : isStreamNotFound(error)
        ? "not_found"
        : "internal";
  return new FlotillaError(code, `${what}: ${detail}`, { cause: error });
}

/** A promise with its resolve and reject functions, for "resolve once, later". */
export interface Deferred {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** Creates a {@link Deferred}. */
export function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
