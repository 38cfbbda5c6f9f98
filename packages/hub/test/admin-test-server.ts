/**
 * A real grpc-js server on 127.0.0.1:0 serving some AdminService handlers, the other methods
 * answering UNIMPLEMENTED, and a client for it: for tests of one part's handlers without a hub.
 */
import {
  addAdminService,
  createAdminServiceClient,
  loadProtocol,
  SERVER_OPTIONS,
  type wire,
} from "@flotilla/protocol";
import {
  credentials,
  Server,
  ServerCredentials,
  status,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";

export interface AdminTestServer {
  readonly client: wire.AdminServiceClient;
  readonly close: () => void;
}

export async function serveAdmin(
  handlers: Partial<wire.AdminServiceHandlers>,
): Promise<AdminTestServer> {
  const implementation: UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(loadProtocol().adminService)) {
    const unimplemented = {
      code: status.UNIMPLEMENTED,
      details: `${name} is not in this test`,
    };
    implementation[name] = (
      method.responseStream
        ? (call: { emit(event: "error", e: unknown): void }) => {
            call.emit("error", unimplemented);
          }
        : (_call: unknown, callback: (e: unknown) => void) => {
            callback(unimplemented);
          }
    ) as UntypedServiceImplementation[string];
  }
  const server = new Server(SERVER_OPTIONS);
  addAdminService(server, {
    ...implementation,
    ...handlers,
  } as wire.AdminServiceHandlers);
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
  const client = createAdminServiceClient(
    `127.0.0.1:${String(port)}`,
    credentials.createInsecure(),
  );
  return {
    client,
    close: () => {
      client.close();
      server.forceShutdown();
    },
  };
}
