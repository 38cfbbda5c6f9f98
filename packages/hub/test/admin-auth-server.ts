/**
 * A grpc-js server on 127.0.0.1:0 whose every AdminService method answers OK at once (unary and
 * client streams with an empty response, server streams by ending), behind admin authentication,
 * recording the actor and role each handler saw through `callContext`; and a client that calls
 * any method by name and resolves with the status. For tests of authentication and roles apart
 * from what the handlers do.
 */
import { loadProtocol, SERVER_OPTIONS, type wire } from "@flotilla/protocol";
import {
  Client,
  Metadata,
  Server,
  type ChannelCredentials,
  type ServerCredentials,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { callContext } from "../src/grpc/unary.js";
import type { AdminAuth } from "../src/security/admin-auth.js";

type MethodDefinition = ServiceDefinition[string];

/** What one handler saw. */
export interface SeenCall {
  readonly method: string;
  readonly actor: string;
  readonly role: string;
}

export interface AuthTestServer extends AsyncDisposable {
  readonly address: string;
  readonly seen: SeenCall[];
  /** Calls `method` with `metadata` and an empty request; resolves with the status. */
  invoke(
    method: string,
    metadata?: Record<string, string | readonly string[]>,
  ): Promise<{ readonly code: number; readonly details: string }>;
}

/** The AdminService methods by name. */
export function adminMethods(): Record<string, MethodDefinition> {
  return loadProtocol().adminService;
}

export async function startAuthTestServer(
  auth: AdminAuth,
  serverCredentials: ServerCredentials,
  clientCredentials: ChannelCredentials,
): Promise<AuthTestServer> {
  const seen: SeenCall[] = [];
  const implementation: UntypedServiceImplementation = {};
  for (const [method, definition] of Object.entries(adminMethods())) {
    const record = (call: Parameters<typeof callContext>[0]): void => {
      const { actor, role } = callContext(call);
      seen.push({ method, actor, role });
    };
    implementation[method] = (
      definition.responseStream
        ? (call: Parameters<typeof callContext>[0] & { end(): void }) => {
            record(call);
            call.end();
          }
        : (
            call: Parameters<typeof callContext>[0],
            callback: (e: null, v: object) => void,
          ) => {
            record(call);
            callback(null, {});
          }
    ) as UntypedServiceImplementation[string];
  }
  const server = new Server(SERVER_OPTIONS);
  server.addService(
    loadProtocol().adminService,
    auth.wrap(implementation as unknown as wire.AdminServiceHandlers),
  );
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", serverCredentials, (error, bound) => {
      if (error === null) resolve(bound);
      else reject(error);
    });
  });
  const address = `127.0.0.1:${String(port)}`;
  const client = new Client(address, clientCredentials);
  const invoke: AuthTestServer["invoke"] = (method, headers = {}) => {
    const definition = adminMethods()[method];
    if (definition === undefined) throw new Error(`no method ${method}`);
    const metadata = new Metadata();
    for (const [key, value] of Object.entries(headers)) {
      for (const v of typeof value === "string" ? [value] : value) {
        metadata.add(key, v);
      }
    }
    return new Promise((resolve) => {
      const done = (status: { code: number; details: string }): void => {
        resolve({ code: status.code, details: status.details });
      };
      const { path, requestSerialize, responseDeserialize } = definition;
      if (definition.responseStream) {
        const call = client.makeServerStreamRequest(
          path,
          requestSerialize,
          responseDeserialize,
          {},
          metadata,
        );
        call.on("data", () => undefined);
        call.on("error", () => undefined);
        call.on("status", done);
      } else if (definition.requestStream) {
        const call = client.makeClientStreamRequest(
          path,
          requestSerialize,
          responseDeserialize,
          metadata,
          () => undefined,
        );
        call.on("status", done);
        call.end();
      } else {
        const call = client.makeUnaryRequest(
          path,
          requestSerialize,
          responseDeserialize,
          {},
          metadata,
          () => undefined,
        );
        call.on("status", done);
      }
    });
  };
  return {
    address,
    seen,
    invoke,
    [Symbol.asyncDispose]: async () => {
      client.close();
      await new Promise<void>((resolve) => {
        server.tryShutdown(() => {
          resolve();
        });
      });
    },
  };
}
