/**
 * The agent under NATS authorization (docs/security.md, "NATS: two accounts"), against a real
 * nats-server 2.9 in operator mode: connected with natsConnectOptions and the permissions the hub
 * grants, in the agents' account, the real intent watcher sees its own intent and getBundleContent
 * fetches and opens sealed content (small and multi-chunk) with direct gets only; another
 * cluster's intent, consumers and everything of the hub's account are denied by the server.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { randomBytes } from "node:crypto";
import {
  AckPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { Objm, type ObjectStore } from "@nats-io/obj";
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
} from "@nats-io/transport-node";
import type { ClusterIntent, FlotillaError } from "@flotilla/core";
import {
  bundleContentBucket,
  deriveContentKey,
  encodeIntentDocument,
  sealContent,
  sealedObjectName,
  intentKvSubject,
  intentsBucketSettings,
  intentsStream,
  sha256Digest,
} from "@flotilla/protocol";
import { getBundleContent } from "../src/intents/bundle-content.js";
import {
  createIntentWatcher,
  type IntentEvent,
} from "../src/intents/intent-watcher.js";
import { natsConnectOptions } from "../src/intents/nats-credentials.js";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import {
  createTestOperator,
  type TestOperator,
} from "./support/nats-operator.js";

const te = new TextEncoder();
let operator: TestOperator;
let server: NatsServer;
let hub: NatsConnection;
let store: ObjectStore;
const content = te.encode("alpha's bundle");
const digest = sha256Digest(content);
const contentSecret = randomBytes(32);
const keyOf = (d: string): string => deriveContentKey(contentSecret, d);
const ref = { digest, key: keyOf(digest) };

/** Stores `bytes` as the hub does: sealed with its key, under the name derived from the key. */
async function putSealed(bytes: Uint8Array): Promise<{
  digest: string;
  key: string;
}> {
  const d = sha256Digest(bytes);
  const key = keyOf(d);
  await store.putBlob(
    { name: sealedObjectName(key) },
    sealContent(bytes, key, d),
  );
  return { digest: d, key };
}
const contentBucket = bundleContentBucket();
const stream = `OBJ_${contentBucket}`;

function intentFor(cluster: string, generation: number): ClusterIntent {
  return {
    apiVersion: "flotilla.dev/v1",
    cluster,
    generation,
    bundles: { web: { revision: "r1", digest } },
  };
}

function agentAlpha(prefix?: string): Promise<NatsConnection> {
  return connectAgent(
    "alpha",
    operator.agentCreds("alpha", Date.now() + 3_600_000, prefix),
  );
}

/** A push consumer as an agent would ask for it, with a filter and a delivery in its inbox. */
function addConsumer(
  jsm: JetStreamManager,
  filter: string,
): Promise<{ readonly num_pending: number }> {
  return jsm.consumers.add(stream, {
    name: `probe_${String(Date.now())}`,
    filter_subject: filter,
    deliver_subject: "_INBOX_alpha.probe",
    ack_policy: AckPolicy.None,
  });
}

function connectAgent(cluster: string, creds: string): Promise<NatsConnection> {
  return connect({
    servers: server.url,
    ...natsConnectOptions({ creds, cluster }),
  });
}

beforeAll(async () => {
  operator = createTestOperator(["flotilla", "spare"]);
  server = await startNatsServer({ config: operator.serverConfig });
  hub = await connect({
    servers: server.url,
    authenticator: credsAuthenticator(te.encode(operator.hubCreds)),
  });
  const js = jetstream(hub);
  const { bucket, ...settings } = intentsBucketSettings();
  const kv = await new Kvm(js).create(bucket, settings);
  await kv.put("alpha", encodeIntentDocument(intentFor("alpha", 1)).bytes);
  await kv.put("beta", encodeIntentDocument(intentFor("beta", 1)).bytes);
  store = await new Objm(js).create(contentBucket);
  await putSealed(content);
});

afterAll(async () => {
  await hub.close();
  await server.stop();
});

