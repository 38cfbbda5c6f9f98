// TLS to the hub: the session verifies the hub with a CA and presents a client certificate
// (mutual TLS); plaintext is never a silent fallback. Certificates are made with openssl.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, test } from "vitest";
import { ServerCredentials } from "@grpc/grpc-js";
import { pino } from "pino";
import {
  readHubTls,
  type HubSession,
  type HubTransport,
} from "@flotilla/agent";
import { createHubSession, type SessionEvent } from "@flotilla/agent/testing";
import { createManualClock } from "@flotilla/node/testing";
import { waitFor } from "@flotilla/testkit";
import { FakeHub } from "./support/fake-hub.js";

const run = promisify(execFile);
let dir: string;
const file = (name: string): string => join(dir, name);

/** A key and a certificate for `cn` signed by the test CA, with a subjectAltName if given. */
async function issue(name: string, cn: string, san?: string): Promise<void> {
  await run("openssl", [
    ...["req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", `/CN=${cn}`],
    ...["-keyout", file(`${name}.key`), "-out", file(`${name}.csr`)],
  ]);
  if (san !== undefined)
    await writeFile(file(`${name}.ext`), `subjectAltName=${san}\n`);
  await run("openssl", [
    ...["x509", "-req", "-in", file(`${name}.csr`), "-days", "1"],
    ...["-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial"],
    ...["-out", file(`${name}.pem`)],
    ...(san === undefined ? [] : ["-extfile", file(`${name}.ext`)]),
  ]);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flotilla-agent-tls-"));
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=test-ca",
    "-days",
    "1",
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.pem"),
  ]);
  await issue("hub", "hub", "IP:127.0.0.1");
  await issue("agent", "c1");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function session(
  hub: FakeHub,
  transport: HubTransport,
  events: SessionEvent[],
): HubSession {
  const s = createHubSession(
    {
      clock: createManualClock(),
      random: () => 0.5,
      logger: pino({ level: "silent" }),
    },
    {
      clusterName: "c1",
      agentVersion: "0.0.0-test",
      hub: hub.address,
      transport,
      lastAppliedGeneration: () => 0,
      facts: () => Promise.resolve({ labels: {}, nodePools: [] }),
      onEvent: (e) => events.push(e),
    },
  );
  s.start();
  return s;
}

test("connects over mutual TLS, and a plaintext session to a TLS hub is never welcomed", async () => {
  const credentials = ServerCredentials.createSsl(
    await readFile(file("ca.pem")),
    [
      {
        private_key: await readFile(file("hub.key")),
        cert_chain: await readFile(file("hub.pem")),
      },
    ],
    true,
  );
  await using hub = await FakeHub.start({}, credentials);
  const tls = await readHubTls({
    caFile: file("ca.pem"),
    certFile: file("agent.pem"),
    keyFile: file("agent.key"),
  });
  const events: SessionEvent[] = [];
  await using secure = session(hub, { tls }, events);
  await waitFor(() => secure.state === "connected");
  expect(hub.live("c1")?.hello?.clusterName).toBe("c1");

  const plainEvents: SessionEvent[] = [];
  await using plain = session(hub, { insecurePlaintext: true }, plainEvents);
  await waitFor(() => plainEvents.some((e) => e.type === "Disconnected"));
  expect(plain.state).not.toBe("connected");
  expect(hub.sessions).toHaveLength(1);
});

test("names the TLS file it cannot read", async () => {
  await expect(readHubTls({ caFile: file("missing.pem") })).rejects.toThrow(
    `Cannot read the hub CA certificate "${file("missing.pem")}": no such file`,
  );
});
