// Status-report ingestion benchmark: how many agent status reports per second the hub takes in,
// against raw gRPC stream messages per second in the same run (the ratio is the figure; target ≥ 0.5).
//
// One client (`floodAgentService`) is used for both sides, parameterised by the address: it opens
// `streams` AgentService.Connect streams (hello + facts as a real agent sends, then waits for
// welcome), then pushes `messages` status reports in total, each a real agent's report, NotReady
// and Ready by turns (so each one changes the cluster's observation and calls for a rollout
// pass), encoded by the agent's own `statusReportToWire`, keeping at most `window` un-acked reports per
// stream and also honouring the stream's write backpressure ('drain'). The agent's StatusOutbox has
// no fixed count: it writes its queued statuses until the call reports a backlog, and holds one
// status per intent item, so a window of a few reports per stream is what a real agent keeps.
//   * raw baseline (`measureRawGrpc`): a minimal grpc-js server with the hub's proto and the hub's
//     server options, which answers hello with welcome and each report with an accepted ack, and
//     does nothing else. It runs in a worker thread of this process, so that it has its own event
//     loop as the hub process has (`inline: true` runs it on the client's thread instead).
//   * hub (`measureHubReports`): a real hub in plaintext mode. The clusters `flood-<i>` register
//     on hello; a one-ConfigMap bundle targeting their label is applied through AdminService, each
//     cluster's intent is read from NATS as an agent does, and the reports are Ready on that
//     intent's generation and revision (NotReady and Ready by turns), which the hub counts (accepted acks counted separately).
// Elapsed time runs from the first report sent to the last ack received; opening the streams and a
// small warm-up round are not timed.
// Each timed round is sized from the rate of the round before it so that it takes a few seconds on
// either side (the hub and the baseline differ by more than 10× today); results say how many.
// Run alone with `node bench/report-flood.mjs [--quick] [--profile] [--streams N] [--rounds N]`:
// starts nats-server and a hub process, alternates raw and hub rounds, and prints the medians, the
// ratio and the hub's own flotilla_hub_status_reports_total delta (which must equal every report
// acked) as JSON. `--profile` runs the hub under `node --cpu-prof` and adds its top functions by
// self and by total time. `--replicas` runs two hub replicas instead and floods the owner of the
// bundle rollouts and the other replica by turns (`runReportFloodReplicas`).
// @ts-check
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  isMainThread,
  parentPort,
  Worker,
  workerData,
} from "node:worker_threads";
import { credentials, Server, ServerCredentials } from "@grpc/grpc-js";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect as connectNats } from "@nats-io/transport-node";
import {
  callUnary,
  clusterFactsToWire,
  createAdminServiceClient,
  createAgentServiceClient,
  intentKey,
  intentsBucket,
  loadProtocol,
  parseIntentDocument,
  PROTOCOL_VERSION,
  SERVER_OPTIONS,
  statusReportToWire,
} from "@flotilla/protocol";
import {
  freePort,
  startNatsServer,
  startProcess,
  waitFor,
} from "@flotilla/testkit";
import {
  LEASE_TTL,
  LEASE_TTL_SECONDS,
  natsMessageCounters,
  openLeases,
} from "./hub-replicas.mjs";

/** @import { ClientDuplexStream, ServerDuplexStream, StatusObject } from "@grpc/grpc-js" */
/** @import { wire } from "@flotilla/protocol" */

/**
 * What a flood round reports on: the cluster's intent generation, bundle and revision.
 * @typedef {{ generation: number, bundle: string, revision: string }} FloodSubject
 */
/**
 * One agent stream of the flood: its call, and the handlers the current round sets.
 * @typedef {{
 *   cluster: string,
 *   client: wire.AgentServiceClient,
 *   call: ClientDuplexStream<wire.AgentMessage, wire.HubMessage__Output>,
 *   onAck: (ack: wire.Ack__Output) => void,
 *   onDrain: () => void,
 *   ended: Promise<StatusObject>,
 *   error?: Error,
 *   pump: () => void,
 * }} Session
 */
