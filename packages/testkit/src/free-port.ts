import { createServer } from "node:net";
import { FlotillaError } from "@flotilla/core";

/**
 * Returns a TCP port on 127.0.0.1 that was free a moment ago: the OS picks it for a listener that is
 * closed at once. Another process may take it before the caller binds it, so prefer binding port 0
 * directly when the server under test allows it (gRPC on `127.0.0.1:0`, nats-server `-p -1`).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve, reject) => {
    server.close((error) => {
      if (error) reject(error);
      else resolve();
    });
  });
  if (address === null || typeof address === "string") {
    throw new FlotillaError(
      "internal",
      `Cannot find a free port: unexpected address ${String(address)}`,
    );
  }
  return address.port;
}
