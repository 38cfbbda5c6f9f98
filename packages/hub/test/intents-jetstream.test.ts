import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { randomBytes } from "node:crypto";
import { contentKeysOfSecret } from "../src/security/content-keys.js";

import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { Objm } from "@nats-io/obj";
import {
  connect,
  headers,
  type Msg,
  type NatsConnection,
} from "@nats-io/transport-node";
import {
  createJetStreamIntentPublisher,
  type IntentPublisher,
  type JetStreamIntentPublisherOptions,
} from "@flotilla/hub";
import { INTENT_FENCES_HEADER } from "@flotilla/hub/testing";
import {
  bundleContentBucket,
  encodeIntentDocument,
  openContent,
  SEALING_OVERHEAD_BYTES,
  sealedObjectName,
  INTENT_GENERATION_HEADER,
  INTENT_HASH_HEADER,
  intentsStream,
  intentSubject,
} from "@flotilla/protocol";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import {
  describeIntentPublisherContract,
  intentFor,
  rejection,
  type PublisherFixture,
} from "./intents-contract.js";
import { describeFencedWritesContract } from "./intents-fences-contract.js";

const contentKeys = contentKeysOfSecret(randomBytes(32));

function connectTo(server: NatsServer): Promise<NatsConnection> {
  // Reconnect forever, quickly: the publisher must outlive NATS restarts.
  return connect({
    servers: server.url,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 50,
  });
}

let fixtures = 0;

/** Two publishers on their own connections, with buckets no other test uses. */
async function openPublishers(
  server: NatsServer,
  options: JetStreamIntentPublisherOptions = {},
): Promise<PublisherFixture & { prefix: string; nc: NatsConnection }> {
  const prefix = options.prefix ?? `test${String(++fixtures)}`;
  const connections = [await connectTo(server), await connectTo(server)];
  const [publisher, peer] = connections.map((nc) =>
    createJetStreamIntentPublisher(
      { nc, contentKeys },
      { timeoutMs: 2_000, ...options, prefix },
    ),
  ) as [IntentPublisher, IntentPublisher];
  await publisher.start();
  await peer.start();
  return {
    publisher,
    peer,
    prefix,
    nc: connections[0]!,
    async [Symbol.asyncDispose]() {
      await publisher.stop();
      await peer.stop();
      await Promise.all(connections.map((nc) => nc.close()));
    },
  };
}