/** @typedef {{ acks: number, accepted: number, elapsedMs: number }} FloodResult */
/** @typedef {{ address: string, stop: () => unknown }} MinimalServer */

const BUNDLE = "flood";
const LABEL = { bench: "report-flood" };
const FLOOD_TIMEOUT_MS = 300_000;
/** Reports in the untimed warm-up round of each measurement. */
const WARMUP = 2_000;

/**
 * The minimal server: welcome for hello, an accepted ack for each report, nothing else.
 * @returns {Promise<MinimalServer>}
 */
async function startMinimalServer() {
  const server = new Server(SERVER_OPTIONS);
  server.addService(loadProtocol().agentService, {
    /** @param {ServerDuplexStream<wire.AgentMessage__Output, wire.HubMessage>} call */
    Connect(call) {
      call.on("data", (/** @type {wire.AgentMessage__Output} */ message) => {
        if (message.body === "status" && message.status) {
          const { sequence, generation } = message.status;
          call.write({
            ack: { sequence, generation, accepted: true, reason: "" },
          });
        } else if (message.body === "hello" && message.hello) {
          call.write({
            welcome: {
              clusterName: message.hello.clusterName,
              protocolVersion: PROTOCOL_VERSION,
              heartbeatIntervalMs: 10_000,
              hubTimeMs: Date.now(),
            },
          });
        }
      });
      call.on("end", () => call.end());
      call.on("error", () => undefined);
    },
  });
  const port = await /** @type {Promise<number>} */ (
    new Promise((resolve, reject) => {
      server.bindAsync(
        "127.0.0.1:0",
        ServerCredentials.createInsecure(),
        (e, p) => {
          if (e) reject(e);
          else resolve(p);
        },
      );
    })
  );
  return {
    address: `127.0.0.1:${String(port)}`,
    stop: () => {
      server.forceShutdown();
    },
  };
}

/**
 * The minimal server in a worker thread of this process; resolves when it listens.
 * @returns {Promise<MinimalServer>}
 */
async function startMinimalServerThread() {
  const worker = new Worker(fileURLToPath(import.meta.url), {
    workerData: { role: "minimal-agent-server" },
  });
  const address = await /** @type {Promise<string>} */ (
    new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => {
        reject(new Error(`minimal server thread exited (${String(code)})`));
      });
    })
  );
  return { address, stop: () => worker.terminate() };
}

/**
 * Opens one agent stream per cluster, says hello and facts, and waits for every welcome.
 * @param {string} address
 * @param {string[]} clusters
 * @returns {Promise<Session[]>}
 */
async function openSessions(address, clusters) {
  const facts = clusterFactsToWire({
    labels: LABEL,
    kubernetesVersion: "1.30.4",
    nodePools: [
      { name: "default", imageFamily: "ubuntu", imageVersion: "22.04" },
    ],
    region: "bench-1",
  });
  return Promise.all(
    clusters.map(async (cluster) => {
      const client = createAgentServiceClient(
        address,
        credentials.createInsecure(),
      );
      const call = client.connect();
      /** @type {Session} */
      const session = {
        cluster,
        client,
        call,
        onAck: () => undefined,
        onDrain: () => undefined,
        ended: new Promise((resolve) => call.on("status", resolve)),
        pump: () => undefined,
      };
      /** @type {Promise<void>} */
      const welcomed = new Promise((resolve, reject) => {
        call.on("data", (/** @type {wire.HubMessage__Output} */ message) => {
          if (message.body === "ack" && message.ack) session.onAck(message.ack);
          else if (message.body === "welcome") resolve();
          else if (message.body === "error")
            reject(
              new Error(
                `${cluster}: refused: ${String(message.error?.message)}`,
              ),
            );
        });
        void session.ended.then((s) => {
          reject(new Error(`${cluster}: stream ended: ${s.details}`));
        });
      });
      call.on("drain", () => {
        session.onDrain();
      });
      call.on("error", (/** @type {Error} */ error) => (session.error = error));
      call.write({
        hello: {
          clusterName: cluster,
          agentVersion: "bench",
          protocolVersion: PROTOCOL_VERSION,
          lastAppliedGeneration: 0,
        },
      });
      call.write({ facts });
      await welcomed;
      return session;
    }),
  );
}

