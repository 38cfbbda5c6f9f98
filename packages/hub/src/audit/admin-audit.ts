/**
 * The AdminService's audit methods: ListAuditEvents (pages, oldest first) and WatchAuditEvents
 * (a server stream: stored events after `afterSequence`, then new ones, until the client
 * cancels). Bad filters and page tokens are refused with INVALID_ARGUMENT naming the field
 * (`filter.sinceMs`, `filter.outcomes[0]`, `pageSize`, `pageToken`, `afterSequence`).
 */
import { FlotillaError, type Problem, compact } from "@flotilla/core";
import {
  auditEventToWire,
  auditFilterFromWire,
  toGrpcStatus,
  wireUint64,
  type wire,
} from "@flotilla/protocol";
import type { ServerWritableStream } from "@grpc/grpc-js";
import { callContext, unary } from "../grpc/unary.js";
import type { AuditLog } from "./audit-log.js";
import { auditQueryProblems, auditWatchProblems } from "./audit-query.js";

/** The audit handlers, to spread into the AdminService handler map. */
export type AuditHandlers = Pick<
  wire.AdminServiceHandlers,
  "ListAuditEvents" | "WatchAuditEvents"
>;

/** The ListAuditEvents and WatchAuditEvents handlers, reading `log`. */
export function auditHandlers(log: AuditLog): AuditHandlers {
  return {
    ListAuditEvents: unary<
      wire.ListAuditEventsRequest__Output,
      wire.ListAuditEventsResponse
    >(async (request, context) => {
      const problems: Problem[] = [];
      const filter = auditFilterFromWire(request.filter, "filter", problems);
      const options = {
        // proto3: 0 means "not set".
        ...(request.pageSize === 0 ? {} : { pageSize: request.pageSize }),
        pageToken: request.pageToken,
      };
      problems.push(...auditQueryProblems(filter, options));
      if (problems.length > 0) {
        throw FlotillaError.invalid("ListAuditEvents request", problems);
      }
      const page = await log.list(filter, {
        ...options,
        signal: context.signal,
      });
      return {
        events: page.events.map(auditEventToWire),
        nextPageToken: page.nextPageToken,
      };
    }),
    WatchAuditEvents: (call) => {
      void streamAuditEvents(log, call);
    },
  };
}

type WatchCall = ServerWritableStream<
  wire.WatchAuditEventsRequest__Output,
  wire.WatchAuditEventsResponse
>;

/**
 * Writes matching events to `call` (waiting for 'drain' when grpc-js buffers) until the client
 * cancels. Should the log stop first (the hub is shutting down), the call ends with UNAVAILABLE
 * so that the client knows to watch again elsewhere rather than take it as the end of the log.
 */
async function streamAuditEvents(
  log: AuditLog,
  call: WatchCall,
): Promise<void> {
  const { signal } = callContext(call);
  try {
    const problems: Problem[] = [];
    const { request } = call;
    const filter = auditFilterFromWire(request.filter, "filter", problems);
    const afterSequence = wireUint64(
      request.afterSequence,
      "afterSequence",
      problems,
    );
    problems.push(...auditWatchProblems(filter, afterSequence));
    if (problems.length > 0) {
      throw FlotillaError.invalid("WatchAuditEvents request", problems);
    }
    const events = log.watch(filter, {
      signal,
      ...compact({ afterSequence }),
    });
    for await (const event of events) {
      if (!call.write({ event: auditEventToWire(event) })) {
        await drained(call, signal);
      }
    }
    if (signal.aborted) return;
    call.emit(
      "error",
      toGrpcStatus(
        new FlotillaError("unavailable", "The audit log stopped: watch again"),
      ),
    );
  } catch (error) {
    if (signal.aborted) return;
    call.emit("error", toGrpcStatus(error));
  }
}

/** Resolves on 'drain', or at once when `signal` aborts (the call is gone then). */
function drained(call: WatchCall, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      call.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    call.once("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}
