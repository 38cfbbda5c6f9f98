/**
 * Everything `flotilla-hub` runs, started in order: the NATS connection (reconnecting forever: the
 * hub outlives NATS restarts), the HTTP server (/metrics, /healthz, /readyz: up early, so probes
 * see a hub that is still starting), the JetStream adapters (state store, intent publisher, audit
 * log, object reader), TLS, the hub's gRPC server and its gauges.
 *
 * Each part that is up pushes the step that stops it onto `opened`, so main.ts stops exactly what
 * was started, in reverse order, both after a failed start and on SIGTERM. A failed start is
 * therefore never left half-running: the NATS connection in particular would keep the process
 * alive, reconnecting, with nothing served.
 */
import { FlotillaError, compact } from "@flotilla/core";
import { createConnectionWatch, systemClock } from "@flotilla/node";
import { DEFAULT_INTENTS_PREFIX } from "@flotilla/protocol";
import { ServerCredentials } from "@grpc/grpc-js";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { auditHandlers } from "./audit/admin-audit.js";
import { createJetStreamAuditLog } from "./audit/jetstream-audit-log.js";
import { createBundleService } from "./bundles/bundle-service.js";
import type { ChartFetcher } from "./bundles/chart-source.js";
import { createJetStreamObjectReader } from "./bundles/object-reader.js";
import type { HubConfig } from "./config/config.js";
import { HUB_OPTIONS } from "./config/config-options.js";
import { createHubProbes, type HubProbes } from "./health/probes.js";
import { createHub, type HubReplication, type HubSecurity } from "./hub.js";
import { createJetStreamLeaseBucket } from "./leases/jetstream-lease-bucket.js";
import { createRunForwarding } from "./leases/run-forwarding.js";
import { createPresence } from "./leases/presence.js";
import { HUB_VERSION } from "./version.js";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { readFile } from "node:fs/promises";
import { createGitClient } from "./gitrepos/git-client.js";
import { createGitWebhook } from "./gitrepos/git-webhook.js";
import {
  createPrometheusClient,
  type PrometheusClient,
} from "./gates/prometheus-client.js";
import { startHttpServer } from "./metrics/http-server.js";
import { createJetStreamIntentPublisher } from "./intents/jetstream-intent-publisher.js";
import { hubStreams } from "./jetstream/hub-streams.js";
import {
  checkReplicasPossible,
  replicaRefusal,
} from "./jetstream/replica-count.js";
import { warnReplicaMismatches } from "./jetstream/replica-mismatch.js";
import { readStreamHealth } from "./jetstream/stream-health.js";
import type { Logger } from "./logger.js";
import type { HubMetrics } from "./metrics/metrics.js";
import {
  hubObserverOf,
  replicationObserverOf,
  startHubGauges,
} from "./metrics/metrics-observer.js";
import { createAdminAuth } from "./security/admin-auth.js";
import type { AdminTokens } from "./security/admin-tokens.js";
import {
  createAgentsAccount,
  type AgentsAccount,
} from "./security/agents-account.js";
import { createContentKeys } from "./security/content-keys.js";
import { prepareHubTls, type HubTls } from "./security/hub-tls.js";
import type { NatsAuth } from "./security/nats-auth-config.js";
import type { StopStep } from "./shutdown.js";
import { createJetStreamStore } from "./store/jetstream-store.js";
import type { StateStore } from "./store/state-store.js";

/** What {@link serveHub} runs with. */
export interface ServeHubDeps {
  readonly config: Exclude<HubConfig, { help: true }>;
  readonly log: Logger;
  readonly metrics: HubMetrics;
  readonly natsAuth: NatsAuth;
  readonly adminTokens: AdminTokens | undefined;
  /** Every AdminService caller is admin (plaintext without a token file). */
  readonly insecureAdmin: boolean;
  /** Fetches Helm bundles' charts from repositories and registries. */
  readonly charts?: ChartFetcher;
}

/** A hub that serves. */
export interface ServingHub {
  readonly port: number;
  /** The HTTP server's address; undefined with `--http-listen off`. */
  readonly httpAddress: string | undefined;
}

