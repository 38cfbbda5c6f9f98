/**
 * Admin updates without an expected revision when another writer changed the document behind this
 * hub's cache: two registries, group sets and strategy sets (two hubs) on one real nats-server,
 * each on its own JetStream store. The stale one loses its compare-and-set, re-reads and applies
 * its change on top; with an expected revision it is refused. A document written continuously by
 * someone else makes the update give up with UNAVAILABLE after a bounded number of tries.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { startNatsServer, type NatsServer } from "@flotilla/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterGroups } from "../src/clusters/cluster-groups.js";
import { createClusterRegistry } from "../src/clusters/cluster-registry.js";
import { createJetStreamStore } from "../src/store/jetstream-store.js";
import { createMemoryStore } from "../src/store/memory-store.js";
import { defineCollection, type StateStore } from "../src/store/state-store.js";
import { MAX_UPDATE_ATTEMPTS } from "../src/store/update-queue.js";
import { createUpdateStrategies } from "../src/strategies/update-strategies.js";

let server: NatsServer;
const connections: NatsConnection[] = [];
let buckets = 0;

beforeAll(async () => {
  server = await startNatsServer();
});

afterAll(async () => {
  await Promise.all(connections.map((nc) => nc.close()));
  await server.stop();
});

/** Two stores on their own connections over the same buckets: two hubs' views of one state. */
async function twoHubsStores(): Promise<[StateStore, StateStore]> {
  const bucketPrefix = `uq${String(++buckets)}`;
  const stores: StateStore[] = [];
  for (let i = 0; i < 2; i++) {
    const nc = await connect({ servers: server.url });
    connections.push(nc);
    const store = createJetStreamStore({ nc }, { bucketPrefix });
    await store.start();
    stores.push(store);
  }
  return [stores[0]!, stores[1]!];
}

const now = (): number => 1_000;

describe("updates without an expected revision over a stale cache", () => {
  it("LabelCluster re-reads a cluster another hub labelled and keeps both labels", async () => {
    const [storeA, storeB] = await twoHubsStores();
    const registry = (store: StateStore) =>
      createClusterRegistry({
        store,
        now,
        unreachableAfterMs: 30_000,
        groups: () => [],
      });
    const a = registry(storeA);
    await a.start();
    await a.enroll("c-1", "v1");
    const b = registry(storeB);
    await b.start();
    const before = b.status("c-1")?.revision ?? 0;

    await a.label("c-1", { set: { from: "a" }, remove: [] });
    await expect(
      b.label("c-1", {
        set: { from: "b" },
        remove: [],
        expectedRevision: before,
      }),
    ).rejects.toMatchObject({ code: "failed_precondition" });
    await b.label("c-1", { set: { also: "b" }, remove: [] });

    expect(b.cluster("c-1")?.labels).toEqual({ from: "a", also: "b" });
    await a.start();
    expect(a.cluster("c-1")?.labels).toEqual({ from: "a", also: "b" });
  });

  it("UpdateClusterGroup and UpdateUpdateStrategy re-read what another hub wrote, then write", async () => {
    const [storeA, storeB] = await twoHubsStores();
    const groupsA = createClusterGroups({ store: storeA, now });
    await groupsA.start();
    await groupsA.create({ name: "g", labels: {}, selector: "env=a" });
    const strategiesA = createUpdateStrategies({ store: storeA, now });
    await strategiesA.start();
    const json = (stage: string): string =>
      JSON.stringify({
        stages: [{ name: stage, memberSelector: { byLabel: "x=y" } }],
      });
    await strategiesA.create("s", json("a"));

    const groupsB = createClusterGroups({ store: storeB, now });
    await groupsB.start();
    const strategiesB = createUpdateStrategies({ store: storeB, now });
    await strategiesB.start();
    await groupsA.update({ name: "g", labels: {}, selector: "env=a2" });
    await strategiesA.update("s", json("a2"));

    const group = await groupsB.update({
      name: "g",
      labels: {},
      selector: "env=b",
    });
    const strategy = await strategiesB.update("s", json("b"));

    expect(group.record.selector).toBe("env=b");
    expect(strategy.record.strategyJson).toBe(json("b"));
    await groupsA.start();
    await strategiesA.start();
    expect(groupsA.get("g").revision).toBe(group.revision);
    expect(strategiesA.get("s").revision).toBe(strategy.revision);
  });
});

describe("a document someone else writes continuously", () => {
  it(`gives up with UNAVAILABLE after ${String(MAX_UPDATE_ATTEMPTS)} lost tries, writing nothing of its own`, async () => {
    const inner = createMemoryStore();
    await inner.start();
    let puts = 0;
    // Another writer gets in before every one of this hub's writes.
    const busy: StateStore = {
      maxValueBytes: inner.maxValueBytes,
      start: (o) => inner.start(o),
      stop: () => inner.stop(),
      get: (c, k, o) => inner.get(c, k, o),
      list: (c, o) => inner.list(c, o),
      delete: (c, k, o) => inner.delete(c, k, o),
      watch: (c, o) => inner.watch(c, o),
      [Symbol.asyncDispose]: () => inner.stop(),
      async put(collection, key, value, options) {
        const current = await inner.get(collection, key);
        if (current !== undefined) {
          await inner.put(collection, key, current.value);
        }
        puts++;
        return inner.put(collection, key, value, options);
      },
    };
    const groups = createClusterGroups({ store: busy, now });
    await groups.start();
    await groups.create({ name: "g", labels: {}, selector: "env=a" });
    puts = 0;
    await expect(
      groups.update({ name: "g", labels: {}, selector: "env=b" }),
    ).rejects.toMatchObject({
      code: "unavailable",
      message: expect.stringMatching(/cluster group "g".*10 times/) as unknown,
    });
    expect(puts).toBe(MAX_UPDATE_ATTEMPTS);
    const stored = await inner.list(
      defineCollection("cluster-groups", (v) => v),
    );
    expect(stored.map((e) => e.value)).toMatchObject([{ selector: "env=a" }]);
  });
});
