/**
 * NATS authorization against a real nats-server 2.9 in operator mode (docs/security.md, "NATS: two
 * accounts"): the hub's user can do everything the hub does; an agent's user, in the agents'
 * account (raw nats.js calls standing in for the agent), reads its own intent and sealed bundle
 * content and is denied everything else by the server; the hub turns on direct gets of a
 * bundle-content store created without them and seals what an earlier version stored in clear;
 * a revoked agent user is disconnected and refused, also after the server restarts.
 */
import { randomBytes } from "node:crypto";
import {
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  AckPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { Base64UrlPaddedCodec, Objm } from "@nats-io/obj";
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
} from "@nats-io/transport-node";
import { decode, fromSeed } from "@nats-io/jwt";
import { pino } from "pino";
import {
  contentKeysOfSecret,
  createAgentsAccount,
  createAgentNatsCredentialsIssuer,
  createJetStreamAuditLog,
  createJetStreamIntentPublisher,
  createJetStreamObjectReader,
  createJetStreamStore,
  createNatsAuthSetup,
  defineCollection,
  NATS_SETUP_FILES,
  runNatsSetup,
  type AgentNatsCredentialsIssuer,
  type AgentsAccount,
  type IntentPublisher,
  type NatsAuthSetup,
} from "@flotilla/hub";
import { agentsAccountClaims, createMemoryStore } from "@flotilla/hub/testing";
import {
  agentInboxPrefix,
  bundleContentBucket,
  bundleContentStream,
  intentKvSubject,
  intentsStream,
  intentSubject,
  openContent,
  sealedObjectName,
  sha256Digest,
} from "@flotilla/protocol";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import { intentFor } from "./intents-contract.js";
import { record } from "./audit-log.contract.js";
import { compact } from "@flotilla/core";

const te = new TextEncoder();
let setup: NatsAuthSetup;
let server: NatsServer;
let hub: NatsConnection;
let publisher: IntentPublisher;
let issuer: AgentNatsCredentialsIssuer;
let digest: string;
let resolverDir: string;
const contentKeys = contentKeysOfSecret(randomBytes(32));

function connectWith(creds: string, cluster?: string): Promise<NatsConnection> {
  return connect({
    servers: server.url,
    authenticator: credsAuthenticator(te.encode(creds)),
    ...(cluster === undefined
      ? {}
      : { inboxPrefix: agentInboxPrefix(cluster) }),
  });
}

/** Waits (up to 30 s, for `what`) until the server refuses a connection with `creds`. */
function untilRefused(
  creds: string,
  cluster: string,
  what: string,
): Promise<unknown> {
  return waitFor(
    async () => {
      try {
        await (await connectWith(creds, cluster)).close();
        return false;
      } catch {
        return true;
      }
    },
    { timeoutMs: 30_000, message: what },
  );
}

/** The server's errors on a connection (permission violations arrive this way). */
function serverErrors(nc: NatsConnection): string[] {
  const errors: string[] = [];
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "error") errors.push(s.error.message);
    }
  })();
  return errors;
}

async function agentFor(cluster: string): Promise<NatsConnection> {
  const issued = await issuer.issue(cluster, Date.now() + 3_600_000);
  return connectWith(issued.creds, cluster);
}

/** The issuer of agents' users, as the hub makes it from the setup. */
function issuerFor(
  options: { readonly prefix?: string; readonly now?: () => number } = {},
): AgentNatsCredentialsIssuer {
  return createAgentNatsCredentialsIssuer({
    signingKeySeed: setup.agentsAccount.signingSeed,
    accountPublicKey: setup.agentsAccount.publicKey,
    servers: [server.url],
    ...compact({ intentsPrefix: options.prefix, now: options.now }),
  });
}

beforeAll(async () => {
  resolverDir = await mkdtemp(join(tmpdir(), "flotilla-nats-jwt-"));
  setup = await createNatsAuthSetup({ resolverDir });
  server = await startNatsServer({ config: setup.serverConfig });
  hub = await connectWith(setup.hubCreds);
  publisher = createJetStreamIntentPublisher({ nc: hub, contentKeys });
  await publisher.start();
  await publisher.publish(intentFor("alpha", 1));
  await publisher.publish(intentFor("beta", 1));
  digest = await publisher.putBundleContent(te.encode("alpha's bundle"));
  issuer = issuerFor();
});

afterAll(async () => {
  await publisher.stop();
  await hub.close();
  await server.stop();
  await rm(resolverDir, { recursive: true, force: true });
});

