/**
 * One agent's stream on the hub: the session its hello opened, the deadline for that hello, the
 * order its messages are handled in (one at a time), and how it ends: refused (a StreamError, then
 * the same gRPC status) or finished (the agent ended it, or it broke). It ends once.
 */
import { FlotillaError } from "@flotilla/core";
import { streamErrorToWire, toGrpcStatus, type wire } from "@flotilla/protocol";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { SessionHandle } from "../clusters/cluster-registry.js";

export type AgentCall = ServerDuplexStream<
  wire.AgentMessage__Output,
  wire.HubMessage
>;

export interface AgentStreamDeps {
  readonly logger: Logger;
  /** How long the stream may take to say hello. */
  readonly helloTimeoutMs: number;
  readonly onSessionRefused?: ((code: string) => void) | undefined;
  /** The stream ended, with the session it had opened, if any. Called once. */
  readonly onFinish: (session: SessionHandle | undefined) => void;
}

export interface AgentStream {
  readonly log: Logger;
  /** The peer's address, or "unknown" once the stream is gone. */
  peer(): string;
  /** The session hello opened; undefined before. */
  session(): SessionHandle | undefined;
  closed(): boolean;
  /** Hello opened `session`: the hello deadline is met. */
  opened(session: SessionHandle): void;
  /** Writes to the agent, unless the stream has ended. */
  send(message: wire.HubMessage): void;
  /** Ends the stream with `error` (StreamError, then the gRPC status). */
  refuse(error: FlotillaError): void;
  /**
   * Handles the agent's messages in order, each after the previous one finished; a message that
   * fails refuses the stream. Listens to the stream's end and errors too.
   */
  listen(handle: (message: wire.AgentMessage__Output) => Promise<void>): void;
}

export function createAgentStream(
  call: AgentCall,
  deps: AgentStreamDeps,
): AgentStream {
  let session: SessionHandle | undefined;
  let closed = false;
  let chain: Promise<void> = Promise.resolve();
  const log = deps.logger.child({ peer: safePeer(call) });

  const finish = (): void => {
    if (closed) return;
    closed = true;
    clearTimeout(helloTimer);
    deps.onFinish(session);
  };

  const refuse = (error: FlotillaError): void => {
    if (closed) return;
    deps.onSessionRefused?.(error.code);
    log.info(
      { cluster: session?.cluster, code: error.code, err: error.message },
      "agent stream refused",
    );
    try {
      call.write({ error: streamErrorToWire(error) });
      call.emit("error", toGrpcStatus(error));
    } catch {
      // The stream is already gone.
    }
    finish();
  };

  const helloTimer = setTimeout(() => {
    if (session === undefined) {
      refuse(
        new FlotillaError(
          "invalid_argument",
          `No hello within ${String(deps.helloTimeoutMs)} ms: an agent's first message must be hello`,
        ),
      );
    }
  }, deps.helloTimeoutMs);

  return {
    log,
    peer: () => safePeer(call),
    session: () => session,
    closed: () => closed,
    opened(opened) {
      session = opened;
      clearTimeout(helloTimer);
    },
    send(message) {
      if (!closed) call.write(message);
    },
    refuse,
    listen(handle) {
      call.on("data", (message: wire.AgentMessage__Output) => {
        chain = chain.then(async () => {
          if (closed) return;
          try {
            await handle(message);
          } catch (error) {
            const flotilla =
              error instanceof FlotillaError
                ? error
                : new FlotillaError(
                    "internal",
                    "The hub could not process the message",
                    { cause: error },
                  );
            if (flotilla.code === "internal")
              log.error({ err: error }, "agent message failed");
            refuse(flotilla);
          }
        });
      });
      call.on("end", () => {
        chain = chain.then(() => {
          if (!closed) {
            try {
              call.end();
            } catch {
              // already ended
            }
          }
          finish();
        });
      });
      call.on("error", () => {
        finish();
      });
      call.on("cancelled", () => {
        finish();
      });
    },
  };
}

function safePeer(call: AgentCall): string {
  try {
    return call.getPeer();
  } catch {
    return "unknown";
  }
}