describe("shared server", () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  describeIntentPublisherContract("JetStream", () => openPublishers(server));
  describeFencedWritesContract("JetStream", () => openPublishers(server));

  test("start creates a file-backed bucket keeping one value per key, republished for agents", async () => {
    await using fx = await openPublishers(server);
    const jsm = await jetstreamManager(fx.nc);
    const { config } = await jsm.streams.info(intentsStream(fx.prefix));
    expect(config).toMatchObject({
      storage: "file",
      max_msgs_per_subject: 1,
      allow_direct: true,
      republish: {
        src: `$KV.${fx.prefix}-intents.>`,
        dest: `${fx.prefix}.intents.>`,
      },
    });
    const objects = await jsm.streams.info(
      `OBJ_${bundleContentBucket(fx.prefix)}`,
    );
    expect(objects.config.storage).toBe("file");
  });

  test("the agents' subject carries exactly the stored writes, with their revisions", async () => {
    await using fx = await openPublishers(server);
    const seen: Msg[] = [];
    const sub = fx.nc.subscribe(intentSubject("web-1", fx.prefix), {
      callback: (_, m) => {
        seen.push(m);
      },
    });
    await fx.nc.flush();
    const first = await fx.publisher.publish(intentFor("web-1", 1));
    // The peer stores generation 2; the publisher, still holding generation 1's revision, then
    // writes its own generation 2. The server refuses that write (compare-and-set), so agents
    // must not hear of it, although it was sent to the bucket's subject.
    const second = await fx.peer.publish(intentFor("web-1", 2, "peer"));
    const refused = await rejection(
      fx.publisher.publish(intentFor("web-1", 2, "mine")),
    );
    expect(refused).toMatchObject({ reason: "hash_mismatch" });
    await fx.publisher.remove("web-1");
    await waitFor(() => seen.length >= 3, { message: "three messages" });
    await fx.nc.flush();
    sub.unsubscribe();
    expect(
      seen.map((m) => [
        m.headers?.get("Nats-Sequence"),
        m.headers?.get("KV-Operation"),
        m.headers?.get(INTENT_GENERATION_HEADER),
      ]),
    ).toEqual([
      [String(first.revision), "", "1"],
      [String(second.revision), "", "2"],
      [expect.any(String), "DEL", ""],
    ]);
    expect(seen[1]?.headers?.get(INTENT_HASH_HEADER)).toBe(second.hash);
    expect(seen[1]?.json()).toEqual({
      hash: second.hash,
      intent: second.intent,
    });
  });

  test("fences travel in a Flotilla-Fences header beside the document agents parse, delete markers included", async () => {
    await using fx = await openPublishers(server);
    const seen: Msg[] = [];
    const sub = fx.nc.subscribe(intentSubject("web-1", fx.prefix), {
      callback: (_, m) => {
        seen.push(m);
      },
    });
    await fx.nc.flush();
    await fx.publisher.publish(intentFor("web-1", 1), {
      fence: { unit: "bundles", epoch: 7 },
    });
    const stored = await fx.peer.publish(intentFor("web-1", 2), {
      fence: { unit: "run/a", epoch: 41 },
    });
    await fx.publisher.remove("web-1");
    await waitFor(() => seen.length >= 3, { message: "three messages" });
    sub.unsubscribe();
    expect(seen.map((m) => m.headers?.get(INTENT_FENCES_HEADER))).toEqual([
      "bundles=7",
      "run/a=41,bundles=7",
      "run/a=41,bundles=7",
    ]);
    // The document is what it always was: agents refuse unknown fields.
    expect(seen[1]?.json()).toEqual({
      hash: stored.hash,
      intent: stored.intent,
    });
  });

  test("a fenced publish of a new generation is one write: no read while the publisher's memory holds", async () => {
    await using fx = await openPublishers(server);
    await using watcher = await connectTo(server);
    let reads = 0;
    const sub = watcher.subscribe(
      `$JS.API.DIRECT.GET.${intentsStream(fx.prefix)}.>`,
      {
        callback: () => {
          reads++;
        },
      },
    );
    await watcher.flush();
    const readsDuring = async (write: Promise<unknown>): Promise<number> => {
      const before = reads;
      await write;
      await watcher.flush();
      return reads - before;
    };
    const run = (epoch: number) => ({ fence: { unit: "run/a", epoch } });
    const { publisher, peer } = fx;
    // A new cluster is created without a read; then each new generation is one write.
    expect(
      await readsDuring(publisher.publish(intentFor("web-1", 1), run(1))),
    ).toBe(0);
    expect(
      await readsDuring(publisher.publish(intentFor("web-1", 2), run(1))),
    ).toBe(0);
    expect(
      await readsDuring(publisher.publish(intentFor("web-1", 3), run(2))),
    ).toBe(0);
    expect(await readsDuring(publisher.publish(intentFor("web-1", 4)))).toBe(0);
    // The peer has not seen the cluster: its attempt to create it loses, it reads once, writes.
    expect(await readsDuring(peer.publish(intentFor("web-1", 5), run(2)))).toBe(
      1,
    );
    // Another writer stored since: the lost compare-and-set reads once, then writes.
    expect(
      await readsDuring(publisher.publish(intentFor("web-1", 6), run(2))),
    ).toBe(1);
    sub.unsubscribe();
  });

  test("a stored Flotilla-Fences header that does not parse is refused as internal, naming it", async () => {
    await using fx = await openPublishers(server);
    const js = jetstream(fx.nc);
    const h = headers();
    h.set(INTENT_FENCES_HEADER, "run/a=x");
    const { bytes } = encodeIntentDocument(intentFor("web-1", 1));
    await js.publish(`$KV.${fx.prefix}-intents.web-1`, bytes, { headers: h });
    for (const call of [
      fx.publisher.read("web-1"),
      fx.publisher.publish(intentFor("web-1", 2)),
    ]) {
      const error = await rejection(call);
      expect(error.code).toBe("internal");
      expect(error.message).toContain(
        'the stored Flotilla-Fences header "run/a=x" is invalid: Flotilla-Fences[0]: must be a positive integer',
      );
    }
  });

  test("bundle content is stored sealed once, under a name that is not its digest, and re-stored if the stored bytes differ", async () => {
    await using fx = await openPublishers(server);
    const content = new TextEncoder().encode("kind: Deployment\n".repeat(5000));
    const digest = await fx.publisher.putBundleContent(content);
    const objects = await new Objm(jetstream(fx.nc)).open(
      bundleContentBucket(fx.prefix),
    );
    const key = contentKeys.keyOf(digest);
    const name = sealedObjectName(key);
    expect(await objects.info(digest)).toBeNull();
    const sealed = (await objects.getBlob(name)) ?? new Uint8Array();
    expect(Buffer.from(sealed).includes(Buffer.from("kind: Deployment"))).toBe(
      false,
    );
    expect(openContent(sealed, key, digest)).toEqual(content);
    const jsm = await jetstreamManager(fx.nc);
    const stream = `OBJ_${bundleContentBucket(fx.prefix)}`;
    const before = (await jsm.streams.info(stream)).state.messages;
    await fx.peer.putBundleContent(content);
    expect((await jsm.streams.info(stream)).state.messages).toBe(before);

    // Other bytes under the name (a damaged object): the next put repairs it.
    await objects.putBlob({ name }, new TextEncoder().encode("junk"));
    await fx.publisher.putBundleContent(content);
    expect(
      openContent((await objects.getBlob(name)) ?? sealed, key, digest),
    ).toEqual(content);
  });

  test("listBundleContent shows chunks no object names, and deleted objects' leftovers, unnamed; removing them frees the stream", async () => {
    await using fx = await openPublishers(server);
    const bucket = bundleContentBucket(fx.prefix);
    const js = jetstream(fx.nc);
    const jsm = await jetstreamManager(fx.nc);
    const stream = `OBJ_${bucket}`;
    const kept = await fx.publisher.putBundleContent(
      new TextEncoder().encode("kind: ConfigMap\n"),
    );
    // An upload cut short: chunks, and never the metadata that names them.
    await js.publish(`$O.${bucket}.C.cutshort`, new Uint8Array(1000));
    await js.publish(`$O.${bucket}.C.cutshort`, new Uint8Array(1000));
    // A deleted object leaves its metadata behind, marked deleted.
    const objects = await new Objm(js).open(bucket);
    await objects.putBlob({ name: "gone" }, new Uint8Array(10));
    await objects.delete("gone");

    const listed = await fx.peer.listBundleContent();
    expect(listed.map((c) => [c.name ?? "(none)", c.sizeBytes]).sort()).toEqual(
      [
        [fx.peer.contentName(kept), 16 + SEALING_OVERHEAD_BYTES],
        ["(none)", 2000],
        ["(none)", expect.any(Number)],
      ].sort(),
    );

    await fx.publisher.removeBundleContent(
      listed.filter((c) => c.name === undefined).map((c) => c.id),
    );

    expect((await fx.peer.listBundleContent()).map((c) => c.name)).toEqual([
      fx.peer.contentName(kept),
    ]);
    const { state } = await jsm.streams.info(stream, {
      subjects_filter: `$O.${bucket}.>`,
    });
    expect(Object.keys(state.subjects ?? {})).toHaveLength(2);
  });

  test("removeBundleContent refuses an id it did not give, removing nothing", async () => {
    await using fx = await openPublishers(server);
    const kept = await fx.publisher.putBundleContent(new Uint8Array([1, 2]));
    const error = await rejection(
      fx.publisher.removeBundleContent(['["$KV.other.key"]']),
    );
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toMatch(/is not an id listBundleContent gave/);
    expect((await fx.peer.listBundleContent()).map((c) => c.name)).toEqual([
      fx.peer.contentName(kept),
    ]);
  });

  test("read refuses a stored document that is not a valid intent, as internal", async () => {
    await using fx = await openPublishers(server);
    const kv = await new Kvm(jetstream(fx.nc)).open(`${fx.prefix}-intents`);
    await kv.put("web-1", "not json");
    const error = await rejection(fx.publisher.read("web-1"));
    expect(error.code).toBe("internal");
    expect(error.message).toContain("the stored document is invalid");
    // A publish overwrites it: only a bug or a foreign writer stores such a value.
    expect((await fx.publisher.publish(intentFor("web-1", 1))).written).toBe(
      true,
    );
  });
});

