/**
 * The hub fails fast when it cannot start: whatever step fails (JetStream refusing a stream, a
 * port taken, a serving certificate that does not parse), the real process writes one line saying
 * why and exits 1 within a bounded time, instead of living on with NATS reconnecting and nothing
 * served. And with the audit stream made small enough (`--audit-max-bytes`) it starts on the same
 * small JetStream that refused the default size.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNatsServer, type NatsServer } from "@flotilla/testkit";
import {
  exitWithin,
  messageLines,
  startHubProcess,
  stopHub,
} from "./hub-process.js";

/** A failed start must end well within this: a few JetStream requests, then closing NATS. */
const START_FAILURE_EXIT_MS = 15_000;

let nats: NatsServer;
let smallNats: NatsServer;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-hub-start-"));
  nats = await startNatsServer();
  // Room for the KV buckets (they reserve nothing) but not for a 1 GiB audit stream.
  smallNats = await startNatsServer({
    config: "jetstream { max_file_store: 64MB }\n",
  });
}, 60_000);

afterAll(async () => {
  await nats.stop();
  await smallNats.stop();
  await rm(work, { recursive: true, force: true });
});

/** Resolves with a TCP server listening on a free port of 127.0.0.1 (the port "taken"). */
async function takePort(): Promise<Server & { port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string")
    throw new Error("no port");
  return Object.assign(server, { port: address.port });
}

describe("a hub that cannot start", () => {
  it("exits 1 with one line when JetStream has no room for the audit stream", async () => {
    const hub = startHubProcess({ nats: smallNats.url });
    const exit = await exitWithin(hub, START_FAILURE_EXIT_MS);
    expect(exit.code, hub.output()).toBe(1);
    const lines = messageLines(hub);
    expect(lines, hub.output()).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^flotilla-hub: cannot start: .*audit.*insufficient storage resources/,
    );
    expect(lines[0]).toContain("1073741824");
  });

  it("starts on the same JetStream with --audit-max-bytes small enough", async () => {
    const hub = startHubProcess({
      nats: smallNats.url,
      args: ["--audit-max-bytes", "16MiB", "--state-prefix", "small"],
    });
    await hub.waitForLine(/serving gRPC/);
    const exit = await stopHub(hub);
    expect(exit.code, hub.output()).toBe(0);
  });

  it("exits 1 naming the address when the gRPC port is taken", async () => {
    const taken = await takePort();
    try {
      const address = `127.0.0.1:${String(taken.port)}`;
      const hub = startHubProcess({ nats: nats.url, listen: address });
      const exit = await exitWithin(hub, START_FAILURE_EXIT_MS);
      expect(exit.code, hub.output()).toBe(1);
      const lines = messageLines(hub);
      expect(lines, hub.output()).toEqual([
        expect.stringMatching(
          new RegExp(
            `^flotilla-hub: cannot start: Cannot listen for gRPC on ${address}: .*EADDRINUSE`,
          ),
        ),
      ]);
    } finally {
      taken.close();
    }
  });

  it("exits 1 naming the address when the HTTP port is taken", async () => {
    const taken = await takePort();
    try {
      const address = `127.0.0.1:${String(taken.port)}`;
      const hub = startHubProcess({
        nats: nats.url,
        args: ["--http-listen", address],
      });
      const exit = await exitWithin(hub, START_FAILURE_EXIT_MS);
      expect(exit.code, hub.output()).toBe(1);
      expect(messageLines(hub), hub.output()).toEqual([
        expect.stringMatching(
          new RegExp(
            `^flotilla-hub: cannot start: Cannot listen for HTTP on ${address}: .*EADDRINUSE`,
          ),
        ),
      ]);
    } finally {
      taken.close();
    }
  });

  it("exits 1 with one line when the serving certificate does not parse", async () => {
    const cert = join(work, "serving.crt");
    const key = join(work, "serving.key");
    await writeFile(cert, "not a certificate\n");
    await writeFile(key, "not a key\n");
    const hub = startHubProcess({
      nats: nats.url,
      args: ["--tls-cert", cert, "--tls-key", key],
    });
    const exit = await exitWithin(hub, START_FAILURE_EXIT_MS);
    expect(exit.code, hub.output()).toBe(1);
    expect(messageLines(hub), hub.output()).toEqual([
      expect.stringMatching(/^flotilla-hub: cannot start: .*TLS/),
    ]);
  });
});
