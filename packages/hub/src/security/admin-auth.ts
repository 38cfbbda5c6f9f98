/**
 * Admin authentication and authorization (docs/security.md): every AdminService call is
 * authenticated, then checked against the least role its method needs (admin-roles.ts), before
 * its handler runs.
 *
 * How a caller is known, in this order:
 *
 * 1. a bearer token (`authorization: Bearer TOKEN`) found in the admin token file. A call that
 *    sends the header must send a good one: a malformed or unknown token is refused, never
 *    silently replaced by another credential;
 * 2. a client certificate (mTLS), checked by `verifyCertificate`; only admin certificates may call
 *    AdminService (a cluster's certificate is PERMISSION_DENIED);
 * 3. insecure development mode (a plaintext hub without a token file): everyone is admin, named by
 *    the `x-flotilla-actor` header as before authentication existed.
 *
 * Unauthenticated → UNAUTHENTICATED; a role too weak → PERMISSION_DENIED; both are recorded in the
 * audit log (outcome Denied, within a limit per peer: audit/refusal-audit.ts) with the caller
 * (`cluster:C` for a cluster's certificate, `anonymous@PEER` when unknown), the method, the
 * caller's reason and why. The caller of an accepted call is attached to the call object
 * (call-identity.ts), where `callContext` finds it for every handler kind.
 */
import { FlotillaError, type FlotillaErrorCode } from "@flotilla/core";
import { loadProtocol, toGrpcStatus, type wire } from "@flotilla/protocol";
import type { Metadata } from "@grpc/grpc-js";
import {
  ADMIN_METHOD_PREFIX,
  headerActor,
  type AuditDeps,
} from "../grpc/unary.js";
import { refusalPeer, type RefusalAudit } from "../audit/refusal-audit.js";
import { requiredRole } from "./admin-roles.js";
import type { AdminTokens } from "./admin-tokens.js";
import {
  actorOfIdentity,
  setCallIdentity,
  type CallIdentity,
} from "./call-identity.js";
import { roleAllows, type PeerIdentity } from "./identity.js";

type Handlers = wire.AdminServiceHandlers;

/** Longest `authorization` value read; longer ones are refused unread. */
export const MAX_AUTHORIZATION_LENGTH = 4096;

/** What the hub learns of refusals (metrics). */
export interface AdminAuthHooks {
  /** A call of `method` (bare name) refused, with the refusal's code. */
  readonly onDenied?: (method: string, code: FlotillaErrorCode) => void;
}

/** What authentication needs; give at least one way in, or `insecure`. */
export interface AdminAuthDeps extends AuditDeps, AdminAuthHooks {
  /**
   * Limits how many refusals per peer are recorded one by one (audit/refusal-audit.ts); absent:
   * every refusal is appended to the audit log.
   */
  readonly refusals?: RefusalAudit;
  /**
   * Checks a client certificate (DER) against the hub's CA and says whose it is; throws (any
   * error) when it is not good. Absent: certificates do not authenticate admin callers.
   */
  readonly verifyCertificate?: (der: Buffer) => PeerIdentity;
  /** The admin token file; absent: bearer tokens are refused. */
  readonly tokens?: AdminTokens;
  /** Insecure development mode: every caller is admin (plaintext hub, no token file). */
  readonly insecure?: boolean;
}

/** The parts of a grpc-js server call authentication reads. */
export interface AuthCall {
  readonly metadata: Metadata;
  getPeer(): string;
  getAuthContext?: () => { sslPeerCertificate?: { raw?: Buffer } };
  readonly request?: unknown;
}

/** The answer for one call: its caller, or why it is refused. */
export type AdminVerdict =
  | { readonly type: "allowed"; readonly who: CallIdentity }
  | {
      readonly type: "refused";
      readonly error: FlotillaError;
      /** Who the audit log says tried: the identity if known, else `anonymous@PEER`. */
      readonly actor: string;
      readonly role: string;
    };

/** Admin authentication for one hub. */
export interface AdminAuth {
  /** Authenticates and authorizes a call of `method` (a bare name like `StartUpdateRun`). */
  check(call: AuthCall, method: string): AdminVerdict;
  /** `handlers` with every method behind {@link check}; refusals are audited. */
  wrap(handlers: Handlers): Handlers;
}

