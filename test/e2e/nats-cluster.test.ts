/**
 * The hub on a real 3-node NATS cluster with `--jetstream-replicas 3`, end to end with real
 * processes: every bucket, object store and stream is created with three replicas, agents are
 * given every node's URL, and a staged run completes although the NATS node the hub is connected
 * to is SIGKILLed in the middle of it. And on a single nats-server the same flag stops the hub at
 * start, with nothing created (docs/running.md).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  startNatsCluster,
  startNatsServer,
  type NatsClusterNode,
} from "@flotilla/testkit";
import { startE2E } from "./fleet.js";
import { exitWithin, messageLines, startHubProcess } from "./hub-process.js";
import { watchIntents } from "./intent-log.js";
import { membersOf, startRingRollout, watchRun } from "./recovery-helpers.js";

/** Three nats-servers, the hub, the agents and a run of three stages on a 2-core machine. */
const TEST_TIMEOUT_MS = 150_000;

/** Replicas of every stream a node holds, by name (its monitoring endpoint's `/jsz`). */
async function streamReplicas(
  node: NatsClusterNode,
): Promise<Record<string, number>> {
  const response = await fetch(
    `${node.monitorUrl}/jsz?accounts=true&streams=true&config=true`,
  );
  const jsz = (await response.json()) as {
    account_details?: readonly {
      stream_detail?: readonly {
        name: string;
        config?: { num_replicas?: number };
      }[];
    }[];
  };
  const replicas: Record<string, number> = {};
  for (const account of jsz.account_details ?? []) {
    for (const stream of account.stream_detail ?? []) {
      replicas[stream.name] = stream.config?.num_replicas ?? 0;
    }
  }
  return replicas;
}

describe("the hub on a 3-node NATS cluster", () => {
  it(
    "completes a staged run while the NATS node the hub is connected to is killed",
    async () => {
      const work = await mkdtemp(join(tmpdir(), "flotilla-nats-cluster-"));
      await using cluster = await startNatsCluster();
      const env = await startE2E({
        natsCluster: cluster,
        hubArgs: ["--jetstream-replicas", "3"],
      });
      try {
        expect(env.natsUrls).toEqual(cluster.urls);
        const hubNode = await cluster.nodeServing("flotilla-hub");
        if (hubNode === undefined) throw new Error("the hub is on no node");
        const others = cluster.nodes.filter((n) => n !== hubNode);
        // The intent log listens on the nodes that stay up: it hears every write.
        const log = await watchIntents(others.map((n) => n.url));
        try {
          const replicas = await streamReplicas(hubNode);
          expect(Object.keys(replicas)).toEqual(
            expect.arrayContaining([
              "KV_flotilla-runs",
              "KV_flotilla-clusters",
              "KV_flotilla-intents",
              "OBJ_flotilla-bundle-content",
              "flotilla-audit",
            ]),
          );
          expect(
            Object.entries(replicas).filter(([, count]) => count !== 3),
          ).toEqual([]);

          await startRingRollout(
            env,
            work,
            [
              { name: "canary", count: 1 },
              { name: "early", count: 3, maxConcurrency: 2 },
              { name: "late", count: 4, maxConcurrency: 2 },
            ],
            2,
          );

          const leaderBefore = await cluster.metaLeader();
          await hubNode.kill();
          await env.hub().waitForLine(/NATS connection lost/, 20_000);
          // The two nodes left keep a quorum: a meta leader among them.
          const leaderAfter = await cluster.metaLeader();
          expect(others).toContain(leaderAfter);
          if (leaderBefore === hubNode) expect(leaderAfter).not.toBe(hubNode);

          const done = await watchRun(
            env,
            "up",
            (run) => run.state === "Completed",
            {
              timeoutMs: 90_000,
              message: "the run to complete with one NATS node killed",
              check: (run) => {
                expect(run.state).not.toBe("Failed");
              },
            },
          );
          const members = [...membersOf(done).values()];
          expect(members).toHaveLength(8);
          expect(members.filter((m) => m.state !== "Succeeded")).toEqual([]);
          expect(await cluster.nodeServing("flotilla-hub")).toBeDefined();
          await env.connected(8);
          // Each cluster got its upgrade once, in one generation.
          expect(log.invalid).toEqual([]);
          for (const m of members) {
            expect(
              log.of(m.name).map((r) => [r.generation, r.upgradeRun]),
              m.name,
            ).toEqual([[1, "up"]]);
          }
          expect(log.conflicts()).toEqual([]);
        } finally {
          await log.close();
        }
      } catch (error) {
        throw new Error(`${String(error)}\nhub:\n${env.hub().output()}`, {
          cause: error,
        });
      } finally {
        await env.stop();
        await rm(work, { recursive: true, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );
});

describe("two hub replicas on a 3-node NATS cluster", () => {
  it(
    "complete a staged run while the JetStream meta leader's node is killed",
    async () => {
      const work = await mkdtemp(join(tmpdir(), "flotilla-nats-cluster-"));
      await using cluster = await startNatsCluster();
      const env = await startE2E({
        natsCluster: cluster,
        hubArgs: ["--jetstream-replicas", "3"],
        replicas: 2,
        leaseTtl: "3s",
      });
      const log = await watchIntents(cluster.urls);
      try {
        await startRingRollout(
          env,
          work,
          [
            { name: "canary", count: 1 },
            { name: "late", count: 5, maxConcurrency: 2 },
          ],
          2,
        );
        await (await cluster.metaLeader()).kill();
        const done = await watchRun(
          env,
          "up",
          (run) => run.state === "Completed",
          {
            timeoutMs: 90_000,
            message: "the run to complete with one NATS node killed",
          },
        );
        const members = [...membersOf(done).values()];
        expect(members.filter((m) => m.state !== "Succeeded")).toEqual([]);
        expect(members).toHaveLength(6);
        expect(log.conflicts()).toEqual([]);
      } catch (error) {
        throw new Error(
          `${String(error)}\nhub-0:\n${env.hub(0).output()}\nhub-1:\n${env.hub(1).output()}`,
          { cause: error },
        );
      } finally {
        await log.close();
        await env.stop();
        await rm(work, { recursive: true, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );
});

describe("--jetstream-replicas on a single nats-server", () => {
  it("stops the hub at start with a clear error, and nothing is created", async () => {
    await using nats = await startNatsServer();
    const hub = startHubProcess({
      nats: nats.url,
      args: ["--jetstream-replicas", "3"],
    });
    const exit = await exitWithin(hub, 15_000);
    expect(exit.code, hub.output()).toBe(1);
    expect(messageLines(hub)).toEqual([
      "flotilla-hub: cannot start: --jetstream-replicas 3: the NATS server is not clustered (JetStream replicas > 1 need a NATS cluster of at least 3 servers); use --jetstream-replicas 1 with a single server",
    ]);
    const jsz = (await (await fetch(`${nats.monitorUrl}/jsz`)).json()) as {
      streams: number;
    };
    expect(jsz.streams).toBe(0);
  });
});
