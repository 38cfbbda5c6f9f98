/** An HTTP server on 127.0.0.1 with a port the OS picks, for the testkit's stand-in servers. */
import { createServer, type RequestListener } from "node:http";

/** A listening server. */
export interface LoopbackServer {
  readonly port: number;
  /** Closes every connection and the listener. */
  close(): Promise<void>;
}

/** Listens with `handler` on 127.0.0.1:0. */
export async function serveLoopback(
  handler: RequestListener,
): Promise<LoopbackServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  if (address === null || typeof address === "string")
    throw new Error(`unexpected server address ${String(address)}`);
  return {
    port: address.port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}

/** Whether `authorization` is the basic auth of `auth` (always, without `auth`). */
export function basicAuthorized(
  authorization: string | undefined,
  auth: { readonly username: string; readonly password: string } | undefined,
): boolean {
  if (auth === undefined) return true;
  const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`;
  return authorization === expected;
}
