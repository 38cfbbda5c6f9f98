import { access } from "node:fs/promises";
import { createConnection } from "node:net";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Kvm } from "@nats-io/kv";
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { startNatsServer } from "@flotilla/testkit";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => {
      resolve(false);
    });
  });
}

/** Resolves on the connection's next status event of `type`; listening starts at the call. */
async function nextStatus(nc: NatsConnection, type: string): Promise<void> {
  for await (const status of nc.status()) {
    if (status.type === type) return;
  }
}

describe("startNatsServer", () => {
  test("starts a JetStream-enabled server on a free loopback port", async () => {
    await using server = await startNatsServer();
    expect(server.url).toBe(`nats://127.0.0.1:${String(server.port)}`);
    expect(server.port).toBeGreaterThan(0);
    const nc = await connect({ servers: server.url });
    try {
      const kv = await new Kvm(nc).create("testkit");
      await kv.put("greeting", "hello");
      expect((await kv.get("greeting"))?.string()).toBe("hello");
    } finally {
      await nc.close();
    }
  });

  test("two servers run side by side on different ports and directories", async () => {
    await using a = await startNatsServer();
    await using b = await startNatsServer();
    expect(a.port).not.toBe(b.port);
    expect(a.storeDir).not.toBe(b.storeDir);
  });

  test("restart keeps the port and the JetStream data, and clients reconnect", async () => {
    await using server = await startNatsServer();
    const nc = await connect({
      servers: server.url,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 50,
    });
    try {
      const kv = await new Kvm(nc).create("testkit", { storage: "file" });
      await kv.put("kept", "across restarts");
      const { port, pid: before } = server;
      const reconnected = nextStatus(nc, "reconnect");

      await server.restart();

      expect(server.port).toBe(port);
      expect(server.pid).not.toBe(before);
      expect(isAlive(before!)).toBe(false);
      // Requests sent while the client is still disconnected are lost (they time out), so read
      // only once the client is back.
      await reconnected;
      expect((await kv.get("kept"))?.string()).toBe("across restarts");
    } finally {
      await nc.close();
    }
  });

  test("halt stops accepting connections until restart", async () => {
    await using server = await startNatsServer();
    await server.halt();
    expect(server.pid).toBeUndefined();
    expect(await acceptsConnections(server.port)).toBe(false);
    await server.restart();
    expect(await acceptsConnections(server.port)).toBe(true);
  });

  test("stop kills the process, frees the port and removes the directory", async () => {
    const server = await startNatsServer();
    const pid = server.pid!;
    expect(isAlive(pid)).toBe(true);

    await server.stop();

    expect(isAlive(pid)).toBe(false);
    expect(await acceptsConnections(server.port)).toBe(false);
    await expect(access(server.storeDir)).rejects.toThrow(/ENOENT/);
    await server.stop(); // idempotent
    await expect(server.restart()).rejects.toMatchObject({
      code: "failed_precondition",
    });
  });

  test("a missing binary fails with a message naming nats-server and how to install it", async () => {
    const error: unknown = await startNatsServer({
      binary: "/nonexistent/nats-server",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlotillaError);
    expect(error).toMatchObject({ code: "failed_precondition" });
    expect((error as Error).message).toMatch(
      /nats-server.*apt-get install -y nats-server/s,
    );
  });

  test("a server that exits during start fails with its log", async () => {
    const error: unknown = await startNatsServer({
      args: ["--no-such-flag"],
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "unavailable" });
    expect((error as Error).message).toMatch(/exited .*before it was ready/);
  });

  test("an aborted signal stops a start that is in progress", async () => {
    const controller = new AbortController();
    const reason = new Error("test gave up");
    controller.abort(reason);
    await expect(startNatsServer({ signal: controller.signal })).rejects.toBe(
      reason,
    );
  });
});