/** @param {Session[]} sessions */
async function closeSessions(sessions) {
  for (const s of sessions) s.call.end();
  await Promise.all(
    sessions.map((s) =>
      Promise.race([s.ended, new Promise((r) => setTimeout(r, 5_000).unref())]),
    ),
  );
  for (const s of sessions) s.client.close();
}

/**
 * Sends `messages` reports (NotReady and Ready by turns) in total over `sessions` (`subjectOf(session)` gives each its
 * generation, bundle and revision), at most `window` un-acked per stream; resolves with the acks
 * and the time from the first send to the last ack.
 * @param {Session[]} sessions
 * @param {{
 *   messages: number,
 *   window: number,
 *   subjectOf: (session: Session) => FloodSubject,
 * }} options
 * @returns {Promise<FloodResult>}
 */
function flood(sessions, { messages, window, subjectOf }) {
  return new Promise((resolve, reject) => {
    let acks = 0;
    let accepted = 0;
    let t0 = 0;
    const timer = setTimeout(() => {
      reject(
        new Error(
          `flood: ${String(acks)} of ${String(messages)} acks after ${String(FLOOD_TIMEOUT_MS)} ms`,
        ),
      );
    }, FLOOD_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve({ acks, accepted, elapsedMs: performance.now() - t0 });
    };
    sessions.forEach((s, i) => {
      const quota =
        Math.floor(messages / sessions.length) +
        (i < messages % sessions.length ? 1 : 0);
      const { generation, bundle, revision } = subjectOf(s);
      let sent = 0;
      let inFlight = 0;
      let backlogged = false;
      s.pump = () => {
        while (inFlight < window && sent < quota && !backlogged) {
          sent++;
          inFlight++;
          const report = statusReportToWire({
            sequence: sent,
            generation,
            subject: { kind: "bundle", bundle, revision },
            // Alternating, so that every report changes what the hub's rollout pass decides on
            // (a repeated phase is taken in without a pass).
            phase: sent % 2 === 0 ? "Ready" : "NotReady",
            reasons: [],
            reasonsTruncated: 0,
            observedAtMs: Date.now(),
          });
          if (!s.call.write({ status: report })) backlogged = true;
        }
      };
      s.onDrain = () => {
        backlogged = false;
        s.pump();
      };
      s.onAck = (ack) => {
        inFlight--;
        acks++;
        if (ack.accepted) accepted++;
        if (acks === messages) done();
        else s.pump();
      };
      void s.ended.then((status) => {
        if (sent > 0 && acks < messages)
          reject(
            new Error(
              `${s.cluster}: stream ended during the flood: ${status.details}`,
            ),
          );
      });
    });
    t0 = performance.now();
    for (const s of sessions) s.pump();
  });
}

/**
 * The one client path for both measurements: opens the streams, lets `prepare(sessions)` return
 * each session's subject, warms up, floods, closes. With `targetMs`, the timed round sends what the
 * warm-up's rate fills in that time (at least `warmup`, at most `messages`), so a slow and a fast
 * side both take a few seconds; the result says how many were sent.
 * @param {{
 *   address: string,
 *   clusters: string[],
 *   messages: number,
 *   window: number,
 *   warmup: number,
 *   targetMs: number | undefined,
 *   prepare: (sessions: Session[]) => Promise<(session: Session) => FloodSubject>,
 * }} options
 * @returns {Promise<FloodResult & { messages: number, acksTotal: number }>}
 */
