/**
 * The AdminService's server-streaming calls in progress (WatchUpdateRun, WatchAuditEvents), so that
 * a stopping hub can end them. A watch never ends by itself, and the gRPC server's graceful
 * shutdown waits for every call: without this a single `flotilla audit watch` holds a stop until
 * its deadline. Watchers get UNAVAILABLE, which the CLI takes as "watch again elsewhere".
 */
import { status as grpcStatus, type ServerWritableStream } from "@grpc/grpc-js";
import { loadProtocol, type wire } from "@flotilla/protocol";

type Handlers = wire.AdminServiceHandlers;
type AnyStream = ServerWritableStream<unknown, unknown>;

/** Tracks the watches of wrapped handlers. */
export interface AdminStreams {
  /** `handlers` with every server-streaming one tracked. */
  wrap(handlers: Handlers): Handlers;
  /** Ends every watch still open with UNAVAILABLE. */
  endAll(): void;
}

export function createAdminStreams(): AdminStreams {
  const open = new Set<AnyStream>();
  return {
    wrap(handlers) {
      const service = loadProtocol().adminService as unknown as Record<
        string,
        { readonly responseStream: boolean }
      >;
      const wrapped: Record<string, unknown> = {};
      for (const [method, handler] of Object.entries(handlers) as [
        string,
        unknown,
      ][]) {
        // Unary and client-streaming calls answer once and end on their own.
        if (
          typeof handler !== "function" ||
          service[method]?.responseStream !== true
        ) {
          wrapped[method] = handler;
          continue;
        }
        const original = handler as (call: AnyStream) => void;
        wrapped[method] = (call: AnyStream) => {
          open.add(call);
          const forget = (): void => {
            open.delete(call);
          };
          call.once("close", forget);
          call.once("cancelled", forget);
          original(call);
        };
      }
      return wrapped as unknown as Handlers;
    },

    endAll() {
      for (const call of [...open]) {
        if (call.writableEnded) continue;
        call.emit("error", {
          code: grpcStatus.UNAVAILABLE,
          details: "The hub is shutting down",
        });
      }
      open.clear();
    },
  };
}
