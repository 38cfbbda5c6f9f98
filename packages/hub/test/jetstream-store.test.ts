import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { FlotillaError } from "@flotilla/core";
import {
  createJetStreamStore,
  type JetStreamStoreOptions,
} from "@flotilla/hub";
import {
  COLLECTION_NAMES,
  DEFAULT_MAX_VALUE_BYTES,
  KV_OVERHEAD_BYTES,
} from "@flotilla/hub/testing";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import {
  collect,
  describeStateStoreContract,
  docs,
  type StoreFixture,
} from "./state-store.contract.js";

function connectTo(server: NatsServer): Promise<NatsConnection> {
  // Reconnect forever, quickly: the store must outlive NATS restarts.
  return connect({
    servers: server.url,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 50,
  });
}

let fixtures = 0;

/** A store and a peer on their own connections, with buckets no other test uses. */
async function openStores(
  server: NatsServer,
  options: JetStreamStoreOptions = {},
): Promise<StoreFixture & { bucketPrefix: string }> {
  const bucketPrefix = options.bucketPrefix ?? `test${String(++fixtures)}`;
  const connections = [await connectTo(server), await connectTo(server)];
  const [store, peer] = connections.map((nc) =>
    createJetStreamStore(
      { nc },
      { timeoutMs: 2_000, ...options, bucketPrefix },
    ),
  );
  await store!.start();
  await peer!.start();
  return {
    store: store!,
    peer: peer!,
    bucketPrefix,
    async [Symbol.asyncDispose]() {
      await store!.stop();
      await peer!.stop();
      await Promise.all(connections.map((nc) => nc.close()));
    },
  };
}

async function errorOf(
  promise: Promise<unknown>,
): Promise<FlotillaError | undefined> {
  return promise.then(
    () => undefined,
    (e: unknown) => (e instanceof FlotillaError ? e : undefined),
  );
}

describe("shared server", () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server.stop();
  });
  describeStateStoreContract("JetStream KV", () => openStores(server));
});

describe("createJetStreamStore", () => {
  test("start creates one file-backed bucket per collection, keeping one value per key", async () => {
    await using server = await startNatsServer();
    await using fx = await openStores(server);
    const nc = await connectTo(server);
    try {
      const jsm = await jetstreamManager(nc);
      for (const name of COLLECTION_NAMES) {
        const { config } = await jsm.streams.info(
          `KV_${fx.bucketPrefix}-${name}`,
        );
        expect(config).toMatchObject({
          storage: "file",
          max_msgs_per_subject: 1,
          max_msg_size: DEFAULT_MAX_VALUE_BYTES + KV_OVERHEAD_BYTES,
        });
      }
    } finally {
      await nc.close();
    }
  });

  test("a new store on the same server sees what an earlier one stored", async () => {
    await using server = await startNatsServer();
    let revision: number;
    {
      await using first = await openStores(server, { bucketPrefix: "hub" });
      revision = await first.store.put(docs, "run-1", { name: "run-1", n: 1 });
    }
    await using second = await openStores(server, { bucketPrefix: "hub" });
    expect(await second.store.get(docs, "run-1")).toEqual({
      key: "run-1",
      value: { name: "run-1", n: 1 },
      revision,
    });
  });

  test("data survives a nats-server restart, revisions included", async () => {
    await using server = await startNatsServer();
    await using fx = await openStores(server);
    const revision = await fx.store.put(docs, "run-1", { name: "run-1", n: 1 });

    await server.restart();

    const entry = await waitFor(() => fx.store.get(docs, "run-1"), {
      timeoutMs: 10_000,
      message: "the store to read again after the restart",
    });
    expect(entry).toEqual({
      key: "run-1",
      value: { name: "run-1", n: 1 },
      revision,
    });
    // Compare-and-set still works against the revision read before the restart.
    await fx.store.put(
      docs,
      "run-1",
      { name: "run-1", n: 2 },
      { expectedRevision: revision },
    );
    // The peer's connection reconnects on its own schedule.
    const seen = await waitFor(() => fx.peer.get(docs, "run-1"), {
      timeoutMs: 10_000,
      message: "the peer to read again after the restart",
    });
    expect(seen.value.n).toBe(2);
  });

  test("calls during an outage fail with unavailable and succeed once NATS is back", async () => {
    await using server = await startNatsServer();
    await using fx = await openStores(server);
    await fx.store.put(docs, "run-1", { name: "run-1", n: 1 });

    await server.halt();

    // A call made before the client notices the outage times out (also `unavailable`); once it
    // has noticed, calls fail at once.
    await waitFor(
      async () => {
        const error = await errorOf(fx.store.get(docs, "run-1"));
        expect(error?.code).toBe("unavailable");
        return (
          error?.message ===
          'Cannot get "runs/run-1": the NATS connection is down'
        );
      },
      { timeoutMs: 10_000, message: "get to fail fast with unavailable" },
    );
    for (const call of [
      fx.store.put(docs, "run-2", { name: "run-2", n: 2 }),
      fx.store.delete(docs, "run-1"),
      fx.store.list(docs),
      fx.store.watch(docs, { signal: new AbortController().signal }),
    ]) {
      expect((await errorOf(call))?.code).toBe("unavailable");
    }

    await server.restart();

    await waitFor(() => fx.store.get(docs, "run-1"), {
      timeoutMs: 10_000,
      message: "the store to read again after the restart",
    });
    await fx.store.put(docs, "run-2", { name: "run-2", n: 2 });
    expect((await fx.store.list(docs)).map((e) => e.key)).toEqual([
      "run-1",
      "run-2",
    ]);
  });

  test("a watch keeps delivering across a nats-server restart", async () => {
    await using server = await startNatsServer();
    await using fx = await openStores(server);
    const controller = new AbortController();
    const watch = collect(
      await fx.peer.watch(docs, { signal: controller.signal }),
    );
    await fx.store.put(docs, "before", { name: "before", n: 1 });
    await waitFor(() => watch.items.length === 1, {
      message: "the first change",
    });

    await server.restart();

    await waitFor(() => fx.store.get(docs, "before"), {
      timeoutMs: 10_000,
      message: "the store to read again after the restart",
    });
    await fx.store.put(docs, "after", { name: "after", n: 2 });
    await waitFor(() => watch.items.length === 2, {
      timeoutMs: 10_000,
      message: "the change made after the restart",
    });
    controller.abort();
    await watch.ended;
    expect(watch.items.map((c) => c.key)).toEqual(["before", "after"]);
  });

  test("start on a closed connection fails with unavailable", async () => {
    await using server = await startNatsServer();
    const nc = await connectTo(server);
    await nc.close();
    const store = createJetStreamStore({ nc });
    const error = await errorOf(store.start());
    expect(error?.code).toBe("unavailable");
    expect(error?.message).toMatch(/^Cannot start the JetStream state store: /);
  });

  test("start refuses a maxValueBytes that the server's max_payload cannot carry", async () => {
    await using server = await startNatsServer();
    const nc = await connectTo(server);
    try {
      const store = createJetStreamStore(
        { nc },
        { maxValueBytes: 1024 * 1024 },
      );
      const error = await errorOf(store.start());
      expect(error?.code).toBe("failed_precondition");
      expect(error?.message).toMatch(/max_payload \(1048576 bytes\)/);
    } finally {
      await nc.close();
    }
  });

  test("a bucketPrefix that NATS cannot use is rejected", () => {
    expect(() =>
      createJetStreamStore(
        { nc: undefined as unknown as NatsConnection },
        { bucketPrefix: "a.b" },
      ),
    ).toThrow(expect.objectContaining({ code: "invalid_argument" }) as Error);
  });
});
