/**
 * The two services for grpc-js: registering handlers on a server, making clients with the size
 * limits of limits.ts, and a promise wrapper for unary calls that turns failures into
 * FlotillaErrors (problems included) and honours `{ signal }`.
 */
import { FlotillaError } from "@flotilla/core";
import {
  Metadata,
  type CallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientUnaryCall,
  type requestCallback,
  type Server,
} from "@grpc/grpc-js";
import { fromGrpcError } from "./errors.js";
import type {
  AdminServiceClient,
  AdminServiceHandlers,
} from "./generated/flotilla/v1/AdminService.js";
import type {
  AgentServiceClient,
  AgentServiceHandlers,
} from "./generated/flotilla/v1/AgentService.js";
import { ADMIN_CLIENT_OPTIONS, AGENT_CLIENT_OPTIONS } from "./limits.js";
import { loadProtocol } from "./load.js";

/** Registers AgentService `handlers` on `server`. */
export function addAgentService(
  server: Server,
  handlers: AgentServiceHandlers,
): void {
  server.addService(loadProtocol().agentService, handlers);
}

/** Registers AdminService `handlers` on `server`. */
export function addAdminService(
  server: Server,
  handlers: AdminServiceHandlers,
): void {
  server.addService(loadProtocol().adminService, handlers);
}

/** An AgentService client; `options` add to (and override) AGENT_CLIENT_OPTIONS. */
export function createAgentServiceClient(
  address: string,
  credentials: ChannelCredentials,
  options: ChannelOptions = {},
): AgentServiceClient {
  const { AgentServiceClient: Client } = loadProtocol();
  return new Client(address, credentials, {
    ...AGENT_CLIENT_OPTIONS,
    ...options,
  });
}

/** An AdminService client; `options` add to (and override) ADMIN_CLIENT_OPTIONS. */
export function createAdminServiceClient(
  address: string,
  credentials: ChannelCredentials,
  options: ChannelOptions = {},
): AdminServiceClient {
  const { AdminServiceClient: Client } = loadProtocol();
  return new Client(address, credentials, {
    ...ADMIN_CLIENT_OPTIONS,
    ...options,
  });
}

/**
 * A unary method of a generated client, matched by its last overload
 * `(argument, callback) => ClientUnaryCall`.
 */
type UnarySignature<F> = F extends (
  argument: infer A,
  callback: requestCallback<infer R>,
) => ClientUnaryCall
  ? { readonly request: A; readonly response: R }
  : never;

/** Names of the unary methods of client `C` (both spellings grpc-js offers). */
export type UnaryMethodName<C> = {
  [K in keyof C]: UnarySignature<C[K]> extends never ? never : K;
}[keyof C] &
  string;

/** The request type of unary method `K` of client `C`. */
export type UnaryRequest<C, K extends keyof C> = UnarySignature<
  C[K]
>["request"];

/** The response type of unary method `K` of client `C`. */
export type UnaryResponse<C, K extends keyof C> = UnarySignature<
  C[K]
>["response"];

/** Per-call options of {@link callUnary}. */
export interface UnaryCallOptions {
  /** Aborting cancels the call; the promise rejects with the mapped error. */
  readonly signal?: AbortSignal;
  /** A deadline relative to now; the call fails with `deadline_exceeded` past it. */
  readonly timeoutMs?: number;
  readonly metadata?: Metadata;
}

type FullUnary = (
  argument: unknown,
  metadata: Metadata,
  options: CallOptions,
  callback: requestCallback<unknown>,
) => ClientUnaryCall;

/**
 * Calls unary method `method` of `client` and resolves with its response; a failure rejects with
 * a FlotillaError ({@link fromGrpcError}).
 *
 *     const { cluster } = await callUnary(admin, "getCluster", { name: "c-1" }, { signal });
 */
export function callUnary<C extends Client, K extends UnaryMethodName<C>>(
  client: C,
  method: K,
  request: UnaryRequest<C, K>,
  options: UnaryCallOptions = {},
): Promise<UnaryResponse<C, K>> {
  const { signal, timeoutMs, metadata = new Metadata() } = options;
  const fn = client[method] as unknown as FullUnary;
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      // As if cancelled at once: the code a call cancelled in flight gets (CANCELLED).
      reject(
        new FlotillaError("unavailable", "Call cancelled before it started", {
          cause: signal.reason,
        }),
      );
      return;
    }
    const callOptions: CallOptions =
      timeoutMs === undefined
        ? {}
        : { deadline: new Date(Date.now() + timeoutMs) };
    const onAbort = (): void => {
      call.cancel();
    };
    const call = fn.call(
      client,
      request,
      metadata,
      callOptions,
      (error, value) => {
        signal?.removeEventListener("abort", onAbort);
        if (error !== null) reject(fromGrpcError(error));
        else resolve(value);
      },
    );
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
