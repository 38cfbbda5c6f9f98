// `HubSession.reconnect()`, how a renewed client certificate takes effect: the open stream ends,
// a new channel is made with the transport's current TLS material and the session is welcomed
// again at once (no backoff pause, even when one was under way), and reports not yet acked go out
// again on the new stream.
import { ServerCredentials } from "@grpc/grpc-js";
import { beforeAll, expect, test } from "vitest";
import { pino } from "pino";
import { type HubSession, type HubTls } from "@flotilla/agent";
import { createHubSession } from "@flotilla/agent/testing";
import { createManualClock, type ManualClock } from "@flotilla/node/testing";
import { waitFor } from "@flotilla/testkit";
import { FakeHub } from "./support/fake-hub.js";
import { TestCa } from "./support/test-ca.js";

let ca: TestCa;
let serverCredentials: ServerCredentials;

beforeAll(async () => {
  ca = await TestCa.create();
  const server = await ca.server();
  serverCredentials = ServerCredentials.createSsl(
    Buffer.from(ca.pem),
    [
      {
        private_key: Buffer.from(server.keyPem),
        cert_chain: Buffer.from(server.certificatePem),
      },
    ],
    false,
  );
});

/** A session whose TLS material is read through a counting function. */
function startSession(
  hub: FakeHub,
  clock: ManualClock,
): { session: HubSession; tlsReads: () => number } {
  let reads = 0;
  const tls = (): HubTls => {
    reads++;
    return { ca: Buffer.from(ca.pem) };
  };
  const session = createHubSession(
    { clock, random: () => 0.5, logger: pino({ level: "silent" }) },
    {
      clusterName: "c1",
      agentVersion: "0.0.0-test",
      hub: hub.address,
      transport: { tls },
      channelOptions: {
        "grpc.initial_reconnect_backoff_ms": 50,
        "grpc.max_reconnect_backoff_ms": 100,
      },
      lastAppliedGeneration: () => 0,
      facts: () => Promise.resolve({ labels: {}, nodePools: [] }),
    },
  );
  session.start();
  return { session, tlsReads: () => reads };
}

test("reconnect() moves the session to a new channel at once and resends unacked reports", async () => {
  await using hub = await FakeHub.start({ ack: false }, serverCredentials);
  const clock = createManualClock();
  const started = startSession(hub, clock);
  await using session = started.session;
  const tlsReads = started.tlsReads;
  await waitFor(() => session.state === "connected");
  expect(tlsReads()).toBe(1);
  session.report({
    generation: 1,
    subject: { kind: "bundle", bundle: "web", revision: "r1" },
    phase: "Applying",
    reasons: [],
    reasonsTruncated: 0,
    observedAtMs: clock.now(),
  });
  const first = hub.live("c1");
  await waitFor(() => first?.statuses().length === 1);

  session.reconnect("identity renewed");
  await waitFor(() => first?.ended === true);
  await waitFor(
    () => hub.sessionsOf("c1").length === 2 && session.state === "connected",
  );
  const second = hub.live("c1");
  expect(second).not.toBe(first);
  // A new TCP connection (a new channel), made with the material read again.
  expect(second?.peer).not.toBe(first?.peer);
  expect(tlsReads()).toBe(2);
  await waitFor(() => second?.statuses().length === 1);
  expect(second?.statuses()[0]).toMatchObject({
    generation: 1,
    phase: "Applying",
  });
});

test("reconnect() cuts a backoff pause short", async () => {
  await using hub = await FakeHub.start({}, serverCredentials);
  const clock = createManualClock();
  await using session = startSession(hub, clock).session;
  await waitFor(() => session.state === "connected");
  hub.shutdown();
  await waitFor(() => session.state === "waiting" && clock.pending() > 0);
  await hub.restart();
  session.reconnect("identity renewed");
  // No clock advance: the pause was cut short.
  await waitFor(() => session.state === "connected", { timeoutMs: 10_000 });
  expect(hub.sessionsOf("c1").filter((s) => !s.ended)).toHaveLength(1);
});