describe("the hub's NATS user", () => {
  test("runs the state store, intent publisher, audit log and bundle content store", async () => {
    const store = createJetStreamStore(
      { nc: hub },
      { bucketPrefix: "hubcheck" },
    );
    await store.start();
    const docs = defineCollection<unknown>("clusters", (value) => value);
    await store.put(docs, "alpha", { ok: true });
    expect((await store.get(docs, "alpha"))?.value).toEqual({ ok: true });
    await store.stop();

    const audit = createJetStreamAuditLog({ nc: hub }, { prefix: "hubcheck" });
    await audit.start();
    expect((await audit.append(record())).sequence).toBe(1);
    await audit.stop();

    expect((await publisher.read("alpha"))?.intent.generation).toBe(1);
    expect(await publisher.putBundleContent(te.encode("alpha's bundle"))).toBe(
      digest,
    );
  });
});

describe("an agent's NATS user", () => {
  test("reads its own intent with a direct get and follows its subject", async () => {
    await using nc = await agentFor("alpha");
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    const own = await jsm.direct.getMessage(intentsStream(), {
      last_by_subj: intentKvSubject("alpha"),
    });
    expect(own?.json<{ intent: { cluster: string } }>().intent.cluster).toBe(
      "alpha",
    );
    const received: string[] = [];
    nc.subscribe(intentSubject("alpha"), {
      callback: (_, msg) => {
        received.push(msg.string());
      },
    });
    await nc.flush();
    await publisher.publish(intentFor("alpha", 2));
    await waitFor(() => received.length === 1, { timeoutMs: 5_000 });
    expect(received[0]).toContain('"generation":2');
  });

  test("reads sealed bundle content with direct gets: its metadata by name, its chunks by sequence", async () => {
    await using nc = await agentFor("alpha");
    const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 2_000 });
    const bucket = bundleContentBucket();
    const key = contentKeys.keyOf(digest);
    const meta = await jsm.direct.getMessage(bundleContentStream(), {
      last_by_subj: `$O.${bucket}.M.${Base64UrlPaddedCodec.encode(sealedObjectName(key))}`,
    });
    const { nuid } = meta?.json<{ nuid: string }>() ?? { nuid: "" };
    const chunk = await jsm.direct.getMessage(bundleContentStream(), {
      seq: 1,
      next_by_subj: `$O.${bucket}.C.${nuid}`,
    });
    const sealed = chunk?.data ?? new Uint8Array();
    // What the store holds is not the content; the key from the intent opens it.
    expect(Buffer.from(sealed).includes(Buffer.from("alpha's bundle"))).toBe(
      false,
    );
    expect(te.encode("alpha's bundle")).toEqual(
      new Uint8Array(openContent(sealed, key, digest)),
    );
    // A key for other content does not.
    expect(() =>
      openContent(sealed, contentKeys.keyOf(sha256Digest("other")), digest),
    ).toThrow(/the key does not open it/);
  });

  test("seals content that a store created by an earlier version holds in clear, and turns on direct gets", async () => {
    const prefix = "legacy";
    const bucket = bundleContentBucket(prefix);
    const jsm = await jetstreamManager(hub);
    await jsm.streams.add({
      name: `OBJ_${bucket}`,
      subjects: [`$O.${bucket}.C.>`, `$O.${bucket}.M.>`],
      allow_rollup_hdrs: true,
      discard: DiscardPolicy.New,
      allow_direct: false,
    });
    const old = await new Objm(jetstream(hub)).open(bucket, false);
    await old.putBlob({ name: digest }, te.encode("alpha's bundle"));
    const legacy = createJetStreamIntentPublisher(
      { nc: hub, contentKeys },
      { prefix },
    );
    await legacy.start();
    try {
      const info = await jsm.streams.info(`OBJ_${bucket}`);
      expect(info.config.allow_direct).toBe(true);
      // The clear copy is gone; the hub reads the content back from the sealed one.
      expect((await old.info(digest))?.deleted ?? true).toBe(true);
      const reader = createJetStreamObjectReader(
        { nc: hub, contentKeys },
        { prefix },
      );
      expect(new Uint8Array((await reader.read(digest)) ?? [])).toEqual(
        te.encode("alpha's bundle"),
      );
    } finally {
      await legacy.stop();
    }
  });

  test("is denied another cluster's intent: direct get, subscription, KV watch", async () => {
    await using nc = await agentFor("alpha");
    const errors = serverErrors(nc);
    const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 2_000 });
    await expect(
      jsm.direct.getMessage(intentsStream(), {
        last_by_subj: intentKvSubject("beta"),
      }),
    ).rejects.toThrow(/Permissions Violation for Publish/);
    // The body form of the same API, which could name any key, is not granted either.
    await expect(
      nc.request(
        `$JS.API.DIRECT.GET.${intentsStream()}`,
        JSON.stringify({ last_by_subj: intentKvSubject("beta") }),
        { timeout: 2_000 },
      ),
    ).rejects.toThrow(/Permissions Violation for Publish/);
    nc.subscribe(intentSubject("beta"));
    await waitFor(
      () =>
        errors.some((e) =>
          e.includes(`Subscription to "${intentSubject("beta")}"`),
        ),
      { timeoutMs: 5_000 },
    );
    const kv = await new Kvm(jetstream(nc, { timeout: 2_000 })).open(
      "flotilla-intents",
    );
    await expect(kv.watch({ key: "beta" })).rejects.toThrow(
      /Permissions Violation for Publish to "\$JS.API.CONSUMER.CREATE/,
    );
  });

  test("cannot publish intents: not on its subject, not on the KV subject", async () => {
    await using nc = await agentFor("alpha");
    const errors = serverErrors(nc);
    const heard: string[] = [];
    hub.subscribe(intentSubject("alpha"), {
      callback: (_, msg) => {
        heard.push(msg.string());
      },
    });
    await hub.flush();
    nc.publish(intentSubject("alpha"), "forged");
    await expect(
      nc.request(intentKvSubject("alpha"), "forged", { timeout: 2_000 }),
    ).rejects.toThrow(/Permissions Violation for Publish/);
    await waitFor(
      () =>
        errors.some((e) =>
          e.includes(`Publish to "${intentSubject("alpha")}"`),
        ),
      { timeoutMs: 5_000 },
    );
    await hub.flush();
    expect(heard).toEqual([]);
    expect((await publisher.read("alpha"))?.intent.cluster).toBe("alpha");
  });

  test("cannot create a consumer, list the object store nor read hub state", async () => {
    await using nc = await agentFor("alpha");
    const js = jetstream(nc, { timeout: 2_000 });
    // Opening with the object store client needs account info, which is not granted.
    await expect(
      new Objm(js).open(bundleContentBucket(), false),
    ).rejects.toThrow(/Permissions Violation/);
    const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 2_000 });
    const bucket = bundleContentBucket();
    await expect(
      jsm.consumers.add(`OBJ_${bucket}`, {
        name: "lister",
        filter_subject: `$O.${bucket}.M.>`,
        deliver_subject: `${agentInboxPrefix("alpha")}.list`,
        ack_policy: AckPolicy.None,
      }),
    ).rejects.toThrow(/Permissions Violation/);
    await expect(jsm.streams.info("KV_hubcheck-clusters")).rejects.toThrow(
      /Permissions Violation/,
    );
    await expect(
      jsm.direct.getMessage("KV_hubcheck-clusters", {
        last_by_subj: "$KV.hubcheck-clusters.alpha",
      }),
    ).rejects.toThrow(/Permissions Violation/);
    await expect(jsm.streams.names().next()).rejects.toThrow(
      /Permissions Violation/,
    );
  });

  test("with an expired JWT is refused at connect", async () => {
    const past = issuerFor({ now: () => 0 });
    const issued = await past.issue("alpha", Date.now() - 60_000);
    // nats-server 2.9 answers "Authorization Violation" without a reason on the wire.
    await expect(connectWith(issued.creds, "alpha")).rejects.toThrow(
      /Authorization Violation/,
    );
    // The same user, but still valid, connects: the expiry alone made the difference.
    const valid = await past.issue("alpha", Date.now() + 60_000);
    await (await connectWith(valid.creds, "alpha")).close();
  });

  test("is not issued for a bad cluster name or an expiry in the past", async () => {
    await expect(
      issuer.issue("Not_A_Label", Date.now() + 60_000),
    ).rejects.toThrow(/Invalid cluster name "Not_A_Label"/);
    await expect(issuer.issue("alpha", Date.now() - 1)).rejects.toThrow(
      /expiresAtMs .* must be a time in the future/,
    );
  });
});