async function floodAgentService({
  address,
  clusters,
  messages,
  window,
  warmup,
  targetMs,
  prepare,
}) {
  const sessions = await openSessions(address, clusters);
  try {
    const subjectOf = await prepare(sessions);
    const warm = await flood(sessions, { messages: warmup, window, subjectOf });
    if (targetMs === undefined)
      return {
        ...(await flood(sessions, { messages, window, subjectOf })),
        messages,
        acksTotal: warm.acks + messages,
      };
    /** @param {FloodResult} r */
    const size = (r) =>
      Math.max(
        warmup,
        Math.min(messages, Math.round((r.acks * targetMs) / r.elapsedMs)),
      );
    let sized = size(warm);
    let timed = await flood(sessions, { messages: sized, window, subjectOf });
    let acksTotal = warm.acks + timed.acks;
    // The warm-up under-estimates a side that speeds up once compiled: size again from a real round.
    for (
      let tries = 0;
      tries < 3 && timed.elapsedMs < targetMs / 2 && sized < messages;
      tries++
    ) {
      sized = size(timed);
      timed = await flood(sessions, { messages: sized, window, subjectOf });
      acksTotal += timed.acks;
    }
    return { ...timed, messages: sized, acksTotal };
  } finally {
    await closeSessions(sessions);
  }
}

/**
 * @param {string} prefix
 * @param {number} streams
 */
const names = (prefix, streams) =>
  Array.from({ length: streams }, (_, i) => `${prefix}-${String(i)}`);

/**
 * Raw grpc-js stream messages per second with the same client and message shape.
 * @param {{
 *   streams?: number,
 *   messages?: number,
 *   window?: number,
 *   inline?: boolean,
 *   targetMs?: number,
 * }} [options]
 */
export async function measureRawGrpc({
  streams = 100,
  messages = 100_000,
  window = 8,
  inline = false,
  targetMs,
} = {}) {
  const server = inline
    ? await startMinimalServer()
    : await startMinimalServerThread();
  try {
    const r = await floodAgentService({
      address: server.address,
      clusters: names("raw", streams),
      messages,
      window,
      warmup: Math.min(messages, WARMUP),
      targetMs,
      prepare: () =>
        Promise.resolve(() => ({
          generation: 1,
          bundle: BUNDLE,
          revision: "r1",
        })),
    });
    return {
      messagesPerSec: (r.acks * 1000) / r.elapsedMs,
      elapsedMs: r.elapsedMs,
      messages: r.messages,
    };
  } finally {
    await server.stop();
  }
}

/** Applies the flood bundle (targets LABEL, everything released at once) and returns each
 * cluster's generation and revision from its intent in NATS, as an agent reads it.
 * @param {string} hubAddress
 * @param {string} natsUrl
 * @param {Session[]} sessions
 * @returns {Promise<(session: Session) => FloodSubject>}
 */
async function prepareHubIntents(hubAddress, natsUrl, sessions) {
  const admin = createAdminServiceClient(
    hubAddress,
    credentials.createInsecure(),
  );
  const nc = await connectNats({ servers: natsUrl });
  try {
    await callUnary(admin, "applyBundle", {
      reason: "report-flood bench",
      bundle: {
        name: BUNDLE,
        namespace: BUNDLE,
        manifests: [
          {
            path: "config.yaml",
            yaml: Buffer.from(
              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flood\ndata:\n  a: b\n",
            ),
          },
        ],
        targetsJson: JSON.stringify([
          { clusterSelector: { matchLabels: LABEL } },
        ]),
        rolloutStrategyJson: JSON.stringify({
          maxUnavailable: "100%",
          maxNew: 1_000_000,
          autoPartitionThreshold: 1_000_000,
        }),
        paused: false,
      },
    });
    const kv = await new Kvm(jetstream(nc)).open(intentsBucket());
    /** @type {Map<string, FloodSubject>} */
    const subjects = new Map();
    await waitFor(
      async () => {
        for (const s of sessions) {
          if (subjects.has(s.cluster)) continue;
          const entry = await kv.get(intentKey(s.cluster));
          if (entry === null || entry.operation !== "PUT") continue;
          const doc = parseIntentDocument(entry.value, s.cluster);
          if (!doc.ok)
            throw new Error(
              `${s.cluster}: bad intent: ${JSON.stringify(doc.problems)}`,
            );
          const item = doc.value.intent.bundles[BUNDLE];
          if (item !== undefined)
            subjects.set(s.cluster, {
              generation: doc.value.intent.generation,
              bundle: BUNDLE,
              revision: item.revision,
            });
        }
        return subjects.size === sessions.length;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 100,
        message: "every flood cluster's intent to carry the bundle",
      },
    );
    return (s) => /** @type {FloodSubject} */ (subjects.get(s.cluster));
  } finally {
    await nc.close();
    admin.close();
  }
}

