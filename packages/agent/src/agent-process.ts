/**
 * The composition root of `flotilla-agent` (only here are the concrete
 * adapters chosen): the clusters (one real cluster through the Kubernetes API, or simulated
 * ones; hosted-clusters.ts), their identities (registered with a bootstrap token
 * and renewed in the background), NATS connections (one per cluster with its own
 * credentials, else one shared), one progress store, one metrics registry and server, and one
 * agent per cluster; then it waits for the stop signal and stops everything in reverse order.
 */
import { join } from "node:path";
import { FlotillaError, compact } from "@flotilla/core";
import {
  connect,
  errors,
  type ConnectionOptions,
  type NatsConnection,
} from "@nats-io/transport-node";
import type { Logger } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";
import type { AgentConfig } from "./config/config.js";
import { readHubTls, type HubTransport } from "./hub/transport.js";
import {
  identityNatsOptions,
  readBootstrapToken,
  startIdentityKeepers,
  type IdentityStoreChoice,
} from "./identity/fleet-identities.js";
import type { IdentityKeeper } from "./identity/identity-keeper.js";
import { registerAgentGauges } from "./metrics/agent-gauges.js";
import { createAgentMetrics } from "./metrics/agent-metrics.js";
import {
  startMetricsServer,
  type MetricsServer,
} from "./metrics/metrics-server.js";
import {
  createFileProgressStore,
  createMemoryProgressStore,
} from "./runtime/progress-store.js";
import { createAgent, type Agent } from "./runtime/agent.js";
import {
  loadHostedClusters,
  type ClusterToHost,
  type HostedCluster,
} from "./hosting/hosted-clusters.js";
import { createBackoff, systemClock, unlessAborted } from "@flotilla/node";
import { AGENT_VERSION } from "./version.js";

/** Options of {@link runAgentProcess}. */
export interface AgentProcessOptions {
  readonly config: AgentConfig;
  readonly logger: Logger;
  /** Aborts on SIGTERM/SIGINT: everything stops and the promise resolves. */
  readonly signal: AbortSignal;
  /** How often the summary line may be logged; default 30000 ms. */
  readonly summaryIntervalMs?: number;
}

async function transportOf(config: AgentConfig): Promise<HubTransport> {
  const { transport } = config;
  return "insecurePlaintext" in transport
    ? { insecurePlaintext: true }
    : { tls: await readHubTls(transport.tls) };
}

/** Loads or registers every cluster's identity; undefined when the configuration has none. */
async function keepIdentities(
  config: AgentConfig,
  transport: HubTransport,
  clusters: readonly ClusterToHost[],
  logger: Logger,
  signal: AbortSignal,
): Promise<Map<string, IdentityKeeper> | undefined> {
  const { identity } = config;
  if (identity === undefined || !("tls" in transport)) return undefined;
  const hubCa =
    typeof transport.tls === "function" ? transport.tls().ca : transport.tls.ca;
  const bootstrapToken =
    identity.bootstrapToken === undefined
      ? undefined
      : await readBootstrapToken(identity.bootstrapToken);
  const store: IdentityStoreChoice =
    "dir" in identity
      ? { dir: identity.dir }
      : {
          storeFor: (name) => {
            const create = clusters.find(
              (c) => c.name === name,
            )?.secretIdentityStore;
            if (create === undefined)
              throw new FlotillaError(
                "invalid_argument",
                `Cannot keep the identity of cluster "${name}" in Secret "${identity.secret}": only a cluster of the Kubernetes backend can`,
              );
            return create(identity.secret);
          },
        };
  return startIdentityKeepers(
    { clock: systemClock, logger },
    {
      clusterNames: clusters.map((c) => c.name),
      ...store,
      hub: config.hub,
      hubCa,
      agentVersion: AGENT_VERSION,
      ...compact({ bootstrapToken }),
      signal,
    },
  );
}

/** Connects to NATS, or resolves undefined once `signal` aborts first (closing a late connection). */
async function connectNats(
  options: ConnectionOptions,
  signal: AbortSignal,
): Promise<NatsConnection | undefined> {
  const connecting = connect({
    name: "flotilla-agent",
    maxReconnectAttempts: -1,
    waitOnFirstConnect: true,
    ...options,
  });
  const nc = await unlessAborted(connecting, signal);
  if (nc === undefined)
    connecting
      .then(
        (late) => late.close(),
        () => undefined,
      )
      .catch(() => undefined);
  return nc;
}

/** Whether NATS refused the credentials themselves (not an outage). */
function isCredentialsRefusal(error: unknown): boolean {
  return (
    error instanceof errors.AuthorizationError ||
    error instanceof errors.UserAuthenticationExpiredError
  );
}

