/**
 * A connection to the hub's AdminService for one command: unary calls with the configured deadline,
 * the bearer token (`authorization: Bearer …`) and the actor header, server streams as async iterables, and the client-streaming object upload.
 * Every failure is a FlotillaError (protocol's mapping, field problems included).
 */
import {
  credentials,
  connectivityState,
  Metadata,
  type ChannelCredentials,
  type ClientReadableStream,
} from "@grpc/grpc-js";
import { fail, ok, problem, type Result } from "@flotilla/core";
import {
  callUnary,
  createAdminServiceClient,
  fromGrpcError,
  type UnaryMethodName,
  type UnaryRequest,
  type UnaryResponse,
  type wire,
} from "@flotilla/protocol";
import { describeReadError } from "../input.js";
import type { CliIo } from "../io.js";
import {
  ACTOR_HEADER,
  type BearerSource,
  type HubConfig,
  type TlsFiles,
} from "./hub-config.js";

type Admin = wire.AdminServiceClient;

/** Names of AdminService's unary methods, in the camelCase spelling grpc-js also offers. */
export type AdminMethod = {
  [K in UnaryMethodName<Admin>]: K extends Uncapitalize<K> ? K : never;
}[UnaryMethodName<Admin>];

/** An open connection to the hub. */
export interface HubClient {
  readonly address: string;
  readonly timeoutMs: number;
  /** Calls a unary method with the deadline and the actor header. */
  call<K extends AdminMethod>(
    method: K,
    request: UnaryRequest<Admin, K>,
  ): Promise<UnaryResponse<Admin, K>>;
  /** The messages of a server stream, until it ends; a failure rejects with a FlotillaError. */
  stream<T>(
    open: (admin: Admin, metadata: Metadata) => ClientReadableStream<T>,
  ): AsyncIterable<T>;
  /** The generated client, for client-streaming calls; use {@link metadata} with it. */
  readonly admin: Admin;
  /** Fresh call metadata with the bearer token and the actor header. */
  metadata(): Metadata;
  /** Whether a connection to the hub is up now (tells "unreachable" from "slow"). */
  isConnected(): boolean;
  close(): void;
}

async function readPem(
  io: CliIo,
  option: string,
  path: string | undefined,
  problems: string[],
): Promise<Buffer | null> {
  if (path === undefined) return null;
  try {
    return Buffer.from(await io.readBytes(path));
  } catch (error) {
    problems.push(
      `${option} ${path}: cannot read: ${describeReadError(error)}`,
    );
    return null;
  }
}

async function channelCredentials(
  io: CliIo,
  tls: TlsFiles | undefined,
): Promise<Result<ChannelCredentials>> {
  if (tls === undefined) return ok(credentials.createInsecure());
  const problems: string[] = [];
  const [ca, cert, key] = await Promise.all([
    readPem(io, "--tls-ca", tls.ca, problems),
    readPem(io, "--tls-cert", tls.cert, problems),
    readPem(io, "--tls-key", tls.key, problems),
  ]);
  if (problems.length > 0) return fail(problems.map(problem));
  try {
    return ok(credentials.createSsl(ca, key, cert));
  } catch (error) {
    // createSsl checks the PEM: a key that is not a key is bad input, not a hub problem.
    return fail([
      problem(
        `TLS files: ${error instanceof Error ? error.message : String(error)}`,
      ),
    ]);
  }
}

/** What the hub accepts in a bearer token (RFC 6750's b64token), and its longest length. */
const TOKEN_PATTERN = /^[A-Za-z0-9._~+/=-]{1,4096}$/;

/** The bearer token of `source` (a token file's content trimmed), or why it cannot be used. */
async function bearerToken(
  io: CliIo,
  source: BearerSource | undefined,
  problems: string[],
): Promise<string | undefined> {
  if (source === undefined) return undefined;
  let token: string;
  if ("file" in source) {
    try {
      token = (await io.readFile(source.file)).trim();
    } catch (error) {
      problems.push(
        `${source.from} ${source.file}: cannot read: ${describeReadError(error)}`,
      );
      return undefined;
    }
  } else {
    token = source.token.trim();
  }
  if (!TOKEN_PATTERN.test(token)) {
    // Never print the token itself: it is a secret, even a malformed one.
    problems.push(
      `${source.from}${"file" in source ? ` ${source.file}` : ""}: the bearer token must be 1 to 4096 of A-Z, a-z, 0-9, . _ ~ + / = -`,
    );
    return undefined;
  }
  return token;
}

/** Opens a client for `config` (reading the TLS files), or says why the files are unusable. */
export async function connectHub(
  config: HubConfig,
  io: CliIo,
): Promise<Result<HubClient>> {
  const creds = await channelCredentials(io, config.tls);
  if (!creds.ok) return creds;
  const tokenProblems: string[] = [];
  const token = await bearerToken(io, config.bearer, tokenProblems);
  if (tokenProblems.length > 0) return fail(tokenProblems.map(problem));
  const admin = createAdminServiceClient(config.address, creds.value);
  const metadata = (): Metadata => {
    const m = new Metadata();
    m.set(ACTOR_HEADER, config.actor);
    if (token !== undefined) m.set("authorization", `Bearer ${token}`);
    return m;
  };
  const hub: HubClient = {
    address: config.address,
    timeoutMs: config.timeoutMs,
    admin,
    metadata,
    call: (method, request) =>
      callUnary(admin, method, request, {
        timeoutMs: config.timeoutMs,
        metadata: metadata(),
      }),
    stream: <T>(
      open: (admin: Admin, metadata: Metadata) => ClientReadableStream<T>,
    ): AsyncIterable<T> => ({
      async *[Symbol.asyncIterator]() {
        const call = open(admin, metadata());
        try {
          for await (const message of call as AsyncIterable<T>) yield message;
        } catch (error) {
          throw fromGrpcError(error);
        } finally {
          // Leaving the loop early (the run finished, the caller stopped) ends the call.
          call.cancel();
        }
      },
    }),
    isConnected: () =>
      admin.getChannel().getConnectivityState(false) ===
      connectivityState.READY,
    close: () => {
      admin.close();
    },
  };
  return ok(hub);
}
