/** What an adapter needs of the NATS server it is connected to, checked before it starts. */
import { FlotillaError } from "@flotilla/core";
import type { NatsConnection } from "@nats-io/transport-node";

/**
 * Throws `failed_precondition` when the server's max_payload is less than `bytes`, the largest
 * message the adapter may send; `needed` says what those bytes are ("the 1024 bytes an intent
 * may take"). A connection that has not told its max_payload passes.
 */
export function checkMaxPayload(
  nc: NatsConnection,
  bytes: number,
  what: string,
  needed: string,
): void {
  const maxPayload = nc.info?.max_payload;
  if (maxPayload !== undefined && maxPayload < bytes) {
    throw new FlotillaError(
      "failed_precondition",
      `${what}: the server's max_payload (${String(maxPayload)} bytes) is less than ${needed}`,
    );
  }
}
