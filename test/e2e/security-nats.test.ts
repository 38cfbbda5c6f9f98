/**
 * What one agent's credentials must not give (docs/security.md, "NATS: two accounts", "Bundle
 * content", "Removing a cluster"), tried as an attacker would with real processes: the hub, a
 * nats-server in operator mode and agents registered with a bootstrap token. The attacker holds
 * cluster sec-a's identity files (its key, certificate and NATS credentials, as stolen from the
 * agent's state directory) and uses nats.js and grpc-js directly, asking for what the agent never
 * would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AckPolicy, jetstreamManager } from "@nats-io/jetstream";
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
} from "@nats-io/transport-node";
import { credentials } from "@grpc/grpc-js";
import {
  agentInboxPrefix,
  bundleContentBucket,
  bundleContentStream,
  callUnary,
  createAgentServiceClient,
  intentKvSubject,
  intentsStream,
} from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;
const MARKER = "flotilla-e2e-secret-of-team-b";

/** The identity files of `cluster` in the agents' state directory. */
async function stolen(
  cluster: string,
): Promise<{ creds: string; key: string; cert: string; ca: string }> {
  const dir = join(e2e.stateDir("fleet"), "identities", cluster, "..data");
  const read = (name: string): Promise<string> =>
    readFile(join(dir, name), "utf8");
  return {
    creds: await read("nats.creds"),
    key: await read("key.pem"),
    cert: await read("cert.pem"),
    ca: await read("ca.pem"),
  };
}

async function natsAs(
  cluster: string,
  creds: string,
  reconnect = true,
): Promise<NatsConnection> {
  return connect({
    servers: e2e.nats.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
    inboxPrefix: agentInboxPrefix(cluster),
    reconnect,
    maxReconnectAttempts: reconnect ? -1 : 0,
    reconnectTimeWait: 200,
  });
}

/** The hub's own view of NATS (hub.creds of the setup directory). */
async function natsAsHub(): Promise<NatsConnection> {
  const dir = e2e.security?.natsSetupDir ?? "";
  return connect({
    servers: e2e.nats.url,
    authenticator: credsAuthenticator(await readFile(join(dir, "hub.creds"))),
  });
}

async function cliOk(...args: string[]): Promise<string> {
  const result = await e2e.cli(...args);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

beforeAll(async () => {
  e2e = await startE2E({ secure: true });
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("sec-a", 1, { team: "a" }),
      clusters("sec-b", 1, { team: "b" }),
      clusters("sec-c", 1, { team: "c" }),
    ]),
  );
  await e2e.connected(3);
  const dir = join(e2e.stateDir("fleet"), "..", "bundle-b");
  await mkdir(dir);
  await writeFile(
    join(dir, "fleet.yaml"),
    "namespace: team-b\ntargets:\n  - clusterSelector: { matchLabels: { team: b } }\n",
  );
  await writeFile(
    join(dir, "secret.yaml"),
    `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: ${MARKER}\n`,
  );
  await cliOk("bundle", "apply", dir, "--name", "team-b");
  await waitFor(
    async () => {
      const got = JSON.parse(
        await cliOk("bundle", "get", "team-b", "-o", "json"),
      ) as { bundle: { counts: { targets: number; ready: number } } };
      return got.bundle.counts.targets === 1 && got.bundle.counts.ready === 1;
    },
    { timeoutMs: 30_000, intervalMs: 300, message: "team-b Ready on sec-b" },
  );
}, 120_000);

afterAll(async () => {
  await e2e.stop();
});

