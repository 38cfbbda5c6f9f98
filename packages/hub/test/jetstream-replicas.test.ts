import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import {
  createJetStreamAuditLog,
  createJetStreamIntentPublisher,
  createJetStreamStore,
} from "@flotilla/hub";
import {
  startNatsCluster,
  startNatsServer,
  waitFor,
  type NatsCluster,
  type NatsServer,
} from "@flotilla/testkit";
import { hubStreams } from "../src/jetstream/hub-streams.js";
import { createJetStreamLeaseBucket } from "../src/leases/jetstream-lease-bucket.js";
import {
  checkReplicasPossible,
  replicaRefusal,
} from "../src/jetstream/replica-count.js";
import { warnReplicaMismatches } from "../src/jetstream/replica-mismatch.js";
import { readStreamHealth } from "../src/jetstream/stream-health.js";
import { contentKeysOfSecret } from "../src/security/content-keys.js";
import { capturedLogger } from "./captured-logger.js";

const FLAG = "--jetstream-replicas";
const contentKeys = contentKeysOfSecret(randomBytes(32));

/** Starts what the hub creates on start with `replicas`, under `prefix`; returns the stoppers. */
async function startAdapters(
  nc: NatsConnection,
  prefix: string,
  replicas: number,
): Promise<() => Promise<void>> {
  const store = createJetStreamStore(
    { nc },
    { bucketPrefix: prefix, replicas },
  );
  const publisher = createJetStreamIntentPublisher(
    { nc, contentKeys },
    { prefix, replicas },
  );
  const audit = createJetStreamAuditLog(
    { nc },
    { prefix, replicas, maxBytes: 1024 * 1024 },
  );
  const leases = createJetStreamLeaseBucket(nc, {
    prefix,
    ttlMs: 10_000,
    replicas,
  });
  const stops: (() => Promise<void>)[] = [];
  for (const adapter of [store, publisher, audit, leases]) {
    await adapter.start();
    stops.push(() => adapter.stop());
  }
  return async () => {
    for (const stop of stops) await stop();
  };
}

async function streamNames(nc: NatsConnection): Promise<string[]> {
  const names: string[] = [];
  for await (const name of (await jetstreamManager(nc)).streams.names()) {
    names.push(name);
  }
  return names;
}

async function replicasOf(
  nc: NatsConnection,
  prefix: string,
): Promise<Record<string, number>> {
  const jsm = await jetstreamManager(nc);
  const counts: Record<string, number> = {};
  for (const { stream } of hubStreams(prefix, prefix)) {
    counts[stream] = (await jsm.streams.info(stream)).config.num_replicas;
  }
  return counts;
}