function peerOf(call: AuthCall): string {
  try {
    return call.getPeer();
  } catch {
    return "";
  }
}

function unauthenticated(message: string): FlotillaError {
  return new FlotillaError("unauthenticated", message);
}

/** The bearer token of `metadata`; undefined when none is sent; throws when it is malformed. */
function bearerToken(metadata: Metadata): string | undefined {
  const values = metadata.get("authorization");
  if (values.length === 0) return undefined;
  if (values.length > 1) {
    throw unauthenticated(
      `Cannot authenticate: ${String(values.length)} authorization headers sent; send one`,
    );
  }
  const [value] = values;
  if (typeof value !== "string") {
    throw unauthenticated(
      "Cannot authenticate: the authorization header is not text",
    );
  }
  if (value.length > MAX_AUTHORIZATION_LENGTH) {
    throw unauthenticated(
      `Cannot authenticate: the authorization header is ${String(value.length)} characters long; at most ${String(MAX_AUTHORIZATION_LENGTH)}`,
    );
  }
  const match = /^bearer(?: +(.*))?$/i.exec(value.trim());
  if (match === null) {
    throw unauthenticated(
      'Cannot authenticate: the authorization header must be "Bearer TOKEN"',
    );
  }
  const token = match[1] ?? "";
  if (token === "") {
    throw unauthenticated(
      'Cannot authenticate: the authorization header has no token after "Bearer"',
    );
  }
  if (!/^[A-Za-z0-9._~+/=-]+$/.test(token)) {
    throw unauthenticated(
      "Cannot authenticate: the bearer token has characters a token cannot have (A-Z, a-z, 0-9, . _ ~ + / = -)",
    );
  }
  return token;
}

function peerCertificate(call: AuthCall): Buffer | undefined {
  try {
    const raw = call.getAuthContext?.().sslPeerCertificate?.raw;
    return raw instanceof Buffer && raw.length > 0 ? raw : undefined;
  } catch {
    return undefined;
  }
}

function requestField(request: unknown, field: string): string {
  if (typeof request !== "object" || request === null) return "";
  const value = (request as Record<string, unknown>)[field];
  return typeof value === "string" ? value : "";
}

/** The name a request is about: its `name`, or its message's (`group.name`, `strategy.name`). */
function targetNameOf(request: unknown): string {
  const direct = requestField(request, "name");
  if (direct !== "" || typeof request !== "object" || request === null) {
    return direct;
  }
  for (const value of Object.values(request as Record<string, unknown>)) {
    const nested = requestField(value, "name");
    if (nested !== "") return nested;
  }
  return "";
}

type Refusal = Extract<AdminVerdict, { type: "refused" }>;