describe("an agent connected with natsConnectOptions", () => {
  test("watches its own intent and fetches its bundle content", async () => {
    const nc = await connectAgent(
      "alpha",
      operator.agentCreds("alpha", Date.now() + 3_600_000),
    );
    try {
      const events: IntentEvent[] = [];
      const errors: FlotillaError[] = [];
      await using watcher = createIntentWatcher(
        { nc },
        {
          cluster: "alpha",
          resyncIntervalMs: 0,
          onEvent: (e) => events.push(e),
          onError: (e) => errors.push(e),
        },
      );
      await watcher.start();
      expect(watcher.current()).toMatchObject({
        type: "IntentReceived",
        intent: { generation: 1 },
      });
      // A later write arrives through the republished subject.
      const kv = await new Kvm(jetstream(hub)).open(
        intentsBucketSettings().bucket,
      );
      await kv.put("alpha", encodeIntentDocument(intentFor("alpha", 2)).bytes);
      await waitFor(() => events.length === 2, { timeoutMs: 5_000 });
      expect(events[1]).toMatchObject({ intent: { generation: 2 } });
      expect(errors).toEqual([]);
      expect(
        new TextDecoder().decode(await getBundleContent({ nc }, ref)),
      ).toBe("alpha's bundle");
    } finally {
      await nc.close();
    }
  });

  test("is denied another cluster's intent by the server", async () => {
    const nc = await connectAgent(
      "alpha",
      operator.agentCreds("alpha", Date.now() + 3_600_000),
    );
    try {
      const jsm = await jetstreamManager(nc, {
        checkAPI: false,
        timeout: 2_000,
      });
      await expect(
        jsm.direct.getMessage(intentsStream(), {
          last_by_subj: intentKvSubject("beta"),
        }),
      ).rejects.toThrow(/Permissions Violation for Publish/);
      const errors: FlotillaError[] = [];
      await using watcher = createIntentWatcher(
        { nc },
        {
          cluster: "beta",
          resyncIntervalMs: 0,
          timeoutMs: 1_000,
          onError: (e) => errors.push(e),
        },
      );
      void watcher.start().catch(() => undefined);
      await waitFor(() => errors.length > 0, { timeoutMs: 5_000 });
      expect(watcher.current()).toBeUndefined();
    } finally {
      await nc.close();
    }
  });

  test("cannot connect with expired credentials, nor with something that is not creds", async () => {
    await expect(
      connectAgent("alpha", operator.agentCreds("alpha", Date.now() - 60_000)),
    ).rejects.toThrow(/Authorization Violation/);
    expect(() =>
      natsConnectOptions({ creds: "not creds", cluster: "alpha" }),
    ).toThrow(/creds is not a NATS .creds file/);
    expect(() =>
      natsConnectOptions({ creds: operator.hubCreds, cluster: "Alpha" }),
    ).toThrow(/Cannot use NATS credentials for cluster "Alpha"/);
  });
});

describe("bundle content under an agent's permissions", () => {
  test("is fetched and opened, small and multi-chunk, its size and digest checked", async () => {
    const large = randomBytes(5 * 1024 * 1024);
    const largeRef = await putSealed(large);
    expect(
      (await store.info(sealedObjectName(largeRef.key)))?.chunks,
    ).toBeGreaterThan(10);
    await using nc = await agentAlpha();
    expect(await getBundleContent({ nc }, ref)).toEqual(content);
    const fetched = await getBundleContent({ nc }, largeRef);
    // Buffer.equals, not toEqual: a deep comparison of 5 MiB element by element takes long.
    expect(fetched.byteLength).toBe(large.byteLength);
    expect(Buffer.from(fetched).equals(large)).toBe(true);
    await expect(
      getBundleContent({ nc }, largeRef, { maxBytes: 1024 * 1024 }),
    ).rejects.toMatchObject({ code: "failed_precondition" });
    const never = sha256Digest("never stored");
    await expect(
      getBundleContent({ nc }, { digest: never, key: keyOf(never) }),
    ).rejects.toThrow(/: it is not stored$/);
  });

  test("is refused when the key does not open it: another content's key, or a changed object", async () => {
    await using nc = await agentAlpha();
    // The key of other content names another object: not stored.
    await expect(
      getBundleContent({ nc }, { digest, key: keyOf(sha256Digest("x")) }),
    ).rejects.toThrow(/it is not stored/);
    // An object under the right name whose bytes were sealed for other content.
    const other = te.encode("beta's bundle");
    const otherDigest = sha256Digest(other);
    const forged = sha256Digest("forged");
    await store.putBlob(
      { name: sealedObjectName(keyOf(forged)) },
      sealContent(other, keyOf(forged), otherDigest),
    );
    await expect(
      getBundleContent({ nc }, { digest: forged, key: keyOf(forged) }),
    ).rejects.toMatchObject({
      code: "internal",
      message: expect.stringMatching(/the key does not open it/) as unknown,
    });
  });

  test("a missing bucket is unavailable within the timeout, not a hang", async () => {
    await using nc = await agentAlpha("spare");
    const error = await getBundleContent({ nc }, ref, {
      prefix: "spare",
      timeoutMs: 500,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: expect.stringMatching(
        /^(unavailable|deadline_exceeded|not_found)$/,
      ) as unknown,
    });
  });

  test("is denied every consumer and every read of the hub's account but the exported direct gets", async () => {
    await using nc = await agentAlpha();
    const jsm = await jetstreamManager(nc, {
      checkAPI: false,
      timeout: 2_000,
    });
    const denied = /Permissions Violation for Publish/;
    await expect(jsm.streams.getMessage(stream, { seq: 1 })).rejects.toThrow(
      /Permissions Violation for Publish to "\$JS.API.STREAM.MSG.GET/,
    );
    // No consumer at all: on the chunks, the meta subjects, the whole stream.
    await expect(addConsumer(jsm, `$O.${contentBucket}.C.>`)).rejects.toThrow(
      denied,
    );
    await expect(addConsumer(jsm, `$O.${contentBucket}.M.>`)).rejects.toThrow(
      denied,
    );
    await expect(addConsumer(jsm, ">")).rejects.toThrow(denied);
    await expect(jsm.streams.info(stream)).rejects.toThrow(denied);
    await expect(
      new Objm(jetstream(nc)).open(contentBucket, false),
    ).rejects.toThrow(/Permissions Violation for Publish to "\$JS.API.INFO"/);
    // What the exported direct gets give by sequence is sealed: never the content in clear.
    const first = await jsm.direct.getMessage(stream, {
      seq: 1,
      next_by_subj: `$O.${contentBucket}.C.>`,
    });
    expect(first).not.toBeNull();
    expect(Buffer.from(first?.data ?? []).includes(Buffer.from(content))).toBe(
      false,
    );
  });
});