/**
 * Starts every part; rejects with the first failure (a FlotillaError whose message says which part
 * and why). Stop steps of the parts started go to `opened`, in start order, whether it resolves or
 * rejects.
 */
export async function serveHub(
  deps: ServeHubDeps,
  opened: StopStep[],
): Promise<ServingHub> {
  const { config, log, metrics, natsAuth } = deps;
  const { nc, connected } = await connectNats(deps);
  opened.push({
    name: "NATS connection",
    // Draining waits for the server to confirm, which a server that is gone never does; one that
    // is there but does not answer is left to the deadline, then closed.
    stop: () =>
      nc.isClosed() ? undefined : connected() ? nc.drain() : nc.close(),
    force: () => nc.close(),
  });
  const probes = createHubProbes(() =>
    nc.isClosed() ? "closed" : connected() ? "connected" : "reconnecting",
  );
  // The webhook reaches the GitRepo manager once the hub is built (below).
  const gitRepos: { syncByUrl?: (urls: readonly string[]) => string[] } = {};
  const httpAddress = await serveHttp(deps, probes, opened, (urls) =>
    gitRepos.syncByUrl === undefined ? [] : gitRepos.syncByUrl(urls),
  );

  // Every bucket and stream is created with this many replicas; a count NATS cannot keep is
  // refused before anything is created.
  const replicas = config.jetstreamReplicas;
  const replicasFlag = HUB_OPTIONS.jetstreamReplicas.flag;
  checkReplicasPossible(nc, replicas, replicasFlag);
  const creating = async (start: Promise<void>): Promise<void> => {
    try {
      await start;
    } catch (error) {
      throw replicaRefusal(error, replicas, replicasFlag) ?? error;
    }
  };
  const store = createJetStreamStore(
    { nc },
    { bucketPrefix: config.statePrefix, replicas },
  );
  const audit = createJetStreamAuditLog(
    {
      nc,
      log,
      onSkipped: (reason) => {
        metrics.auditRecordSkipped(reason);
      },
    },
    {
      prefix: config.statePrefix,
      maxBytes: config.auditMaxBytes,
      replicas,
    },
  );
  await creating(store.start());
  opened.push({ name: "state store", stop: () => store.stop() });
  // Bundle content is sealed with keys from the content secret in the store (docs/security.md).
  const contentKeys = createContentKeys({ store, now: Date.now });
  await contentKeys.load();
  const publisher = createJetStreamIntentPublisher(
    {
      nc,
      contentKeys,
      onLegacyContentSealed: (count) => {
        log.info({ count }, "Bundle content stored in clear was sealed");
      },
    },
    { replicas },
  );
  const objects = createJetStreamObjectReader({ nc, contentKeys });
  await creating(publisher.start());
  opened.push({ name: "intent publisher", stop: () => publisher.stop() });
  await creating(audit.start());
  opened.push({ name: "audit log", stop: () => audit.stop() });
  const jsm = await jetstream(nc).jetstreamManager();
  const streams = hubStreams(config.statePrefix, DEFAULT_INTENTS_PREFIX);
  await warnReplicaMismatches({ jsm, log }, streams, replicas, replicasFlag);
  const agentsAccount = await keepAgentsAccount(deps, store, opened);

  // Under TLS the hub's CA signs agents' and admins' certificates.
  let tls: HubTls | undefined;
  let security: HubSecurity | undefined;
  if (!config.insecurePlaintext) {
    tls = await prepareHubTls(config.tls, { store, logger: log });
    const prepared = tls;
    opened.push({
      name: "TLS",
      stop: () => {
        prepared.stop();
      },
    });
    security = {
      authority: tls.authority,
      clusterCertificateTtlMs: config.tls.clusterCertTtlMs,
      ...compact({
        natsCredentials: natsAuth.agentNatsCredentials,
        natsUsers: agentsAccount,
      }),
    };
  }

  const { adminTokens, insecureAdmin } = deps;
  const clock = systemClock;
  const replicaId = config.replicaId ?? defaultReplicaId(config.listen);
  const leaseBucket = createJetStreamLeaseBucket(nc, {
    prefix: config.statePrefix,
    ttlMs: config.leaseTtlMs,
    replicas,
  });
  await creating(leaseBucket.start());
  const replicationObserver = replicationObserverOf(metrics);
  const replication: HubReplication = {
    bucket: leaseBucket,
    forwarding: createRunForwarding({
      nc,
      prefix: config.statePrefix,
      clock,
      logger: log.child({ component: "forwarding" }),
      replica: replicaId,
      onForwarded: replicationObserver.onForwarded,
    }),
    presence: createPresence({
      nc,
      prefix: config.statePrefix,
      replica: replicaId,
      logger: log.child({ component: "presence" }),
    }),
    identity: {
      id: replicaId,
      incarnation: randomUUID(),
      address: config.listen,
      version: HUB_VERSION,
      settings: {
        leaseTtlMs: config.leaseTtlMs,
        heartbeatIntervalMs: config.heartbeatIntervalMs,
        missedHeartbeats: config.missedHeartbeats,
      },
      startedAtMs: clock.now(),
    },
    clock,
    onTakeover: replicationObserver.onTakeover,
  };
  const hub = createHub({
    replication,
    streamHealth: () => readStreamHealth(jsm, streams),
    store,
    contentKeys,
    publisher,
    audit,
    logger: log,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    missedHeartbeats: config.missedHeartbeats,
    passIntervalMs: config.passIntervalMs,
    refusalAudit: config.refusalAudit,
    git: createGitClient({
      git: config.git.binary,
      limits: {
        timeoutMs: config.git.timeoutMs,
        maxBytes: config.git.maxBytes,
        maxFiles: config.git.maxFiles,
      },
    }),
    gitSyncConcurrency: config.git.concurrency,
    ...(config.prometheus === undefined
      ? {}
      : { prometheus: prometheusClient(config.prometheus, log) }),
    bundles: (bundleDeps) =>
      createBundleService(
        {
          ...bundleDeps,
          objects,
          helm: { helm: config.helm, ...compact({ fetcher: deps.charts }) },
          kustomize: { kubectl: config.kubectl },
        },
        {
          contentGc: config.bundleContentGc,
          revisionHistory: config.bundleRevisionHistory,
        },
      ),
    auditHandlers,
    ...compact({ security }),
    adminAuth: (auditDeps, hooks) =>
      createAdminAuth({
        ...hooks,
        ...(tls === undefined
          ? {}
          : { verifyCertificate: tls.authority.verify }),
        ...auditDeps,
        ...compact({ tokens: adminTokens }),
        insecure: insecureAdmin,
      }),
    observer: hubObserverOf(metrics),
  });
  gitRepos.syncByUrl = (urls) => hub.gitRepos.syncByUrl(urls);
  // Pushed before start: a start that fails after loading state may have timers running.
  opened.push({ name: "hub", stop: () => hub.stop() });
  // Without NATS this replica cannot renew its leases nor fence its writes: it stops acting as
  // owner at once, and takes leases again (with new epochs) once they are free after it is back.
  const leaseWatch = createConnectionWatch(nc, (status) => {
    if (status.type === "disconnect")
      hub.leases?.dropAll("the NATS connection is lost");
  });
  leaseWatch.start();
  opened.push({
    name: "lease watch",
    stop: () => {
      leaseWatch.stop();
    },
  });
  const credentials = tls?.credentials ?? ServerCredentials.createInsecure();
  const port = await hub.start(config.listen, credentials);
  probes.serving(hub);
  const gauges = startHubGauges(hub, metrics, { intervalMs: 2_000 });
  opened.push({
    name: "gauges",
    stop: () => {
      gauges.stop();
    },
  });
  return { port, httpAddress };
}

