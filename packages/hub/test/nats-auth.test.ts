/**
 * NATS authorization against a real nats-server 2.9 in operator mode (issue 6, part 3): the hub's
 * user can do everything the hub does; an agent's user (raw nats.js calls standing in for the
 * agent) reads its own intent and bundle-content objects by name and is denied everything else by
 * the server; the hub turns on direct gets of a bundle-content store created without them.
 */
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
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
import {
  createAgentNatsCredentialsIssuer,
  createJetStreamAuditLog,
  createJetStreamIntentPublisher,
  createJetStreamStore,
  createNatsAuthSetup,
  defineCollection,
  NATS_SETUP_FILES,
  runNatsSetup,
  type AgentNatsCredentialsIssuer,
  type IntentPublisher,
  type NatsAuthSetup,
} from "@flotilla/hub";
import {
  agentInboxPrefix,
  bundleContentBucket,
  intentKvSubject,
  intentsStream,
  intentSubject,
} from "@flotilla/protocol";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import { intentFor } from "./intents-contract.js";
import { record } from "./audit-log.contract.js";

const te = new TextEncoder();
let setup: NatsAuthSetup;
let server: NatsServer;
let hub: NatsConnection;
let publisher: IntentPublisher;
let issuer: AgentNatsCredentialsIssuer;
let digest: string;

function connectWith(creds: string, cluster?: string): Promise<NatsConnection> {
  return connect({
    servers: server.url,
    authenticator: credsAuthenticator(te.encode(creds)),
    ...(cluster === undefined
      ? {}
      : { inboxPrefix: agentInboxPrefix(cluster) }),
  });
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

beforeAll(async () => {
  setup = await createNatsAuthSetup();
  server = await startNatsServer({ config: setup.serverConfig });
  hub = await connectWith(setup.hubCreds);
  publisher = createJetStreamIntentPublisher({ nc: hub });
  await publisher.start();
  await publisher.publish(intentFor("alpha", 1));
  await publisher.publish(intentFor("beta", 1));
  digest = await publisher.putBundleContent(te.encode("alpha's bundle"));
  issuer = createAgentNatsCredentialsIssuer({
    signingKeySeed: setup.account.signingSeed,
    accountPublicKey: setup.account.publicKey,
    servers: [server.url],
  });
});

afterAll(async () => {
  await publisher.stop();
  await hub.close();
  await server.stop();
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

  test("reads a bundle-content object's metadata by name, not by sequence", async () => {
    await using nc = await agentFor("alpha");
    const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 2_000 });
    const bucket = bundleContentBucket();
    const meta = await jsm.direct.getMessage(`OBJ_${bucket}`, {
      last_by_subj: `$O.${bucket}.M.${Base64UrlPaddedCodec.encode(digest)}`,
    });
    expect(meta?.json<{ name: string }>().name).toBe(digest);
    await expect(
      jsm.streams.getMessage(`OBJ_${bucket}`, { seq: 1 }),
    ).rejects.toThrow(/Permissions Violation for Publish/);
  });

  test("can read a store created without direct gets once the hub has opened it", async () => {
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
    const legacy = createJetStreamIntentPublisher({ nc: hub }, { prefix });
    await legacy.start();
    try {
      const info = await jsm.streams.info(`OBJ_${bucket}`);
      expect(info.config.allow_direct).toBe(true);
      expect(info.state.messages).toBe(2);
      const agentIssuer = createAgentNatsCredentialsIssuer({
        signingKeySeed: setup.account.signingSeed,
        accountPublicKey: setup.account.publicKey,
        servers: [server.url],
        intentsPrefix: prefix,
      });
      const issued = await agentIssuer.issue("alpha", Date.now() + 60_000);
      await using nc = await connectWith(issued.creds, "alpha");
      const agentJsm = await jetstreamManager(nc, { checkAPI: false });
      const meta = await agentJsm.direct.getMessage(`OBJ_${bucket}`, {
        last_by_subj: `$O.${bucket}.M.${Base64UrlPaddedCodec.encode(digest)}`,
      });
      expect(meta?.json<{ size: number }>().size).toBe(14);
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

  test("cannot list the object store nor read hub state", async () => {
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
    const past = createAgentNatsCredentialsIssuer({
      signingKeySeed: setup.account.signingSeed,
      accountPublicKey: setup.account.publicKey,
      servers: [server.url],
      now: () => 0,
    });
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
