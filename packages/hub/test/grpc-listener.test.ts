/**
 * The hub's own gRPC listener (grpc/listener.ts): the addresses it accepts, and that it serves
 * grpc-js on the port it reports, port 0 included.
 */
import { createAdminServiceClient, callUnary } from "@flotilla/protocol";
import { credentials, Server, ServerCredentials } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { listenGrpc, splitHostPort } from "../src/grpc/listener.js";

describe("splitHostPort", () => {
  it("splits host:port and [v6]:port, and refuses anything else", () => {
    expect(splitHostPort("127.0.0.1:7070")).toEqual({
      host: "127.0.0.1",
      port: 7070,
    });
    expect(splitHostPort("[::1]:0")).toEqual({ host: "::1", port: 0 });
    expect(splitHostPort("hub.example:443")).toEqual({
      host: "hub.example",
      port: 443,
    });
    expect(() => splitHostPort("7070")).toThrow(
      "not a HOST:PORT address: 7070",
    );
    expect(() => splitHostPort("::1:7070")).toThrow("not a HOST:PORT");
  });
});

describe("listenGrpc", () => {
  it("serves the gRPC server on the port it reports and stops accepting once closed", async () => {
    const server = new Server();
    const listener = await listenGrpc(
      server,
      "127.0.0.1:0",
      ServerCredentials.createInsecure(),
    );
    expect(listener.port).toBeGreaterThan(0);
    const client = createAdminServiceClient(
      `127.0.0.1:${String(listener.port)}`,
      credentials.createInsecure(),
    );
    try {
      // No service is registered: the call is answered UNIMPLEMENTED (the transport works).
      await expect(
        callUnary(client, "listClusters", {}, { timeoutMs: 5_000 }),
      ).rejects.toThrow("does not implement");
    } finally {
      client.close();
      listener.close();
      server.forceShutdown();
    }
    // Closed: nothing accepts connections on the port any more.
    const late = createAdminServiceClient(
      `127.0.0.1:${String(listener.port)}`,
      credentials.createInsecure(),
    );
    try {
      await expect(
        callUnary(late, "listClusters", {}, { timeoutMs: 2_000 }),
      ).rejects.toMatchObject({ code: "unavailable" });
    } finally {
      late.close();
    }
  });
});
