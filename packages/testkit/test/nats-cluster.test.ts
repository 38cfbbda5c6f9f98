import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Kvm, type KV } from "@nats-io/kv";
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { startNatsCluster, waitFor, type NatsCluster } from "@flotilla/testkit";

async function connectAll(cluster: NatsCluster): Promise<NatsConnection> {
  return connect({
    servers: [...cluster.urls],
    name: "nats-cluster-test",
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
}

/** The server name of the KV bucket's stream leader. */
async function streamLeader(kv: KV): Promise<string | undefined> {
  return (await kv.status()).streamInfo.cluster?.leader;
}

describe("startNatsCluster", () => {
  test("starts three routed JetStream servers that hold an R3 bucket", async () => {
    await using cluster = await startNatsCluster();
    expect(cluster.nodes.map((n) => n.name)).toEqual(["n1", "n2", "n3"]);
    expect(new Set(cluster.nodes.map((n) => n.port)).size).toBe(3);
    expect(new Set(cluster.nodes.map((n) => n.storeDir)).size).toBe(3);
    expect(cluster.urls).toEqual(cluster.nodes.map((n) => n.url));
    const leader = await cluster.metaLeader();
    expect(cluster.nodes).toContain(leader);

    const nc = await connectAll(cluster);
    try {
      const kv = await new Kvm(nc).create("testkit-r3", { replicas: 3 });
      await kv.put("greeting", "hello");
      expect((await kv.get("greeting"))?.string()).toBe("hello");
      const info = (await kv.status()).streamInfo;
      expect(info.config.num_replicas).toBe(3);
      const members = [
        info.cluster?.leader,
        ...(info.cluster?.replicas ?? []).map((r) => r.name),
      ];
      expect(members.sort()).toEqual(["n1", "n2", "n3"]);
      expect(await cluster.nodeServing("nats-cluster-test")).toBeDefined();
      expect(await cluster.nodeServing("nobody")).toBeUndefined();
    } finally {
      await nc.close();
    }
  });

  test("an R3 bucket keeps answering when the node leading it is killed, and the node rejoins", async () => {
    await using cluster = await startNatsCluster();
    const nc = await connectAll(cluster);
    try {
      const kv = await new Kvm(nc).create("testkit-failover", {
        replicas: 3,
      });
      await kv.put("before", "1");
      const leaderName = await streamLeader(kv);
      const victim = cluster.nodes.find((n) => n.name === leaderName);
      expect(victim).toBeDefined();
      const pid = victim?.pid;

      await victim?.kill();

      expect(victim?.pid).toBeUndefined();
      expect(() => process.kill(pid ?? 0, 0)).toThrow();
      // The two left elect a new stream leader; until then a write may time out.
      await waitFor(() => kv.put("after", "2"), {
        timeoutMs: 20_000,
        message: "a write to the R3 bucket with one node killed",
      });
      expect((await kv.get("before"))?.string()).toBe("1");
      expect((await kv.get("after"))?.string()).toBe("2");
      const newLeader = await streamLeader(kv);
      expect(newLeader).not.toBe(leaderName);
      await cluster.ready();

      await victim?.restart();
      await cluster.ready();
      // The restarted node catches up with what was written while it was down.
      await waitFor(
        async () => {
          const { cluster: state } = (await kv.status()).streamInfo;
          return state?.replicas?.length === 2 &&
            state.replicas.every((r) => r.current)
            ? state
            : undefined;
        },
        { timeoutMs: 20_000, message: "every replica of the bucket current" },
      );
      expect(victim?.pid).toBeDefined();
    } finally {
      await nc.close();
    }
  });

  test("refuses a cluster of one", async () => {
    await expect(startNatsCluster({ nodes: 1 })).rejects.toThrow(
      new FlotillaError(
        "invalid_argument",
        "Cannot start a NATS cluster: nodes must be a whole number from 2 to 9, not 1",
      ),
    );
  });
});
