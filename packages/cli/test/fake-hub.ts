/**
 * A real grpc-js server on 127.0.0.1:0 serving AdminService with in-test handlers, and a way to run
 * the CLI against it in process. Unary fakes are plain `(request) => response` functions: the
 * fixture records each call (method, request, actor and authorization headers) and turns a thrown FlotillaError into
 * its gRPC status with protocol's own mapping, as the hub does. Methods without a fake answer
 * UNIMPLEMENTED, so a test fails loudly when the CLI calls something unexpected.
 */
import { createServer } from "node:net";
import {
  Server,
  ServerCredentials,
  type handleUnaryCall,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import {
  addAdminService,
  SERVER_OPTIONS,
  toGrpcStatus,
  type wire,
} from "@flotilla/protocol";
import { memoryIo, type MemoryIo } from "./fixtures.js";
import { runCli, type CliResult } from "./support/run-cli.js";

type Handlers = wire.AdminServiceHandlers;

/** The unary methods' request and response types. */
type Unary<K extends keyof Handlers> =
  Handlers[K] extends handleUnaryCall<infer Req, infer Res>
    ? { request: Req; response: Res }
    : never;
type RequestOf<K extends keyof Handlers> = Unary<K>["request"];
type ResponseOf<K extends keyof Handlers> = Unary<K>["response"];

// The handlers type carries grpc-js's string index signature; only the named methods count.
type MethodNames = keyof {
  [K in keyof Handlers as string extends K ? never : K]: unknown;
};

type UnaryNames = {
  [K in MethodNames]: [Unary<K>] extends [never] ? never : K;
}[MethodNames];

/** One call the fake hub received. */
export interface RecordedCall {
  readonly method: string;
  readonly request: unknown;
  /** The `x-flotilla-actor` header. */
  readonly actor: string | undefined;
  /** The `authorization` header (the bearer token). */
  readonly authorization: string | undefined;
}

/** The fakes a test needs. */
export interface FakeHubHandlers {
  readonly unary?: {
    readonly [K in UnaryNames]?: (
      request: RequestOf<K>,
    ) => ResponseOf<K> | Promise<ResponseOf<K>>;
  };
  /** Streaming methods, written against grpc-js directly. */
  readonly streams?: Partial<
    Pick<
      Handlers,
      "PutObject" | "WatchUpdateRun" | "WatchAuditEvents" | "WatchGitRepo"
    >
  >;
}

/** A running fake hub. */
export interface FakeHub extends AsyncDisposable {
  readonly address: string;
  readonly calls: RecordedCall[];
  /** The requests `method` received, in order. */
  requests<T = Record<string, unknown>>(method: string): T[];
  /** Goes away at once: open calls fail as when a hub dies. */
  kill(): void;
}

/**
 * Resolves once `predicate` holds, checking every few milliseconds; rejects after `timeoutMs`.
 * (The CLI package has no testkit dependency; this is its waitFor for one process.)
 */
export async function until(
  predicate: () => boolean,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline)
      throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function header(
  metadata: { get(key: string): unknown[] },
  key: string,
): string | undefined {
  const [value] = metadata.get(key);
  return typeof value === "string" ? value : undefined;
}

/** Starts a fake hub with `handlers`; dispose it with `await using`. */
export async function startFakeHub(
  handlers: FakeHubHandlers,
): Promise<FakeHub> {
  const calls: RecordedCall[] = [];
  const implementation: UntypedServiceImplementation = {};
  for (const [method, fake] of Object.entries(handlers.unary ?? {})) {
    const respond = fake as (request: unknown) => unknown;
    implementation[method] = ((call, callback) => {
      calls.push({
        method,
        request: call.request,
        actor: header(call.metadata, "x-flotilla-actor"),
        authorization: header(call.metadata, "authorization"),
      });
      Promise.resolve()
        .then(() => respond(call.request))
        .then(
          (response) => {
            callback(null, response);
          },
          (error: unknown) => {
            callback(toGrpcStatus(error));
          },
        );
    }) as handleUnaryCall<unknown, unknown>;
  }
  for (const [method, handler] of Object.entries(handlers.streams ?? {})) {
    implementation[method] = handler as never;
  }
  const server = new Server(SERVER_OPTIONS);
  // Methods left out answer UNIMPLEMENTED (grpc-js's behaviour for a missing handler).
  addAdminService(server, implementation as unknown as Handlers);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      "127.0.0.1:0",
      ServerCredentials.createInsecure(),
      (error, bound) => {
        if (error === null) resolve(bound);
        else reject(error);
      },
    );
  });
  return {
    address: `127.0.0.1:${String(port)}`,
    calls,
    requests: <T>(method: string) =>
      calls.filter((c) => c.method === method).map((c) => c.request as T),
    kill: () => {
      server.forceShutdown();
    },
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => {
          resolve();
        });
      }),
  };
}

/** A TCP port on 127.0.0.1 nobody listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) =>
    listener.listen(0, "127.0.0.1", resolve),
  );
  const address = listener.address();
  await new Promise<void>((resolve) =>
    listener.close(() => {
      resolve();
    }),
  );
  if (address === null || typeof address === "string")
    throw new Error("no port");
  return address.port;
}

/** Runs the CLI in process against `hub` (plaintext, actor "tester" unless the argv says). */
export async function cliAgainst(
  hub: { readonly address: string },
  argv: readonly string[],
  io: MemoryIo = memoryIo(),
): Promise<CliResult> {
  return runCli([...argv, "--hub", hub.address, "--insecure-plaintext"], io);
}
