/**
 * The size bound of agent messages. The gRPC server's message limit is the admin API's
 * (MAX_REQUEST_BYTES), but an agent message may be at most MAX_AGENT_MESSAGE_BYTES: a larger one
 * is not decoded, and the stream is refused with INVALID_ARGUMENT naming its size.
 */
import { FlotillaError } from "@flotilla/core";
import {
  loadProtocol,
  MAX_AGENT_MESSAGE_BYTES,
  type wire,
} from "@flotilla/protocol";
import type { ServiceDefinition } from "@grpc/grpc-js";

/** Marks a message too large to decode: the stream is refused with its size. */
const OVERSIZED = Symbol("oversized");

interface Oversized {
  readonly [OVERSIZED]: number;
}

/** AgentService's definition with the size check before decoding. */
export function agentServiceDefinition(): ServiceDefinition {
  const base = loadProtocol().agentService;
  const connect = base.Connect;
  const decode = connect.requestDeserialize;
  return {
    ...base,
    Connect: {
      ...connect,
      requestDeserialize: (bytes: Buffer) =>
        bytes.byteLength > MAX_AGENT_MESSAGE_BYTES
          ? ({ [OVERSIZED]: bytes.byteLength } satisfies Oversized)
          : decode(bytes),
    },
  };
}

/** Throws the error that refuses the stream when `message` was too large to decode. */
export function checkMessageSize(message: wire.AgentMessage__Output): void {
  const oversized = (message as Partial<Oversized>)[OVERSIZED];
  if (oversized !== undefined) {
    throw new FlotillaError(
      "invalid_argument",
      `An agent message of ${String(oversized)} bytes is larger than the ${String(MAX_AGENT_MESSAGE_BYTES)} allowed`,
    );
  }
}
