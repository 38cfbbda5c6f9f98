/**
 * The hub's gRPC listening socket. grpc-js's `bindAsync` listens with Node's default accept queue
 * (511 connections). When a hub restarts with 10,000 agents connected, all of them reconnect
 * within a second: the queue overflows, the kernel drops the connections it cannot queue, and
 * their clients retry the handshake only after 1, 3, 7, 15... seconds, so the last agents come
 * back half a minute later (`nstat` shows it as TcpExtListenOverflows). The hub therefore listens
 * itself, with a deep queue, and hands every accepted socket to grpc-js through its connection
 * injector (TLS, if any, is then done by grpc-js as with `bindAsync`). The kernel still caps the
 * queue at `net.core.somaxconn` (4096 by default on current kernels).
 */
import { createServer, type Server as NetServer } from "node:net";
import { FlotillaError } from "@flotilla/core";
import type { Server, ServerCredentials } from "@grpc/grpc-js";

/** Accept queue the hub asks for. */
export const ACCEPT_BACKLOG = 8192;

/** A listening gRPC server. */
export interface GrpcListener {
  /** The port listened on (the one chosen when the address says port 0). */
  readonly port: number;
  /** Stops accepting connections; sessions are ended by the gRPC server's shutdown. */
  close(): void;
}

/** `HOST:PORT` or `[V6]:PORT` as the configuration accepts it (checked there). */
export function splitHostPort(address: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(address);
  const host = match?.[1] ?? match?.[2];
  if (match === null || host === undefined) {
    throw new Error(`not a HOST:PORT address: ${address}`);
  }
  return { host, port: Number(match[3]) };
}

/** Listens on `address` and serves `server` there with `credentials`. */
export async function listenGrpc(
  server: Server,
  address: string,
  credentials: ServerCredentials,
): Promise<GrpcListener> {
  const { host, port } = splitHostPort(address);
  const injector = server.createConnectionInjector(credentials);
  const socketServer: NetServer = createServer({ noDelay: true }, (socket) => {
    injector.injectConnection(socket);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      socketServer.once("error", reject);
      socketServer.listen({ host, port, backlog: ACCEPT_BACKLOG }, () => {
        socketServer.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    throw new FlotillaError(
      "unavailable",
      `Cannot listen for gRPC on ${address}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const bound = socketServer.address();
  return {
    port: typeof bound === "object" && bound !== null ? bound.port : port,
    close() {
      socketServer.close();
    },
  };
}
