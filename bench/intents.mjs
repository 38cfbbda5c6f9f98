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
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { randomBytes } from "node:crypto";
import {
  contentKeysOfSecret,
  createJetStreamIntentPublisher,
  prepareIntent,
} from "@flotilla/hub";
import { createIntentWatcher } from "@flotilla/agent";
import { startNatsServer, waitFor } from "@flotilla/testkit";

function intentFor(cluster, generation) {
  const revision = `r${generation}`;
  return {
    apiVersion: "flotilla.dev/v1",
    cluster,
    generation,
    bundles: {
      web: { revision, digest: `sha256:${"0".repeat(63)}${generation % 10}` },
    },
  };
}

/** Runs `task(i)` for i in [0, count) with at most `limit` in flight; resolves with elapsed ms. */
async function pooled(count, limit, task) {
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return performance.now() - t0;
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[
    Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))
  ];
}

async function monitor(server, path) {
  const response = await fetch(`${server.monitorUrl}${path}`);
  return response.json();
}

function connectTo(server) {
  return connect({ servers: server.url, maxReconnectAttempts: -1 });
}

/**
 * Measures intent delivery at `count` clusters, one watcher each over `connections` agent
 * connections, with `inFlight` publishes (and baseline puts) outstanding at a time, over
 * `pairCount` baseline/publisher round pairs.
 */
export async function measureIntents({
  count = 2_000,
  connections = 4,
  inFlight = 256,
  pairCount = 5,
  log = (line) => process.stderr.write(`${line}\n`),
} = {}) {
  const server = await startNatsServer();
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
    const seenAt = new Map();
    const watchers = clusters.map((cluster, i) =>
      createIntentWatcher(
        { nc: agentNcs[i % connections] },
        {
          cluster,
          onEvent: (e) => {
            if (e.type === "IntentReceived")
              seenAt.set(
                `${cluster}/${e.intent.generation}`,
                performance.now(),
              );
          },
          onError: (e) => log(`bench: watcher ${cluster}: ${e.message}`),
        },
      ),
    );
    closers.unshift(() => Promise.all(watchers.map((w) => w.stop())));
    const startMs = await pooled(count, inFlight, (i) => watchers[i].start());
    global.gc?.();
    const heapPerWatcherBytes =
      (process.memoryUsage().heapUsed - heapBefore) / count;
    const afterWatchers = await monitor(server, "/varz");
    log(
      `bench: ${count} watchers started in ${startMs.toFixed(0)} ms over ${connections} connections`,
    );

    /** Waits until every watcher has seen `generation`; returns delivery figures. */
    const delivered = async (generation, t0, sentAt) => {
      await waitFor(
        () => clusters.every((c) => seenAt.has(`${c}/${generation}`)),
        { timeoutMs: 60_000, intervalMs: 5, message: "every watcher's intent" },
      );
      const seen = clusters.map((c) => seenAt.get(`${c}/${generation}`));
      const latencies = clusters
        .map((c, i) => seen[i] - sentAt.get(c))
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
    /** Writes `generation` for every cluster with `write`; returns writes/s and delivery. */
    const round = async (generation, write) => {
      const sentAt = new Map();
      const t0 = performance.now();
      const ms = await pooled(count, inFlight, async (i) => {
        const started = performance.now();
        await write(clusters[i], generation);
        sentAt.set(clusters[i], started);
      });
      return {
        generation,
        perSec: (count * 1000) / ms,
        ...(await delivered(generation, t0, sentAt)),
      };
    };
    const publish = (cluster, g) => publisher.publish(intentFor(cluster, g));
    // The baseline writes the same documents, encoded beforehand, with plain KV puts into the
    // same bucket, so the watchers (and the server's republishing) do the same work in both.
    let encoded = new Map();
    const encode = (g) => {
      encoded = new Map(
        clusters.map((c) => [c, prepareIntent(intentFor(c, g)).bytes]),
      );
    };
    const put = (cluster) => kv.put(cluster, encoded.get(cluster));

    // Generation 1: a new fleet; the publisher has seen no key and creates each.
    const first = await round(1, publish);
    log(
      `bench: first publish: ${first.perSec.toFixed(0)} intents/s; all ${count} seen after ${first.allSeenMs.toFixed(0)} ms`,
    );
    // Then alternate baseline and publisher rounds. This machine is noisy: each pair is measured
    // back to back, and the median pair counts.
    const pairs = [];
    for (let g = 2; g < 2 + 2 * pairCount; g += 2) {
      encode(g);
      const baseline = await round(g, put);
      // The hub is normally the only writer: let it re-read what the baseline wrote (untimed),
      // so that it publishes on its usual path, one compare-and-set write per intent.
      await pooled(count, inFlight, (i) => publisher.read(clusters[i]));
      const published = await round(g + 1, publish);
      pairs.push({
        baseline,
        published,
        ratio: published.perSec / baseline.perSec,
      });
    }
    pairs.sort((a, b) => a.ratio - b.ratio);
    const median = pairs[Math.floor(pairs.length / 2)];
    const { baseline, published: steady, ratio } = median;
    log(
      `bench: ${steady.perSec.toFixed(0)} intents/s vs ${baseline.perSec.toFixed(0)} raw KV puts/s (ratio ${ratio.toFixed(2)}); all ${count} seen after ${steady.allSeenMs.toFixed(0)} ms; publish → seen p50 ${steady.latencyMs.p50.toFixed(1)} ms, p99 ${steady.latencyMs.p99.toFixed(1)} ms`,
    );

    const varz = await monitor(server, "/varz");
    const subsz = await monitor(server, "/subsz");
    const jsz = await monitor(server, "/jsz");
    const serverStats = {
      memBytes: varz.mem,
      memPerWatcherBytes: (afterWatchers.mem - before.mem) / count,
      subscriptions: subsz.num_subscriptions,
      consumers: jsz.consumers,
      connections: varz.connections,
    };
    log(
      `bench: server: ${(serverStats.memBytes / 2 ** 20).toFixed(1)} MiB, ${serverStats.subscriptions} subscriptions, ${serverStats.consumers} JetStream consumers, ${serverStats.connections} connections; client heap per watcher ${(heapPerWatcherBytes / 1024).toFixed(1)} KiB`,
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