/**
 * Status reports per second taken in by a real hub (plaintext), same client as the baseline.
 * @param {{
 *   hubAddress: string,
 *   natsUrl: string,
 *   streams?: number,
 *   messages?: number,
 *   window?: number,
 *   targetMs?: number,
 * }} options
 */
export async function measureHubReports({
  hubAddress,
  natsUrl,
  streams = 100,
  messages = 100_000,
  window = 8,
  targetMs,
}) {
  const r = await floodAgentService({
    address: hubAddress,
    clusters: names("flood", streams),
    messages,
    window,
    warmup: Math.min(messages, WARMUP),
    targetMs,
    prepare: (sessions) => prepareHubIntents(hubAddress, natsUrl, sessions),
  });
  return {
    reportsPerSec: (r.acks * 1000) / r.elapsedMs,
    countedPerSec: (r.accepted * 1000) / r.elapsedMs,
    acceptedFraction: r.accepted / r.acks,
    elapsedMs: r.elapsedMs,
    messages: r.messages,
    // Every report acked on these streams, warm-up and sizing rounds included.
    acksTotal: r.acksTotal,
  };
}

/**
 * The hub's flotilla_hub_status_reports_total, all and accepted="true".
 * @param {string} httpAddress
 */
async function hubReportCounter(httpAddress) {
  const text = await (await fetch(`http://${httpAddress}/metrics`)).text();
  let all = 0;
  let accepted = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("flotilla_hub_status_reports_total")) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    all += value;
    if (line.includes('accepted="true"')) accepted += value;
  }
  return { all, accepted };
}

/**
 * The top `count` functions of a .cpuprofile by self time and by total (inclusive) time, idle
 * excluded, each with its share of the busy time.
 * @param {string} profilePath
 * @param {number} [count]
 */
export async function topFunctions(profilePath, count = 15) {
  /**
   * The parts of a .cpuprofile read here.
   * @typedef {{ functionName: string, url: string, lineNumber: number }} CallFrame
   * @typedef {{ id: number, callFrame: CallFrame, children?: number[] }} ProfileNode
   */
  const profile =
    /** @type {{ nodes: ProfileNode[], samples: number[], timeDeltas: number[] }} */ (
      JSON.parse(await readFile(profilePath, "utf8"))
    );
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  /** @type {Map<number, number>} */
  const parent = new Map();
  for (const n of profile.nodes)
    for (const child of n.children ?? []) parent.set(child, n.id);
  /** @param {number} id */
  const label = (id) => {
    const { functionName, url, lineNumber } = /** @type {ProfileNode} */ (
      byId.get(id)
    ).callFrame;
    return `${functionName || "(anonymous)"} ${url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/packages\//, "")}:${String(lineNumber + 1)}`;
  };
  /** @type {Map<string, number>} */
  const self = new Map();
  /** @type {Map<string, number>} */
  const total = new Map();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const own = label(id);
    if (own.startsWith("(idle)")) return;
    busy += dt;
    self.set(own, (self.get(own) ?? 0) + dt);
    const seen = new Set();
    /** @type {number | undefined} */
    let at = id;
    for (; at !== undefined; at = parent.get(at)) {
      const fn = label(at);
      if (seen.has(fn)) continue;
      seen.add(fn);
      total.set(fn, (total.get(fn) ?? 0) + dt);
    }
  });
  /** @param {Map<string, number>} m */
  const top = (m) =>
    [...m]
      .filter(([fn]) => !fn.startsWith("(root)"))
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([fn, us]) => ({
        fn,
        ms: Math.round(us / 1000),
        percentOfBusy: Number(((100 * us) / busy).toFixed(1)),
      }));
  return {
    busyMs: Math.round(busy / 1000),
    self: top(self),
    total: top(total),
  };
}