describe("revoking an agent's user", () => {
  async function agentsAccountOf(
    store: ReturnType<typeof createMemoryStore>,
    issuedAtS = decode(setup.agentsAccount.jwt).iat,
  ): Promise<AgentsAccount> {
    const account = createAgentsAccount({
      store,
      system: await connect({
        servers: server.url,
        authenticator: credsAuthenticator(te.encode(setup.hubSystemCreds)),
        maxReconnectAttempts: -1,
        reconnectTimeWait: 100,
      }),
      signer: fromSeed(te.encode(setup.operator.signingSeed)),
      template: {
        name: setup.agentsAccount.name,
        publicKey: setup.agentsAccount.publicKey,
        issuedAtS,
        claims: agentsAccountClaims({
          flotillaAccount: setup.account.publicKey,
          signingKey: fromSeed(
            te.encode(setup.agentsAccount.signingSeed),
          ).getPublicKey(),
          prefix: "flotilla",
          revocations: {},
        }),
      },
      now: Date.now,
      log: pino({ level: "silent" }),
    });
    await account.start();
    return account;
  }

  async function agentUser(cluster: string): Promise<{
    creds: string;
    user: { publicKey: string; expiresAtMs: number };
  }> {
    const expiresAtMs = Date.now() + 3_600_000;
    const issued = await issuer.issue(cluster, expiresAtMs);
    return {
      creds: issued.creds,
      user: { publicKey: issued.userPublicKey, expiresAtMs },
    };
  }

  test("closes its connections, refuses it from then on, and leaves other agents alone", async () => {
    const store = createMemoryStore();
    await store.start();
    const account = await agentsAccountOf(store);
    const gamma = await agentUser("gamma");
    const delta = await agentUser("delta");
    const gammaNc = await connect({
      servers: server.url,
      authenticator: credsAuthenticator(te.encode(gamma.creds)),
      inboxPrefix: agentInboxPrefix("gamma"),
      reconnect: false,
    });
    await using deltaNc = await connectWith(delta.creds, "delta");
    try {
      await account.revoke([gamma.user]);
      await waitFor(() => gammaNc.isClosed(), { timeoutMs: 20_000 });
      await expect(connectWith(gamma.creds, "gamma")).rejects.toThrow(
        /Authorization Violation/,
      );
      // delta still reads its intent.
      const jsm = await jetstreamManager(deltaNc, { checkAPI: false });
      await deltaNc.flush();
      expect(
        await jsm.direct.getMessage(intentsStream(), {
          last_by_subj: intentKvSubject("delta"),
        }),
      ).toBeNull();
    } finally {
      await account.stop();
      if (!gammaNc.isClosed()) await gammaNc.close();
    }
  });

  test("pushes in a later second than the setup's JWT, which the server preloads at every start", async () => {
    const store = createMemoryStore();
    await store.start();
    // A setup made in this very second: a push in it would lose to the preload.
    const setupS = Math.floor(Date.now() / 1000);
    const account = await agentsAccountOf(store, setupS);
    try {
      const stored = await readFile(
        join(resolverDir, `${setup.agentsAccount.publicKey}.jwt`),
        "utf8",
      );
      expect(decode(stored.trim()).iat).toBeGreaterThan(setupS);
    } finally {
      await account.stop();
    }
  });

  test("holds after the server restarts, and is pushed again when the server lost its resolver directory", async () => {
    const store = createMemoryStore();
    await store.start();
    const account = await agentsAccountOf(store);
    const epsilon = await agentUser("epsilon");
    try {
      await account.revoke([epsilon.user]);
      // A push the server did not answer in time is retried in the background: the server has
      // the revocation once it refuses the user, and only then does a restart test anything.
      await untilRefused(
        epsilon.creds,
        "epsilon",
        "the server to take the revocation",
      );
      await server.restart();
      await expect(connectWith(epsilon.creds, "epsilon")).rejects.toThrow(
        /Authorization Violation/,
      );
      // Without the directory, the server starts from the preloaded account (no revocations);
      // the hub pushes its own again as soon as its system connection is back.
      await server.halt();
      await rm(resolverDir, { recursive: true, force: true });
      await server.restart();
      await untilRefused(
        epsilon.creds,
        "epsilon",
        "the revocation to be pushed again",
      );
    } finally {
      await account.stop();
      // Later tests need the hub's connection back. A flush sent while the client is still
      // reconnecting may hang: each attempt gets a second, and the reconnection up to 30.
      await waitFor(
        () =>
          Promise.race([
            hub.flush().then(
              () => true,
              () => false,
            ),
            new Promise<boolean>((resolve) =>
              setTimeout(() => {
                resolve(false);
              }, 1_000).unref(),
            ),
          ]),
        { timeoutMs: 30_000, message: "the hub's NATS connection to be back" },
      );
    }
  }, 90_000);
});

describe("flotilla-hub nats-setup", () => {
  test("writes its files readable by the owner only and refuses to overwrite them", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flotilla-nats-setup-"));
    try {
      await runNatsSetup({ outDir: dir, accountName: "fleet", force: false });
      expect((await readdir(dir)).sort()).toEqual(
        Object.values(NATS_SETUP_FILES).sort(),
      );
      for (const name of Object.values(NATS_SETUP_FILES)) {
        expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600);
      }
      await expect(
        runNatsSetup({ outDir: dir, accountName: undefined, force: false }),
      ).rejects.toThrow(/already exist; pass --force/);
      await writeFile(join(dir, NATS_SETUP_FILES.hubCreds), "old", {
        mode: 0o644,
      });
      await runNatsSetup({ outDir: dir, accountName: undefined, force: true });
      const creds = join(dir, NATS_SETUP_FILES.hubCreds);
      expect((await stat(creds)).mode & 0o777).toBe(0o600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