describe("createJetStreamIntentPublisher", () => {
  test("calls before start fail with unavailable", async () => {
    await using server = await startNatsServer();
    const nc = await connectTo(server);
    try {
      const publisher = createJetStreamIntentPublisher({ nc, contentKeys });
      const error = await rejection(publisher.publish(intentFor("web-1", 1)));
      expect(error.code).toBe("unavailable");
    } finally {
      await nc.close();
    }
  });

  test("start refuses an existing bucket without the republish rule agents follow", async () => {
    await using server = await startNatsServer();
    const nc = await connectTo(server);
    try {
      await new Kvm(jetstream(nc)).create("flotilla-intents", { history: 1 });
      const publisher = createJetStreamIntentPublisher({ nc, contentKeys });
      const error = await rejection(publisher.start());
      expect(error.code).toBe("failed_precondition");
      expect(error.message).toContain("republishes");
    } finally {
      await nc.close();
    }
  });

  test("calls during an outage fail with unavailable; publishing resumes after a restart", async () => {
    await using server = await startNatsServer();
    await using fx = await openPublishers(server);
    await fx.publisher.publish(intentFor("web-1", 1));
    await server.halt();
    await waitFor(
      async () =>
        (await rejection(fx.publisher.publish(intentFor("web-1", 2)))).code ===
        "unavailable",
      { message: "publish to fail with unavailable" },
    );
    await server.restart();
    const result = await waitFor(
      () => fx.publisher.publish(intentFor("web-1", 2)),
      { timeoutMs: 10_000, message: "publish to succeed after the restart" },
    );
    expect(result.written).toBe(true);
    // The peer's connection reconnects on its own schedule.
    const seen = await waitFor(() => fx.peer.read("web-1"), {
      timeoutMs: 10_000,
      message: "the peer to read again after the restart",
    });
    expect(seen.intent.generation).toBe(2);
  });

  test("bundle content larger than agents accept is refused with invalid_argument", async () => {
    await using server = await startNatsServer();
    await using fx = await openPublishers(server);
    const huge = new Uint8Array(64 * 1024 * 1024 + 1);
    const error = await rejection(fx.publisher.putBundleContent(huge));
    expect(error.code).toBe("invalid_argument");
  });
});