/** @param {number[]} xs */
const median = (xs) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/**
 * Starts nats-server and a hub process, runs raw and hub rounds interleaved, and returns the
 * medians and their ratio (plus details for the CLI).
 * @param {{
 *   quick?: boolean,
 *   profile?: boolean,
 *   rounds?: number,
 *   streams?: number,
 *   log?: (line: string) => void,
 * }} [options]
 */
export async function runReportFlood({
  quick = false,
  profile = false,
  rounds = 3,
  streams = 100,
  log = (l) => process.stderr.write(`${l}\n`),
} = {}) {
  // Upper bounds; each timed round sends what its warm-up's rate fills in `targetMs`.
  const { messages, targetMs } = floodSize(quick);
  const nats = await startNatsServer();
  const profileDir = profile
    ? await mkdtemp(join(tmpdir(), "flotilla-flood-prof-"))
    : undefined;
  const hub = await startFloodHub(nats.url, {
    nodeArgs: profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [],
  });
  try {
    const raw = [];
    const hubRuns = [];
    const before = await hubReportCounter(hub.http);
    for (let i = 0; i < rounds; i++) {
      const r = await measureRawGrpc({ streams, messages, targetMs });
      raw.push(r);
      logRaw(log, r);
      const h = await measureHubReports({
        hubAddress: hub.grpc,
        natsUrl: nats.url,
        streams,
        messages,
        targetMs,
      });
      hubRuns.push(h);
      logHub(log, "hub", h);
    }
    const after = await hubReportCounter(hub.http);
    const hubReportsPerSec = median(hubRuns.map((h) => h.countedPerSec));
    const rawMessagesPerSec = median(raw.map((r) => r.messagesPerSec));
    const result = {
      hubReportsPerSec,
      rawMessagesPerSec,
      ratio: hubReportsPerSec / rawMessagesPerSec,
      streams,
      // Timed reports per hub round (median) and per raw round.
      messages: median(hubRuns.map((h) => h.messages)),
      rawMessages: median(raw.map((r) => r.messages)),
      raw,
      hub: hubRuns,
      // Every report the hub acked (warm-ups included) and how many of them it counted.
      hubMetric: {
        reports: after.all - before.all,
        accepted: after.accepted - before.accepted,
        expected: hubRuns.reduce((sum, h) => sum + h.acksTotal, 0),
      },
    };
    await hub.process.stop(30_000);
    if (profileDir) {
      const file = (await readdir(profileDir)).find((f) =>
        f.endsWith(".cpuprofile"),
      );
      Object.assign(result, {
        hubProfile: file
          ? {
              file: join(profileDir, file),
              ...(await topFunctions(join(profileDir, file))),
            }
          : "no profile written",
      });
    }
    return result;
  } finally {
    await hub.process.stop();
    await nats.stop();
  }
}

/**
 * The same flood with two hub replicas on one NATS (docs/high-availability.md). The flood's
 * reports are bundle reports, so the work they feed is the `bundles` unit: every replica shares
 * each bundle report it takes in with the others on `flotilla.hub.bundles.report`, and the owner
 * of `bundles` runs the rollout passes on them. Rounds go raw, the owner of `bundles`, the other
 * replica (the non-owner), by turns, each side's ratio against the same raw baseline. The
 * forwarding cost is what the nats-server counts (/varz) during a hub round, per report acked:
 * messages published to it and delivered by it, every subject together (lease rounds, presence
 * and JetStream requests of those seconds included).
 * @param {{
 *   quick?: boolean,
 *   rounds?: number,
 *   streams?: number,
 *   log?: (line: string) => void,
 * }} [options]
 */
