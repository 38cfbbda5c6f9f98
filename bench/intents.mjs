// Intents benchmark: a real nats-server, the hub's JetStream IntentPublisher and N agent intent
// watchers spread over a few connections (as a process hosting many simulated agents would).
// Figures, against baselines measured in the same run:
//   * intents published per second ÷ raw JetStream KV puts per second: the same documents
//     (encoded beforehand for the baseline) into the same bucket, the same number of writes in
//     flight, the same watchers receiving them; rounds alternate and the median pair counts;
//   * the time from the first publish until every watcher has seen its intent, and the
//     publish → watcher latency percentiles;
//   * what N watchers cost the server: subscriptions, JetStream consumers (should be none),
//     memory; and what they cost the client process (heap per watcher).
// Run alone with `node bench/intents.mjs [--count N]`; `measureIntents` is the entry point.
// @ts-check
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { randomBytes } from "node:crypto";
import {
  contentKeysOfSecret,
  createJetStreamIntentPublisher,
} from "@flotilla/hub";
import { prepareIntent } from "@flotilla/hub/testing";
import { createIntentWatcher } from "@flotilla/agent/testing";
import { startNatsServer, waitFor } from "@flotilla/testkit";

/** @import { ClusterIntent } from "@flotilla/core" */
/** @import { NatsServer } from "@flotilla/testkit" */

/**
 * Publish → watcher delivery of one generation: when the last watcher saw it, and latencies.
 * @typedef {{ allSeenMs: number, latencyMs: { p50: number, p90: number, p99: number } }} Delivery
 */

/**
 * @param {string} cluster
 * @param {number} generation
 * @returns {ClusterIntent}
 */
function intentFor(cluster, generation) {
  const revision = `r${String(generation)}`;
  return {
    apiVersion: "flotilla.dev/v1",
    cluster,
    generation,
    bundles: {
      web: {
        revision,
        digest: `sha256:${"0".repeat(63)}${String(generation % 10)}`,
      },
    },
  };
}

/**
 * Runs `task(i)` for i in [0, count) with at most `limit` in flight; resolves with elapsed ms.
 * @param {number} count
 * @param {number} limit
 * @param {(i: number) => Promise<unknown>} task
 * @returns {Promise<number>}
 */
async function pooled(count, limit, task) {
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return performance.now() - t0;
}

/**
 * @param {number[]} sorted
 * @param {number} p
 * @returns {number}
 */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return (
    sorted[
      Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))
    ] ?? NaN
  );
}

/**
 * A nats-server monitoring endpoint's JSON, for the few figures the bench reads.
 * @param {NatsServer} server
 * @param {string} path
 * @returns {Promise<Record<string, number>>}
 */
async function monitor(server, path) {
  const response = await fetch(`${server.monitorUrl}${path}`);
  return /** @type {Promise<Record<string, number>>} */ (response.json());
}

/** @param {NatsServer} server */
function connectTo(server) {
  return connect({ servers: server.url, maxReconnectAttempts: -1 });
}

/**
 * Measures intent delivery at `count` clusters, one watcher each over `connections` agent
 * connections, with `inFlight` publishes (and baseline puts) outstanding at a time, over
 * `pairCount` baseline/publisher round pairs.
 * @param {{
 *   count?: number,
 *   connections?: number,
 *   inFlight?: number,
 *   pairCount?: number,
 *   log?: (line: string) => void,
 * }} [options]
 */
