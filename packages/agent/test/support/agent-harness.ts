// One agent for tests: a simulated cluster on a manual clock, a fake hub, real NATS.
import type { NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import {
  createAgent,
  createSimulatedCluster,
  type Agent,
  type AgentMetrics,
  type ProgressStore,
  type SimulatedCluster,
} from "@flotilla/agent";
import {
  createMemoryProgressStore,
  mulberry32,
  parseSimulatedCluster,
} from "@flotilla/agent/testing";
import { createManualClock, type ManualClock } from "@flotilla/node/testing";
import type { StatusReport } from "@flotilla/protocol";
import type { FakeHub } from "./fake-hub.js";
import { compact } from "@flotilla/core";

/** Node pools of the test clusters. */
export const POOLS = [
  { name: "system", imageFamily: "ubuntu-22.04", imageVersion: "2025.01.01" },
];

/** A running agent and what it runs on. */
export interface AgentHarness extends AsyncDisposable {
  readonly agent: Agent;
  readonly cluster: SimulatedCluster;
  readonly clock: ManualClock;
}

/** Options of {@link startAgent}. */
export interface StartAgentOptions {
  readonly nc: NatsConnection;
  readonly hub: FakeHub;
  readonly prefix: string;
  readonly cluster?: string;
  /** Simulated cluster settings over the defaults (Kubernetes 1.30.5, 5 s to ready). */
  readonly settings?: Record<string, unknown>;
  readonly progress?: ProgressStore;
  readonly clock?: ManualClock;
  /** Default 0: no periodic reload of the maintenance source. */
  readonly windowsReloadIntervalMs?: number;
  /** Where the agent records its metrics; default none. */
  readonly metrics?: AgentMetrics;
  /** Runs on the cluster before the agent starts (to spy on its ports). */
  readonly prepare?: (cluster: SimulatedCluster) => void;
}

/** Builds and starts a simulated cluster and its agent. */
export async function startAgent(
  options: StartAgentOptions,
): Promise<AgentHarness> {
  const name = options.cluster ?? "c1";
  const parsed = parseSimulatedCluster({
    name,
    kubernetesVersion: "1.30.5",
    nodePools: POOLS,
    timeToReady: { fixedSeconds: 5 },
    upgradeDuration: { fixedSeconds: 60 },
    ...options.settings,
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const clock = options.clock ?? createManualClock();
  const cluster = createSimulatedCluster(parsed.value, {
    clock,
    random: mulberry32(1),
  });
  await cluster.start();
  options.prepare?.(cluster);
  const agent = createAgent(
    {
      nc: options.nc,
      backend: cluster,
      progress: options.progress ?? createMemoryProgressStore(),
      clock,
      random: () => 0.5,
      logger: pino({ level: "silent" }),
      ...compact({ metrics: options.metrics }),
    },
    {
      clusterName: name,
      hub: options.hub.address,
      transport: { insecurePlaintext: true },
      intentsPrefix: options.prefix,
      session: {
        channelOptions: {
          "grpc.initial_reconnect_backoff_ms": 50,
          "grpc.max_reconnect_backoff_ms": 100,
        },
      },
      watcher: { resyncIntervalMs: 0, timeoutMs: 2_000 },
      windowsReloadIntervalMs: options.windowsReloadIntervalMs ?? 0,
    },
  );
  await agent.start();
  const stop = async (): Promise<void> => {
    await agent.stop();
    await cluster.stop();
  };
  return { agent, cluster, clock, [Symbol.asyncDispose]: stop };
}

/** Consecutive repeats of a phase collapsed: the shape of a report sequence. */
export function phases(reports: readonly StatusReport[]): string[] {
  const out: string[] = [];
  for (const r of reports) if (out.at(-1) !== r.phase) out.push(r.phase);
  return out;
}