export async function runReportFloodReplicas({
  quick = false,
  rounds = 3,
  streams = 100,
  log = (l) => process.stderr.write(`${l}\n`),
} = {}) {
  const { messages, targetMs } = floodSize(quick);
  const nats = await startNatsServer();
  /** @type {FloodHub[]} */
  const hubs = [];
  /** @type {Awaited<ReturnType<typeof openLeases>> | undefined} */
  let leases;
  try {
    for (const id of ["flood-a", "flood-b"])
      hubs.push(await startFloodHub(nats.url, { replicaId: id }));
    leases = await openLeases(nats.url);
    const owned = await settledHolder(leases, "bundles", log);
    const owner = hubs.find((h) => h.replicaId === owned.holder);
    const other = hubs.find((h) => h.replicaId !== owned.holder);
    if (owner === undefined || other === undefined)
      throw new Error(
        `the bundles lease is held by ${owned.holder}, not by one of ${hubs.map((h) => h.replicaId).join(", ")}`,
      );
    log(
      `bench: report flood, two replicas: ${owned.holder} owns the bundles, ${other.replicaId} does not`,
    );
    const raw = [];
    /** @type {Record<"owner" | "nonOwner", FloodSide[]>} */
    const sides = { owner: [], nonOwner: [] };
    for (let i = 0; i < rounds; i++) {
      const r = await measureRawGrpc({ streams, messages, targetMs });
      raw.push(r);
      logRaw(log, r);
      for (const [side, hub] of /** @type {const} */ ([
        ["owner", owner],
        ["nonOwner", other],
      ])) {
        const before = await natsMessageCounters(nats.monitorUrl);
        const h = await measureHubReports({
          hubAddress: hub.grpc,
          natsUrl: nats.url,
          streams,
          messages,
          targetMs,
        });
        const after = await natsMessageCounters(nats.monitorUrl);
        sides[side].push({
          ...h,
          natsInPerReport: (after.in - before.in) / h.acksTotal,
          natsOutPerReport: (after.out - before.out) / h.acksTotal,
        });
        logHub(log, side === "owner" ? "owner" : "non-owner", h);
      }
    }
    const still = await leases.holder("bundles");
    const rawMessagesPerSec = median(raw.map((r) => r.messagesPerSec));
    /** @param {FloodSide[]} runs */
    const summary = (runs) => {
      const reportsPerSec = median(runs.map((h) => h.countedPerSec));
      return {
        reportsPerSec,
        ratio: reportsPerSec / rawMessagesPerSec,
        natsInPerReport: median(runs.map((h) => h.natsInPerReport)),
        natsOutPerReport: median(runs.map((h) => h.natsOutPerReport)),
        runs,
      };
    };
    return {
      rawMessagesPerSec,
      owner: { replica: owner.replicaId, ...summary(sides.owner) },
      nonOwner: { replica: other.replicaId, ...summary(sides.nonOwner) },
      // The bundles lease did not move during the rounds (same holder, same epoch).
      ownerUnchanged:
        still?.holder === owned.holder && still.epoch === owned.epoch,
      streams,
      raw,
    };
  } finally {
    await leases?.close();
    for (const hub of hubs) await hub.process.stop();
    await nats.stop();
  }
}

/**
 * Waits until `unit`'s lease has had the same holder for longer than three lease rounds (a
 * replica that has just joined is handed the units it is preferred for after two), so that it
 * does not move during the measurement.
 * @param {Awaited<ReturnType<typeof openLeases>>} leases
 * @param {string} unit
 * @param {(line: string) => void} log
 * @returns {Promise<import("./hub-replicas.mjs").LeaseHolder>}
 */
async function settledHolder(leases, unit, log) {
  const steadyMs = (LEASE_TTL_SECONDS * 1000 * 3) / 4 + 1_000;
  /** @type {import("./hub-replicas.mjs").LeaseHolder | undefined} */
  let seen;
  let since = performance.now();
  await waitFor(
    async () => {
      const now = await leases.holder(unit);
      if (now?.holder !== seen?.holder || now?.epoch !== seen?.epoch) {
        seen = now;
        since = performance.now();
      }
      return seen !== undefined && performance.now() - since > steadyMs;
    },
    {
      timeoutMs: 120_000,
      intervalMs: 250,
      message: `the ${unit} lease to stay with one replica for ${String(steadyMs)} ms`,
    },
  );
  const holder = /** @type {import("./hub-replicas.mjs").LeaseHolder} */ (seen);
  log(`bench: report flood: ${unit} lease held by ${holder.holder}`);
  return holder;
}