/** Builds the authentication of a hub from its ways in. */
export function createAdminAuth(deps: AdminAuthDeps): AdminAuth {
  /** The caller; a refusal of a caller who proved who it is; throws for anyone unproven. */
  const identify = (call: AuthCall, peer: string): CallIdentity | Refusal => {
    if (deps.insecure === true) {
      const name = headerActor(call.metadata, peer);
      return {
        identity: { kind: "admin", name, role: "admin", via: "insecure" },
        actor: name,
        role: "admin",
      };
    }
    const token = bearerToken(call.metadata);
    if (token !== undefined) {
      if (deps.tokens === undefined) {
        throw unauthenticated(
          "Cannot authenticate: this hub accepts no bearer tokens (it has no admin token file)",
        );
      }
      const identity = deps.tokens.lookup(token);
      if (identity === undefined) {
        throw unauthenticated("Cannot authenticate: unknown bearer token");
      }
      return {
        identity,
        actor: actorOfIdentity(identity),
        role: identity.role,
      };
    }
    const der = peerCertificate(call);
    if (der !== undefined && deps.verifyCertificate !== undefined) {
      let peerIdentity: PeerIdentity;
      try {
        peerIdentity = deps.verifyCertificate(der);
      } catch (error) {
        throw new FlotillaError(
          "unauthenticated",
          `Cannot authenticate: the client certificate is not valid (${FlotillaError.from(error).message})`,
          { cause: error },
        );
      }
      if (peerIdentity.kind === "cluster") {
        // The certificate is good, so the record names the cluster that used it.
        return {
          type: "refused",
          error: new FlotillaError(
            "permission_denied",
            `Cluster "${peerIdentity.cluster}"'s certificate may not call AdminService`,
          ),
          actor: `cluster:${peerIdentity.cluster}`,
          role: "agent",
        };
      }
      return {
        identity: peerIdentity,
        actor: actorOfIdentity(peerIdentity),
        role: peerIdentity.role,
      };
    }
    throw unauthenticated(
      "Cannot authenticate: send a bearer token (authorization: Bearer TOKEN) or an admin client certificate",
    );
  };

  const check = (call: AuthCall, method: string): AdminVerdict => {
    const peer = peerOf(call);
    const anonymous = peer === "" ? "anonymous" : `anonymous@${peer}`;
    let found: CallIdentity | Refusal;
    try {
      found = identify(call, peer);
    } catch (error) {
      const refusal = FlotillaError.from(error);
      return { type: "refused", error: refusal, actor: anonymous, role: "" };
    }
    if ("error" in found) return found;
    const who = found;
    const needed = requiredRole(method);
    if (needed === undefined || !roleAllows(who.role, needed)) {
      return {
        type: "refused",
        error: new FlotillaError(
          "permission_denied",
          needed === undefined
            ? `"${who.actor}" may not call ${method}: the method has no role`
            : `"${who.actor}" (role ${who.role}) may not call ${method}: it needs role ${needed}`,
        ),
        actor: who.actor,
        role: who.role,
      };
    }
    setCallIdentity(call, who);
    return { type: "allowed", who };
  };

  const recordDenial = async (
    call: AuthCall,
    method: string,
    verdict: Refusal,
  ): Promise<void> => {
    deps.onDenied?.(method, verdict.error.code);
    const record = {
      atMs: deps.now(),
      actor: verdict.actor.slice(0, 256),
      role: verdict.role,
      method: `${ADMIN_METHOD_PREFIX}${method}`.slice(0, 128),
      targetKind: "",
      targetName: targetNameOf(call.request).slice(0, 256),
      reason: requestField(call.request, "reason").slice(0, 1024),
      outcome: "Denied" as const,
      errorCode: verdict.error.code,
      message: verdict.error.message.slice(0, 1024),
    };
    if (deps.refusals === undefined) {
      await deps.audit.append(record).catch(deps.onAuditError);
      return;
    }
    // Only anonymous callers have no role.
    const peer = refusalPeer(
      verdict.role === "" ? undefined : verdict.actor,
      peerOf(call),
    );
    await deps.refusals.record(peer, record);
  };

  const wrap = (handlers: Handlers): Handlers => {
    const service = loadProtocol().adminService as unknown as Record<
      string,
      { readonly responseStream: boolean }
    >;
    const wrapped: Record<string, unknown> = {};
    for (const [method, handler] of Object.entries(handlers) as [
      string,
      unknown,
    ][]) {
      if (typeof handler !== "function") {
        wrapped[method] = handler;
        continue;
      }
      const original = handler as (call: AuthCall, ...rest: unknown[]) => void;
      if (service[method]?.responseStream === true) {
        // Server streaming: the refusal is the stream's status.
        wrapped[method] = (
          call: AuthCall & { emit(e: "error", s: unknown): void },
        ) => {
          const verdict = check(call, method);
          if (verdict.type === "allowed") {
            original(call);
            return;
          }
          void recordDenial(call, method, verdict).finally(() => {
            call.emit("error", toGrpcStatus(verdict.error));
          });
        };
        continue;
      }
      // Unary and client streaming answer through a callback.
      wrapped[method] = (
        call: AuthCall,
        callback: (error: unknown, value?: unknown) => void,
      ) => {
        const verdict = check(call, method);
        if (verdict.type === "allowed") {
          original(call, callback);
          return;
        }
        void recordDenial(call, method, verdict).finally(() => {
          callback(toGrpcStatus(verdict.error));
        });
      };
    }
    return wrapped as unknown as Handlers;
  };

  return { check, wrap };
}