/**
 * A cluster's own NATS connection, with the credentials its identity carries. Tried until it
 * connects (or `signal` aborts: undefined). When NATS refuses the credentials, at the first
 * connect or any reconnect, the identity is renewed at once rather than at its usual time: the
 * renewal brings new NATS credentials, which the next attempt reads (docs/security.md, "Rotation";
 * after the hub's NATS setup was made anew, agents recover by themselves).
 */
async function connectClusterNats(
  options: Partial<ConnectionOptions>,
  keeper: IdentityKeeper,
  logger: Logger,
  signal: AbortSignal,
): Promise<NatsConnection | undefined> {
  const backoff = createBackoff({ maxMs: 30_000 });
  const refused = (error: unknown): void => {
    if (isCredentialsRefusal(error))
      keeper.renewSoon("NATS refused the cluster's credentials");
  };
  for (;;) {
    if (signal.aborted) return undefined;
    try {
      const connecting = connect({
        maxReconnectAttempts: -1,
        // nats.js gives up after the same refusal twice; a renewal may be on its way.
        ignoreAuthErrorAbort: true,
        ...options,
      });
      const nc = await unlessAborted(connecting, signal);
      if (nc === undefined) {
        connecting.then((late) => late.close()).catch(() => undefined);
        return undefined;
      }
      void (async () => {
        for await (const status of nc.status())
          if (status.type === "error") refused(status.error);
      })();
      return nc;
    } catch (error) {
      refused(error);
      const delayMs = backoff.next();
      logger.warn(
        { err: error, cluster: keeper.clusterName, delayMs },
        "Cannot connect to NATS with the cluster's credentials; retrying",
      );
      await systemClock.sleep(delayMs, { signal }).catch(() => undefined);
    }
  }
}

/**
 * Runs the agents until `signal` aborts. Rejects with `invalid_argument` for bad files (the caller
 * exits 2) and with other errors when the process cannot run (exit 1).
 */