describe("an agent's stolen NATS credentials", () => {
  it("cannot create a consumer, nor make the server write into the audit stream or another cluster's intent", async () => {
    const { creds } = await stolen("sec-a01");
    await using nc = await natsAs("sec-a01", creds);
    const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 2_000 });
    // A push consumer delivering bundle chunks to the audit subject: refused outright.
    await expect(
      jsm.consumers.add(bundleContentStream(), {
        name: "exfil",
        deliver_subject: "flotilla.audit",
        ack_policy: AckPolicy.None,
      }),
    ).rejects.toThrow(/Permissions Violation|timeout|no responders/i);

    await using hubNc = await natsAsHub();
    const hubJsm = await jetstreamManager(hubNc);
    const auditBefore = (await hubJsm.streams.info("flotilla-audit")).state
      .messages;
    const intentOfB = await hubJsm.direct.getMessage(intentsStream(), {
      last_by_subj: intentKvSubject("sec-b01"),
    });
    // The one request it may send, with reply subjects of its choosing: the audit subject and
    // sec-b's KV key. In one shared account the server published its answer there.
    const ownIntent = `$JS.API.DIRECT.GET.${intentsStream()}.${intentKvSubject("sec-a01")}`;
    nc.publish(ownIntent, "", { reply: "flotilla.audit" });
    nc.publish(ownIntent, "", { reply: intentKvSubject("sec-b01") });
    // And publishing there itself.
    nc.publish("flotilla.audit", "forged");
    // Requests on one connection are answered in order: once this answer is back, the server
    // has handled (and routed the answers of) the two above.
    // (sec-a01 holds no bundle: the answer is JetStream's "no message", 404.)
    const answer = await nc.request(ownIntent, "", { timeout: 5_000 });
    expect(answer.headers?.code).toBe(404);

    expect((await hubJsm.streams.info("flotilla-audit")).state.messages).toBe(
      auditBefore,
    );
    const intentOfBAfter = await hubJsm.direct.getMessage(intentsStream(), {
      last_by_subj: intentKvSubject("sec-b01"),
    });
    expect(intentOfBAfter?.seq).toBe(intentOfB?.seq);
    // The audit log still reads whole.
    const audit = JSON.parse(await cliOk("audit", "list", "-o", "json")) as {
      events: { actor: string }[];
    };
    expect(audit.events.length).toBeGreaterThan(0);
  });

  it("reads every byte of the bundle-content store it can reach and finds no other cluster's content in it", async () => {
    const { creds } = await stolen("sec-a01");
    await using nc = await natsAs("sec-a01", creds);
    const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 2_000 });
    const stream = bundleContentStream();
    const seen: Uint8Array[] = [];
    // 1. Direct gets by sequence (chunks are read that way): walk the whole stream.
    let seq = 1;
    for (;;) {
      const m = await jsm.direct
        .getMessage(stream, { seq, next_by_subj: ">" })
        .catch(() => null);
      if (m === null) break;
      seen.push(m.data);
      seq = m.seq + 1;
    }
    // 2. A consumer over every chunk, delivered to its own inbox (a literal ">" in the filter).
    const deliver = `${agentInboxPrefix("sec-a01")}.all`;
    const delivered: Uint8Array[] = [];
    nc.subscribe(deliver, {
      callback: (_, m) => {
        delivered.push(m.data);
      },
    });
    const consumer = await jsm.consumers
      .add(stream, {
        name: "all-chunks",
        filter_subject: `$O.${bundleContentBucket()}.C.>`,
        deliver_subject: deliver,
        ack_policy: AckPolicy.None,
      })
      .catch(() => undefined);
    if (consumer !== undefined) {
      await waitFor(() => delivered.length >= consumer.num_pending, {
        timeoutMs: 5_000,
      });
    }
    seen.push(...delivered);
    // Something was readable (team-b's content is in the store, sealed), and none of it in clear.
    expect(seen.length).toBeGreaterThanOrEqual(1);
    const marker = Buffer.from(MARKER);
    for (const data of seen)
      expect(Buffer.from(data).includes(marker)).toBe(false);
  });
});

describe("removing a cluster", () => {
  it("revokes its NATS user and its certificate within seconds", async () => {
    const identity = await stolen("sec-c01");
    const nc = await natsAs("sec-c01", identity.creds, false);
    const closed = nc.closed();
    // Before: its credentials work on both sides.
    const agents = createAgentServiceClient(
      e2e.hubAddress,
      credentials.createSsl(
        Buffer.from(identity.ca),
        Buffer.from(identity.key),
        Buffer.from(identity.cert),
      ),
    );
    try {
      await cliOk("cluster", "remove", "sec-c01", "--reason", "decommissioned");
      // NATS closes the live connection, and refuses a new one. (About a second here; the bound
      // leaves room for a loaded CI machine.)
      await waitFor(() => nc.isClosed(), {
        timeoutMs: 20_000,
        message: "the removed cluster's NATS connection to be closed",
      });
      expect(String(await closed)).toMatch(/revoked|Authorization|auth/i);
      await expect(natsAs("sec-c01", identity.creds, false)).rejects.toThrow(
        /Authorization Violation|revoked/i,
      );
      // The hub refuses its certificate.
      await expect(
        callUnary(
          agents,
          "renewIdentity",
          { csrPem: "" },
          { timeoutMs: 5_000 },
        ),
      ).rejects.toThrow(/UNAUTHENTICATED|not registered|no longer honoured/);
    } finally {
      agents.close();
      if (!nc.isClosed()) await nc.close();
    }
  });
});
