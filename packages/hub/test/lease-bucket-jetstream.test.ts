import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJetStreamLeaseBucket } from "@flotilla/hub";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import { describeLeaseBucketContract } from "./lease-bucket.contract.js";

let server: NatsServer;
let nc: NatsConnection;
let buckets = 0;

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connect({ servers: server.url });
});

afterAll(async () => {
  await nc.close();
  await server.stop();
});

describeLeaseBucketContract("JetStream KV", () => ({
  async open() {
    const bucket = createJetStreamLeaseBucket(nc, {
      prefix: `lease${String(++buckets)}`,
      ttlMs: 1_000,
    });
    await bucket.start();
    return bucket;
  },
  async expire(bucket) {
    // The server drops expired entries on its own clock.
    await waitFor(async () => (await bucket.list("")).length === 0, {
      timeoutMs: 10_000,
    });
  },
}));

describe("JetStream lease bucket", () => {
  it("an existing bucket gets the TTL it is opened with", async () => {
    const prefix = `lease${String(++buckets)}`;
    const first = createJetStreamLeaseBucket(nc, { prefix, ttlMs: 5_000 });
    await first.start();
    const second = createJetStreamLeaseBucket(nc, { prefix, ttlMs: 1_000 });
    await second.start();
    await second.create("lease.u", { holder: "a" });
    await waitFor(async () => (await second.list("lease.")).length === 0, {
      timeoutMs: 10_000,
    });
    expect(await second.list("lease.")).toEqual([]);
  });
});
