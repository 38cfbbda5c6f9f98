/**
 * Readiness follows NATS: the real hub process answers /readyz 200 while its NATS connection is
 * up, 503 saying why as soon as NATS goes away (while /healthz, liveness, still passes: the hub
 * outlives NATS restarts), and 200 again once it has reconnected. `flotilla_hub_nats_connected`
 * follows the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startNatsServer,
  waitFor,
  type NatsServer,
  type TestProcess,
} from "@flotilla/testkit";
import { startHubProcess, stopHub } from "./hub-process.js";

let nats: NatsServer;
let hub: TestProcess | undefined;

beforeAll(async () => {
  nats = await startNatsServer();
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await nats.stop();
});

async function get(
  address: string,
  path: string,
): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://${address}${path}`);
  return { status: response.status, body: await response.text() };
}

/** The value of an unlabelled sample in a /metrics text. */
function sample(text: string, name: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe("the hub's readiness", () => {
  it("fails at once while NATS is down and passes again once it is back", async () => {
    hub = startHubProcess({
      nats: nats.url,
      args: ["--http-listen", "127.0.0.1:0"],
    });
    const serving = await hub.waitForLine(/serving gRPC/);
    const address = /HTTP on (\S+)$/.exec(serving)?.[1];
    expect(address, serving).toBeDefined();
    const http = address ?? "";

    const ready = await get(http, "/readyz");
    expect(ready.status, ready.body).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({
      status: "ok",
      checks: { grpc: "serving", nats: "connected" },
    });
    expect(
      sample((await get(http, "/metrics")).body, "flotilla_hub_nats_connected"),
    ).toBe(1);

    await nats.halt();
    const failing = await waitFor(
      async () => {
        const response = await get(http, "/readyz");
        return response.status === 503 && response;
      },
      { timeoutMs: 10_000, message: "/readyz to fail with NATS halted" },
    );
    expect(JSON.parse(failing.body)).toEqual({
      status: "failing",
      checks: expect.objectContaining({
        grpc: "serving",
        nats: "reconnecting",
      }) as unknown,
      reasons: ["the NATS connection is down (reconnecting)"],
    });
    // Alive still: a restart would not bring NATS back.
    expect((await get(http, "/healthz")).status).toBe(200);
    expect(
      sample((await get(http, "/metrics")).body, "flotilla_hub_nats_connected"),
    ).toBe(0);

    await nats.restart();
    await waitFor(async () => (await get(http, "/readyz")).status === 200, {
      timeoutMs: 15_000,
      message: "/readyz to pass with NATS back",
    });
    expect(
      sample((await get(http, "/metrics")).body, "flotilla_hub_nats_connected"),
    ).toBe(1);

    const exit = await stopHub(hub);
    expect(exit.code, hub.output()).toBe(0);
  });
});
