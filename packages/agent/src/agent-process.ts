/**
 * The composition root of `flotilla-agent` (STYLE "Boundaries": only here are the concrete
 * adapters chosen): the simulated clusters, one shared NATS connection, one progress store, one
 * metrics registry and server, and one agent per cluster; then it waits for the stop signal and
 * stops everything in reverse order.
 */
import { join } from "node:path";
import { FlotillaError } from "@flotilla/core";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";
import { parse as parseYaml } from "yaml";
import type { AgentConfig } from "./config.js";
import { readHubTls, type HubTransport } from "./hub/transport.js";
import { createAgentMetrics } from "./metrics/agent-metrics.js";
import {
  startMetricsServer,
  type MetricsServer,
} from "./metrics/metrics-server.js";
import {
  createFileProgressStore,
  createMemoryProgressStore,
} from "./progress-store.js";
import { createAgent, type Agent } from "./runtime/agent.js";
import { systemClock } from "./simulated/clock.js";
import { loadSimulatedCluster } from "./simulated/cluster-file.js";
import type { SimulatedClusterConfig } from "./simulated/config.js";
import { loadSimulatedFleet } from "./simulated/fleet-file.js";
import { mulberry32 } from "./simulated/random.js";
import {
  createSimulatedCluster,
  type SimulatedCluster,
} from "./simulated/simulated-cluster.js";

/** Options of {@link runAgentProcess}. */
export interface AgentProcessOptions {
  readonly config: AgentConfig;
  readonly logger: Logger;
  /** Aborts on SIGTERM/SIGINT: everything stops and the promise resolves. */
  readonly signal: AbortSignal;
  /** How often the summary line may be logged; default 30000 ms. */
  readonly summaryIntervalMs?: number;
}

const parseText = (text: string): unknown => parseYaml(text) as unknown;

async function loadClusters(
  config: AgentConfig,
): Promise<readonly SimulatedClusterConfig[]> {
  const { backend } = config;
  switch (backend.type) {
    case "simulated":
      return [
        await loadSimulatedCluster(backend.file, {
          parseText,
          ...(backend.clusterName === undefined
            ? {}
            : { name: backend.clusterName }),
        }),
      ];
    case "simulatedFleet":
      return (await loadSimulatedFleet(backend.file, { parseText })).clusters;
    default: {
      const unreachable: never = backend;
      return unreachable;
    }
  }
}

async function transportOf(config: AgentConfig): Promise<HubTransport> {
  const { transport } = config;
  return "insecurePlaintext" in transport
    ? { insecurePlaintext: true }
    : { tls: await readHubTls(transport.tls) };
}

/** Resolves with `promise`, or undefined once `signal` aborts first. */
async function unlessAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal,
): Promise<T | undefined> {
  if (signal.aborted) return undefined;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => {
      resolve(undefined);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
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
  const configs = await loadClusters(config);
  const transport = await transportOf(config);
  const fleet = config.backend.type === "simulatedFleet";

  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = createAgentMetrics(registry);
  const agents: Agent[] = [];
  const clusters: SimulatedCluster[] = [];
  let server: MetricsServer | undefined;
  let nc: NatsConnection | undefined;
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

    logger.info({ servers: config.nats }, "Connecting to NATS");
    const connecting = connect({
      servers: [...config.nats],
      name: "flotilla-agent",
      maxReconnectAttempts: -1,
      waitOnFirstConnect: true,
    });
    nc = await unlessAborted(connecting, signal);
    if (nc === undefined) {
      connecting
        .then(
          (late) => late.close(),
          () => undefined,
        )
        .catch(() => undefined);
      return;
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
      const cluster = createSimulatedCluster(c, {
        clock: systemClock,
        random: mulberry32(c.seed),
        parseText,
      });
      clusters.push(cluster);
      await cluster.start({ signal });
      const agent = createAgent(
        { nc, backend: cluster, progress, logger, metrics },
        {
          clusterName: c.name,
          hub: config.hub,
          transport,
          intentsPrefix: config.intentsPrefix,
          eventLevel: fleet ? "debug" : "info",
          windowsReloadIntervalMs: config.windowsReloadIntervalMs,
        },
      );
      agents.push(agent);
      await agent.start({ signal });
    }
    logger.info(
      { agents: agents.length, hub: config.hub, simulated: true },
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
    await Promise.allSettled(clusters.map((c) => c.stop()));
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

/** Whether an error from {@link runAgentProcess} is bad configuration (exit 2). */
export function isConfigError(error: unknown): boolean {
  return error instanceof FlotillaError && error.code === "invalid_argument";
}