/** Serves /metrics and the probes on `--http-listen`; its address, or undefined when off. */
async function serveHttp(
  deps: ServeHubDeps,
  probes: HubProbes,
  opened: StopStep[],
  syncByUrl: (urls: readonly string[]) => string[],
): Promise<string | undefined> {
  const { config, log, metrics } = deps;
  if (config.httpListen === undefined) return undefined;
  const secret = await webhookSecret(config);
  const http = await startHttpServer({
    listen: config.httpListen,
    metrics,
    log,
    health: () => probes.liveness(),
    readiness: () => probes.readiness(),
    ...(secret === undefined
      ? {}
      : {
          gitWebhook: createGitWebhook({
            secret,
            syncByUrl,
            log: log.child({ component: "git-webhook" }),
            onRequest: (outcome) => {
              metrics.gitWebhook(outcome);
            },
          }),
        }),
  });
  opened.push({ name: "HTTP server", stop: () => http.close() });
  return http.address;
}

/** The git webhook's secret: `--git-webhook-secret`, or the file's content (trimmed). */
async function webhookSecret(
  config: ServeHubDeps["config"],
): Promise<string | undefined> {
  const { webhookSecret: given, webhookSecretFile: file } = config.git;
  if (file === undefined) return given;
  const text = (await readFile(file, "utf8")).trim();
  if (text === "")
    throw new FlotillaError(
      "invalid_argument",
      `${HUB_OPTIONS.gitWebhookSecretFile.flag} ${file}: the file is empty`,
    );
  return text;
}