describe("JetStream replicas on a 3-node cluster", () => {
  let cluster: NatsCluster;
  let nc: NatsConnection;
  beforeAll(async () => {
    cluster = await startNatsCluster();
    nc = await connect({ servers: [...cluster.urls] });
  }, 60_000);
  afterAll(async () => {
    await nc.close();
    await cluster.stop();
  });

  test("every bucket, object store and stream the hub creates has the replicas asked for", async () => {
    checkReplicasPossible(nc, 3, FLAG);
    const stop = await startAdapters(nc, "rthree", 3);
    try {
      const counts = await replicasOf(nc, "rthree");
      expect(new Set(Object.values(counts))).toEqual(new Set([3]));
      // The list the hub checks is every stream it created.
      expect(
        (await streamNames(nc)).filter((n) => n.includes("rthree")).sort(),
      ).toEqual(Object.keys(counts).sort());
    } finally {
      await stop();
    }
  });

  test("existing streams keep their replicas, and each one that differs is named in a warning", async () => {
    const stop = await startAdapters(nc, "rone", 1);
    await stop();
    const { lines, log } = capturedLogger();

    const mismatches = await warnReplicaMismatches(
      { jsm: await jetstreamManager(nc), log },
      hubStreams("rone", "rone"),
      3,
      FLAG,
    );

    expect(mismatches).toHaveLength(hubStreams("rone", "rone").length);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        stream: "KV_rone-runs",
        replicas: 1,
        wanted: 3,
        msg: `The existing KV bucket "rone-runs" has 1 replica(s), not the 3 of ${FLAG}; it is used as it is (change it with: nats stream edit KV_rone-runs --replicas 3)`,
      }),
    );
    expect(lines.map((l) => l["stream"])).toContain("rone-audit");
    expect(lines.map((l) => l["stream"])).toContain("OBJ_rone-bundle-content");
    expect(await replicasOf(nc, "rone")).toMatchObject({ "KV_rone-runs": 1 });
    // Asked for what they have, nothing is said.
    expect(
      await warnReplicaMismatches(
        { jsm: await jetstreamManager(nc), log },
        hubStreams("rone", "rone"),
        1,
        FLAG,
      ),
    ).toEqual([]);
  });

  test("more replicas than servers is refused naming the flag, the value and the cause, and nothing is created", async () => {
    const error = await startAdapters(nc, "rfive", 5).then(
      () => undefined,
      (e: unknown) => e,
    );

    const refusal = replicaRefusal(error, 5, FLAG);
    expect(refusal).toBeInstanceOf(FlotillaError);
    expect(refusal?.code).toBe("failed_precondition");
    expect(refusal?.message).toBe(
      `${FLAG} 5: the NATS cluster cannot place 5 replicas (JetStream: no suitable peers for placement); it needs at least 5 servers with JetStream running, or a lower ${FLAG}`,
    );
    expect((await streamNames(nc)).filter((n) => n.includes("rfive"))).toEqual(
      [],
    );
  });

  test("stream health names each stream's leader and other copies, and a stopped server as offline", async () => {
    const stopAdapters = await startAdapters(nc, "rhealth", 3);
    const leases = createJetStreamLeaseBucket(nc, {
      prefix: "rhealth",
      ttlMs: 10_000,
      replicas: 3,
    });
    await leases.start();
    const stop = async (): Promise<void> => {
      await leases.stop();
      await stopAdapters();
    };
    const streams = hubStreams("rhealth", "rhealth");
    const jsm = await jetstreamManager(nc);
    const names = new Set(cluster.nodes.map((n) => n.name));
    try {
      const health = await waitFor(async () => {
        const read = await readStreamHealth(jsm, streams);
        return read.every((s) => s.peers.every((p) => p.current))
          ? read
          : undefined;
      });
      expect(health.map((s) => s.stream)).toEqual(streams.map((s) => s.stream));
      for (const stream of health) {
        expect(stream.error, stream.stream).toBeUndefined();
        expect(stream.replicas).toBe(3);
        expect(names.has(stream.leader), stream.leader).toBe(true);
        expect(
          [stream.leader, ...stream.peers.map((p) => p.name)].sort(),
        ).toEqual([...names].sort());
      }

      const runs = health.find((s) => s.stream === "KV_rhealth-runs");
      const follower = cluster.nodes.find(
        (n) => n.name === runs?.peers[0]?.name,
      );
      if (follower === undefined) throw new Error("no follower");
      await follower.halt();
      try {
        await waitFor(
          async () => {
            const [read] = await readStreamHealth(jsm, [
              { label: "runs", stream: "KV_rhealth-runs" },
            ]);
            const peer = read?.peers.find((p) => p.name === follower.name);
            return peer !== undefined && (peer.offline || !peer.current);
          },
          { timeoutMs: 20_000 },
        );
      } finally {
        await follower.restart();
        await cluster.ready();
      }
    } finally {
      await stop();
    }
  }, 60_000);
});

describe("JetStream replicas on a single server", () => {
  let server: NatsServer;
  let nc: NatsConnection;
  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connect({ servers: server.url });
  });
  afterAll(async () => {
    await nc.close();
    await server.stop();
  });

  test("more than one replica is refused before anything is created", () => {
    expect(() => {
      checkReplicasPossible(nc, 3, FLAG);
    }).toThrow(
      new FlotillaError(
        "failed_precondition",
        `${FLAG} 3: the NATS server is not clustered (JetStream replicas > 1 need a NATS cluster of at least 3 servers); use ${FLAG} 1 with a single server`,
      ),
    );
    checkReplicasPossible(nc, 1, FLAG);
  });

  test("JetStream's own refusal maps to the same error", async () => {
    const store = createJetStreamStore(
      { nc },
      { bucketPrefix: "single", replicas: 2 },
    );
    const error = await store.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(replicaRefusal(error, 2, FLAG)?.message).toBe(
      `${FLAG} 2: the NATS server is not clustered (JetStream replicas > 1 need a NATS cluster of at least 2 servers); use ${FLAG} 1 with a single server`,
    );
    expect(replicaRefusal(new Error("other"), 2, FLAG)).toBeUndefined();
  });
});