export async function runAgentProcess(
  options: AgentProcessOptions,
): Promise<void> {
  const { config, logger, signal } = options;
  const configs = await loadHostedClusters(config, logger);
  const transport = await transportOf(config);
  const fleet = config.backend.type === "simulatedFleet";
  let keepers: Map<string, IdentityKeeper> | undefined;
  try {
    keepers = await keepIdentities(config, transport, configs, logger, signal);
  } catch (error) {
    // Stopped while registering: a graceful stop, not a failure.
    if (!signal.aborted) throw error;
    logger.info("Stopped");
    return;
  }

  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = createAgentMetrics(registry);
  const agents: Agent[] = [];
  const held = keepers;
  /** The hosted clusters by name, as they are created. */
  const hosted = new Map<string, HostedCluster>();
  registerAgentGauges(registry, {
    sessionStates: () => agents.map((a) => a.session.state),
    hubAddresses: {
      configured: config.hub,
      connected: () => agents.flatMap((a) => a.session.connectedAddress ?? []),
    },
    statuses: () => agents.flatMap((a) => a.session.currentStatuses()),
    ...(held === undefined
      ? {}
      : { identityExpiriesMs: () => identityExpiries(held.values()) }),
    ...(config.backend.type === "kubernetes"
      ? {}
      : { simulatedErrorRatios: () => simulatedErrorRatios(hosted) }),
  });
  const clusters: HostedCluster[] = [];
  let server: MetricsServer | undefined;
  let nc: NatsConnection | undefined;
  /** Connections of clusters with their own NATS credentials. */
  const ownConnections = new Map<string, NatsConnection>();
  let summary: NodeJS.Timeout | undefined;
  try {
    if (config.metricsListen !== undefined) {
      server = await startMetricsServer({
        ...config.metricsListen,
        registry,
        health: () => ({
          agents: agents.length,
          connected: agents.filter((a) => a.session.state === "connected")
            .length,
        }),
      });
      logger.info(
        { host: config.metricsListen.host, port: server.port },
        "Serving /metrics and /healthz",
      );
    }

    const natsOptions = new Map<string, Partial<ConnectionOptions>>();
    for (const [name, keeper] of keepers ?? []) {
      const options = identityNatsOptions(keeper, {
        servers: config.nats,
        prefix: config.intentsPrefix,
      });
      if (options !== undefined) natsOptions.set(name, options);
    }
    if (natsOptions.size < configs.length) {
      logger.info({ servers: config.nats }, "Connecting to NATS");
      nc = await connectNats({ servers: [...config.nats] }, signal);
      if (nc === undefined) return;
    }

    const progress =
      config.stateDir === undefined
        ? createMemoryProgressStore()
        : createFileProgressStore(join(config.stateDir, "progress.json"));
    if (config.stateDir === undefined)
      logger.info(
        "No --state-dir: progress is kept in memory and a restart redoes finished work",
      );

    for (const c of configs) {
      const keeper = keepers?.get(c.name);
      const ownOptions = natsOptions.get(c.name);
      if (ownOptions !== undefined && keeper !== undefined) {
        logger.debug(
          { cluster: c.name, servers: ownOptions.servers },
          "Connecting to NATS with the cluster's credentials",
        );
        // Options of its own come from its identity (natsOptions above).
        const own = await connectClusterNats(
          { ...ownOptions, name: `flotilla-agent-${c.name}` },
          keeper,
          logger,
          signal,
        );
        if (own === undefined) return;
        ownConnections.set(c.name, own);
      }
      const clusterNats = ownConnections.get(c.name) ?? nc;
      if (clusterNats === undefined)
        throw new FlotillaError(
          "internal",
          `No NATS connection for cluster ${c.name}`,
        );
      const cluster = c.create({ metrics });
      clusters.push(cluster);
      hosted.set(c.name, cluster);
      await cluster.start({ signal });
      const agent = createAgent(
        {
          nc: clusterNats,
          backend: cluster.backend,
          progress,
          logger,
          metrics,
        },
        {
          clusterName: c.name,
          hub: config.hub,
          transport:
            keeper === undefined ? transport : { tls: () => keeper.hubTls() },
          intentsPrefix: config.intentsPrefix,
          eventLevel: fleet ? "debug" : "info",
          windowsReloadIntervalMs: config.windowsReloadIntervalMs,
        },
      );
      agents.push(agent);
      keeper?.onRenewed(() => {
        // New streams and NATS connects use the new certificate and credentials; intents are
        // re-read after both reconnects, so none is missed.
        agent.session.reconnect("identity renewed");
        ownConnections
          .get(c.name)
          ?.reconnect()
          .catch((error: unknown) => {
            logger.warn(
              { cluster: c.name, err: FlotillaError.from(error) },
              "Cannot reconnect to NATS with the renewed credentials",
            );
          });
      });
      await agent.start({ signal });
    }
    logger.info(
      { agents: agents.length, hub: config.hub, backend: config.backend.type },
      "Agents started",
    );
    summary = startSummary(agents, logger, options.summaryIntervalMs ?? 30_000);
    if (!signal.aborted)
      await new Promise<void>((resolve) => {
        signal.addEventListener(
          "abort",
          () => {
            resolve();
          },
          { once: true },
        );
      });
    logger.info("Stopping");
  } finally {
    clearInterval(summary);
    server?.markStopping();
    await Promise.allSettled(agents.map((a) => a.stop()));
    // Reverse order of start.
    await Promise.allSettled(clusters.reverse().map((c) => c.stop()));
    await Promise.allSettled(
      [...(keepers?.values() ?? [])].map((k) => k.stop()),
    );
    await Promise.allSettled(
      [...ownConnections.values()].map((own) => own.close()),
    );
    await nc?.close().catch(() => undefined);
    await server?.close();
  }
  logger.info("Stopped");
}

/** Logs how the agents are doing at info, when it changed since the last line. */
function startSummary(
  agents: readonly Agent[],
  logger: Logger,
  intervalMs: number,
): NodeJS.Timeout {
  let last = "";
  const log = (): void => {
    const statuses = agents.map((a) => a.status());
    const line = {
      agents: statuses.length,
      connected: statuses.filter((s) => s.session === "connected").length,
      withIntent: statuses.filter((s) => s.generation > 0).length,
      finished: statuses.filter(
        (s) => s.generation > 0 && s.lastAppliedGeneration >= s.generation,
      ).length,
    };
    const key = JSON.stringify(line);
    if (key === last) return;
    last = key;
    logger.info(line, "Agents summary");
  };
  const timer = setInterval(log, intervalMs);
  timer.unref();
  return timer;
}

/** The certificate expiry of every loaded identity, epoch ms (for the expiry gauge). */
function* identityExpiries(
  keepers: Iterable<IdentityKeeper>,
): Generator<number> {
  for (const keeper of keepers) {
    try {
      yield keeper.current().expiresAtMs;
    } catch {
      // Not loaded yet: nothing to expire.
    }
  }
}

/** The simulated error ratio of every bundle of every hosted cluster that sets one. */
function* simulatedErrorRatios(
  hosted: ReadonlyMap<string, HostedCluster>,
): Generator<{ cluster: string; bundle: string; ratio: number }> {
  for (const [cluster, c] of hosted)
    for (const [bundle, ratio] of c.errorRatios?.() ?? [])
      yield { cluster, bundle, ratio };
}

/** Whether an error from {@link runAgentProcess} is bad configuration (exit 2). */
export function isConfigError(error: unknown): boolean {
  return error instanceof FlotillaError && error.code === "invalid_argument";
}