export async function measureIntents({
  count = 2_000,
  connections = 4,
  inFlight = 256,
  pairCount = 5,
  log = (line) => process.stderr.write(`${line}\n`),
} = {}) {
  const server = await startNatsServer();
  /** @type {(() => Promise<unknown>)[]} */
  const closers = [];
  try {
    const hubNc = await connectTo(server);
    closers.push(() => hubNc.close());
    const agentNcs = await Promise.all(
      Array.from({ length: connections }, () => connectTo(server)),
    );
    for (const nc of agentNcs) closers.push(() => nc.close());

    const publisher = createJetStreamIntentPublisher({
      nc: hubNc,
      contentKeys: contentKeysOfSecret(randomBytes(32)),
    });
    await publisher.start();
    closers.unshift(() => publisher.stop());
    // The publisher's bucket under the default prefix (`intentsBucket()` in @flotilla/protocol).
    const kv = await new Kvm(jetstream(hubNc)).open("flotilla-intents");
    const clusters = Array.from(
      { length: count },
      (_, i) => `c-${String(i).padStart(6, "0")}`,
    );

    // Watchers.
    const before = await monitor(server, "/varz");
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    /** @type {Map<string, number>} */
    const seenAt = new Map();
    const watchers = clusters.map((cluster, i) =>
      createIntentWatcher(
        {
          nc: /** @type {(typeof agentNcs)[number]} */ (
            agentNcs[i % connections]
          ),
        },
        {
          cluster,
          onEvent: (e) => {
            if (e.type === "IntentReceived")
              seenAt.set(
                `${cluster}/${String(e.intent.generation)}`,
                performance.now(),
              );
          },
          onError: (e) => {
            log(`bench: watcher ${cluster}: ${e.message}`);
          },
        },
      ),
    );
    closers.unshift(() => Promise.all(watchers.map((w) => w.stop())));
    const startMs = await pooled(count, inFlight, (i) =>
      /** @type {(typeof watchers)[number]} */ (watchers[i]).start(),
    );
    global.gc?.();
    const heapPerWatcherBytes =
      (process.memoryUsage().heapUsed - heapBefore) / count;
    const afterWatchers = await monitor(server, "/varz");
    log(
      `bench: ${String(count)} watchers started in ${startMs.toFixed(0)} ms over ${String(connections)} connections`,
    );

    /**
     * Waits until every watcher has seen `generation`; returns delivery figures.
     * @param {number} generation
     * @param {number} t0
     * @param {Map<string, number>} sentAt
     * @returns {Promise<Delivery>}
     */
    const delivered = async (generation, t0, sentAt) => {
      await waitFor(
        () => clusters.every((c) => seenAt.has(`${c}/${String(generation)}`)),
        { timeoutMs: 60_000, intervalMs: 5, message: "every watcher's intent" },
      );
      const seen = clusters.map((c) =>
        Number(seenAt.get(`${c}/${String(generation)}`)),
      );
      const latencies = clusters
        .map((c, i) => Number(seen[i]) - Number(sentAt.get(c)))
        .sort((a, b) => a - b);
      return {
        allSeenMs: Math.max(...seen) - t0,
        latencyMs: {
          p50: percentile(latencies, 50),
          p90: percentile(latencies, 90),
          p99: percentile(latencies, 99),
        },
      };
    };
    /**
     * Writes `generation` for every cluster with `write`; returns writes/s and delivery.
     * @param {number} generation
     * @param {(cluster: string, generation: number) => Promise<unknown>} write
     * @returns {Promise<Delivery & { generation: number, perSec: number }>}
     */
    const round = async (generation, write) => {
      /** @type {Map<string, number>} */
      const sentAt = new Map();
      const t0 = performance.now();
      const ms = await pooled(count, inFlight, async (i) => {
        const cluster = String(clusters[i]);
        const started = performance.now();
        await write(cluster, generation);
        sentAt.set(cluster, started);
      });
      return {
        generation,
        perSec: (count * 1000) / ms,
        ...(await delivered(generation, t0, sentAt)),
      };
    };
    /**
     * @param {string} cluster
     * @param {number} g
     */
    const publish = (cluster, g) => publisher.publish(intentFor(cluster, g));
    // The baseline writes the same documents, encoded beforehand, with plain KV puts into the
    // same bucket, so the watchers (and the server's republishing) do the same work in both.
    /** @type {Map<string, Uint8Array>} */
    let encoded = new Map();
    /** @param {number} g */
    const encode = (g) => {
      encoded = new Map(
        clusters.map((c) => [c, prepareIntent(intentFor(c, g)).bytes]),
      );
    };
    /** @param {string} cluster */
    const put = (cluster) =>
      kv.put(cluster, /** @type {Uint8Array} */ (encoded.get(cluster)));

    // Generation 1: a new fleet; the publisher has seen no key and creates each.
    const first = await round(1, publish);
    log(
      `bench: first publish: ${first.perSec.toFixed(0)} intents/s; all ${String(count)} seen after ${first.allSeenMs.toFixed(0)} ms`,
    );
    // Then alternate baseline and publisher rounds. This machine is noisy: each pair is measured
    // back to back, and the median pair counts.
    const pairs = [];
    for (let g = 2; g < 2 + 2 * pairCount; g += 2) {
      encode(g);
      const baseline = await round(g, put);
      // The hub is normally the only writer: let it re-read what the baseline wrote (untimed),
      // so that it publishes on its usual path, one compare-and-set write per intent.
      await pooled(count, inFlight, (i) => publisher.read(String(clusters[i])));
      const published = await round(g + 1, publish);
      pairs.push({
        baseline,
        published,
        ratio: published.perSec / baseline.perSec,
      });
    }
    pairs.sort((a, b) => a.ratio - b.ratio);
    const median = pairs[Math.floor(pairs.length / 2)];
    if (median === undefined) throw new Error("no baseline/publisher pair");
    const { baseline, published: steady, ratio } = median;
    log(
      `bench: ${steady.perSec.toFixed(0)} intents/s vs ${baseline.perSec.toFixed(0)} raw KV puts/s (ratio ${ratio.toFixed(2)}); all ${String(count)} seen after ${steady.allSeenMs.toFixed(0)} ms; publish → seen p50 ${steady.latencyMs.p50.toFixed(1)} ms, p99 ${steady.latencyMs.p99.toFixed(1)} ms`,
    );

    const varz = await monitor(server, "/varz");
    const subsz = await monitor(server, "/subsz");
    const jsz = await monitor(server, "/jsz");
    const serverStats = {
      memBytes: varz.mem,
      memPerWatcherBytes:
        (Number(afterWatchers.mem) - Number(before.mem)) / count,
      subscriptions: subsz.num_subscriptions,
      consumers: jsz.consumers,
      connections: varz.connections,
    };
    log(
      `bench: server: ${(Number(serverStats.memBytes) / 2 ** 20).toFixed(1)} MiB, ${String(serverStats.subscriptions)} subscriptions, ${String(serverStats.consumers)} JetStream consumers, ${String(serverStats.connections)} connections; client heap per watcher ${(heapPerWatcherBytes / 1024).toFixed(1)} KiB`,
    );
    return {
      count,
      connections,
      inFlight,
      watchersStartMs: startMs,
      heapPerWatcherBytes,
      firstPublishPerSec: first.perSec,
      publishPerSec: steady.perSec,
      baselinePutsPerSec: baseline.perSec,
      ratio,
      allSeenMs: steady.allSeenMs,
      latencyMs: steady.latencyMs,
      pairRatios: pairs.map((p) => p.ratio),
      server: serverStats,
    };
  } finally {
    for (const close of closers) await close().catch(() => undefined);
    await server.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const at = process.argv.indexOf("--count");
  const count = at > 0 ? Number(process.argv[at + 1]) : 2_000;
  const result = await measureIntents({ count });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
