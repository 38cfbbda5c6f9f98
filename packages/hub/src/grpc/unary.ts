/**
 * How AdminService handlers are written: a handler is `async (request, context) => response`; it
 * throws FlotillaErrors for refusals. `unary` adapts it to grpc-js (errors become gRPC statuses
 * with their field problems); `audited` records a state-changing call in the audit log, whatever
 * its outcome.
 */
import { FlotillaError } from "@flotilla/core";
import { toGrpcStatus } from "@flotilla/protocol";
import type { handleUnaryCall, Metadata, ServerUnaryCall } from "@grpc/grpc-js";
import type { AuditLog, AuditOutcome } from "../audit/audit-log.js";
import { callIdentity } from "../security/call-identity.js";

/** Header naming the caller in insecure development mode (no admin authentication): `x-flotilla-actor`. */
export const ACTOR_HEADER = "x-flotilla-actor";

/** Who is calling, and a signal that aborts when the call is cancelled. */
export interface CallContext {
  readonly actor: string;
  readonly role: string;
  readonly signal: AbortSignal;
}

/** A handler; it may answer synchronously, and refuses by throwing. */
export type UnaryHandler<Req, Res> = (
  request: Req,
  context: CallContext,
) => Res | Promise<Res>;

/** The actor `x-flotilla-actor` names, else `anonymous@PEER` (insecure development mode). */
export function headerActor(metadata: Metadata, peer: string): string {
  const [value] = metadata.get(ACTOR_HEADER);
  if (typeof value === "string" && /^[\w.@:/-]{1,128}$/.test(value)) {
    return value;
  }
  return peer === "" ? "anonymous" : `anonymous@${peer}`;
}

/**
 * The context of a gRPC call: the caller admin authentication attached to it
 * (security/admin-auth.ts), else (a hub without it) the actor from {@link ACTOR_HEADER} or the
 * peer address, as admin.
 */
export function callContext(
  call: Pick<ServerUnaryCall<unknown, unknown>, "metadata" | "getPeer" | "on">,
): CallContext {
  const controller = new AbortController();
  call.on("cancelled", () => {
    controller.abort(new FlotillaError("unavailable", "Call cancelled"));
  });
  let peer: string;
  try {
    peer = call.getPeer();
  } catch {
    peer = "";
  }
  const who = callIdentity(call);
  return {
    actor: who?.actor ?? headerActor(call.metadata, peer),
    role: who?.role ?? "admin",
    signal: controller.signal,
  };
}

/** Adapts `handler` to grpc-js; a thrown error becomes the call's status. */
export function unary<Req, Res>(
  handler: UnaryHandler<Req, Res>,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const context = callContext(call);
    Promise.resolve()
      .then(() => handler(call.request, context))
      .then(
        (response) => {
          callback(null, response);
        },
        (error: unknown) => {
          callback(toGrpcStatus(error));
        },
      );
  };
}

/** The prefix of AdminService's full method names, as the audit log records them. */
export const ADMIN_METHOD_PREFIX = "/flotilla.v1.AdminService/";

/** `update-run` → `UpdateRun`: target kinds as the audit log records them (admin.proto). */
function kindName(kind: string): string {
  return kind
    .split("-")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

/** What an audited call records beside its outcome. */
export interface AuditTarget<Req> {
  readonly method: string;
  readonly targetKind: string;
  readonly targetName: (request: Req) => string;
  readonly reason?: (request: Req) => string;
}

/** Dependencies of {@link audited}. */
export interface AuditDeps {
  readonly audit: AuditLog;
  readonly now: () => number;
  /** Called when the audit record itself cannot be stored (the call's outcome stands). */
  readonly onAuditError: (error: unknown) => void;
}

function outcomeOf(error: unknown): AuditOutcome {
  if (
    error instanceof FlotillaError &&
    (error.code === "permission_denied" || error.code === "unauthenticated")
  ) {
    return "Denied";
  }
  return "Failed";
}

/** Wraps a state-changing handler so that every call, refused or not, is audited. */
export function audited<Req, Res>(
  deps: AuditDeps,
  target: AuditTarget<Req>,
  handler: UnaryHandler<Req, Res>,
): UnaryHandler<Req, Res> {
  return async (request: Req, context: CallContext): Promise<Res> => {
    const base = {
      atMs: deps.now(),
      actor: context.actor,
      role: context.role,
      method: target.method.startsWith("/")
        ? target.method
        : `${ADMIN_METHOD_PREFIX}${target.method}`,
      targetKind: kindName(target.targetKind),
      targetName: safe(() => target.targetName(request)),
      reason: safe(() => target.reason?.(request) ?? ""),
    };
    let response: Res;
    try {
      response = await handler(request, context);
    } catch (error) {
      const flotilla = FlotillaError.from(error);
      await deps.audit
        .append({
          ...base,
          outcome: outcomeOf(error),
          errorCode: flotilla.code,
          message: flotilla.message.slice(0, 1024),
        })
        .catch(deps.onAuditError);
      throw error;
    }
    await deps.audit
      .append({ ...base, outcome: "Succeeded", message: "" })
      .catch(deps.onAuditError);
    return response;
  };
}

function safe(read: () => string): string {
  try {
    const value = read();
    return typeof value === "string" ? value.slice(0, 256) : "";
  } catch {
    return "";
  }
}