/**
 * A hub process of the flood and its addresses.
 * @typedef {{
 *   process: import("@flotilla/testkit").TestProcess,
 *   grpc: string,
 *   http: string,
 *   replicaId: string | undefined,
 * }} FloodHub
 */
/**
 * One hub round of the two-replica flood with the nats-server's counters per report.
 * @typedef {Awaited<ReturnType<typeof measureHubReports>> & {
 *   natsInPerReport: number,
 *   natsOutPerReport: number,
 * }} FloodSide
 */

/**
 * Starts a plaintext hub on free ports against `natsUrl`; resolves once it serves gRPC. With
 * `replicaId` it is one replica of several (the hub's default lease TTL, stated).
 * @param {string} natsUrl
 * @param {{ replicaId?: string, nodeArgs?: string[] }} [options]
 * @returns {Promise<FloodHub>}
 */
async function startFloodHub(natsUrl, { replicaId, nodeArgs = [] } = {}) {
  const grpc = `127.0.0.1:${String(await freePort())}`;
  const http = `127.0.0.1:${String(await freePort())}`;
  const process = startProcess({
    name: replicaId ?? "hub",
    args: [
      ...nodeArgs,
      "packages/hub/dist/main.js",
      "--nats",
      natsUrl,
      "--insecure-plaintext",
      "--listen",
      grpc,
      "--http-listen",
      http,
      "--log-level",
      "warn",
      ...(replicaId === undefined
        ? []
        : ["--replica-id", replicaId, "--lease-ttl", LEASE_TTL]),
    ],
  });
  try {
    await process.waitForLine(/serving gRPC/);
  } catch (error) {
    await process.stop();
    throw error;
  }
  return { process, grpc, http, replicaId };
}

/** @param {boolean} quick */
function floodSize(quick) {
  return {
    messages: quick ? 50_000 : 200_000,
    targetMs: quick ? 3_000 : 5_000,
  };
}

/**
 * @param {(line: string) => void} log
 * @param {Awaited<ReturnType<typeof measureRawGrpc>>} r
 */
function logRaw(log, r) {
  log(
    `bench: report flood: raw ${r.messagesPerSec.toFixed(0)} msg/s (${String(r.messages)} in ${r.elapsedMs.toFixed(0)} ms)`,
  );
}

/**
 * @param {(line: string) => void} log
 * @param {string} side
 * @param {Awaited<ReturnType<typeof measureHubReports>>} h
 */
function logHub(log, side, h) {
  log(
    `bench: report flood: ${side} ${h.reportsPerSec.toFixed(0)} reports/s, counted ${(100 * h.acceptedFraction).toFixed(1)}% (${String(h.messages)} in ${h.elapsedMs.toFixed(0)} ms)`,
  );
}

/**
 * `{[key]: N}` for `FLAG N` on the command line; a bad N is an error naming the flag.
 * @param {string} flag
 * @param {string} key
 * @returns {Record<string, number>}
 */
function numberFlag(flag, key) {
  const at = process.argv.indexOf(flag);
  if (at < 0) return {};
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(
      `${flag} must be a positive integer, not ${JSON.stringify(process.argv[at + 1])}`,
    );
  return { [key]: value };
}

if (
  !isMainThread &&
  /** @type {{ role?: string } | undefined} */ (workerData)?.role ===
    "minimal-agent-server"
) {
  const server = await startMinimalServer();
  parentPort?.postMessage(server.address);
} else if (
  isMainThread &&
  import.meta.url === pathToFileURL(process.argv[1] ?? "").href
) {
  const common = {
    quick: process.argv.includes("--quick"),
    ...numberFlag("--streams", "streams"),
    ...numberFlag("--rounds", "rounds"),
  };
  const result = process.argv.includes("--replicas")
    ? await runReportFloodReplicas(common)
    : await runReportFlood({
        ...common,
        profile: process.argv.includes("--profile"),
      });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