/** The client of `--prometheus-url`; logs where metric gates look (never the token). */
function prometheusClient(
  settings: NonNullable<ServeHubDeps["config"]["prometheus"]>,
  log: Logger,
): PrometheusClient {
  const client = createPrometheusClient(settings);
  log.info(
    {
      url: client.url,
      bearerToken: settings.bearerToken !== undefined,
      timeoutMs: settings.timeoutMs,
      maxBytes: settings.maxBytes,
    },
    "Metric gates query Prometheus",
  );
  return client;
}

/** A replica's default name: the host's name and the port it listens on. */
function defaultReplicaId(listen: string): string {
  const port = listen.slice(listen.lastIndexOf(":") + 1);
  return `${hostname()}:${port}`;
}

/**
 * With a NATS setup directory, the agents' account: connects the hub's system user and pushes the
 * account with its revocations (docs/security.md, "Removing a cluster"). Undefined without one.
 */
async function keepAgentsAccount(
  deps: ServeHubDeps,
  store: StateStore,
  opened: StopStep[],
): Promise<AgentsAccount | undefined> {
  const { config, log } = deps;
  const auth = deps.natsAuth.agentsAccount;
  if (auth === undefined) return undefined;
  let system: NatsConnection;
  try {
    system = await connect({
      ...auth.systemConnectOptions,
      servers: [...config.nats],
      name: "flotilla-hub-system",
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    });
  } catch (error) {
    throw new FlotillaError(
      "unavailable",
      `Cannot connect to NATS as the hub's system user (hub-system.creds): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const account = createAgentsAccount({
    store,
    system,
    signer: auth.signer,
    template: auth.template,
    now: Date.now,
    log: log.child({ component: "agents-account" }),
  });
  opened.push({
    name: "agents' account",
    stop: () => account.stop(),
    force: () => system.close(),
  });
  await account.start();
  return account;
}

/** Connects (rejecting when no server answers); `connected()` is false while reconnecting. */
async function connectNats(
  deps: ServeHubDeps,
): Promise<{ nc: NatsConnection; connected: () => boolean }> {
  const { config, log } = deps;
  let nc: NatsConnection;
  try {
    nc = await connect({
      ...deps.natsAuth.connectOptions,
      servers: [...config.nats],
      name: "flotilla-hub",
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    });
  } catch (error) {
    throw new FlotillaError(
      "unavailable",
      `Cannot connect to NATS at ${config.nats.join(", ")}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  deps.metrics.setNatsConnected(true);
  const watch = createConnectionWatch(nc, (status) => {
    deps.metrics.setNatsConnected(watch.up);
    if (status.type === "disconnect") {
      log.warn("NATS connection lost; reconnecting");
    }
    if (status.type === "reconnect") log.info("NATS connection back");
  });
  watch.start();
  return { nc, connected: () => watch.up };
}
