/**
 * One agent: a hub session, an intent watcher and an intent follower over one cluster backend,
 * with its local progress. Many agents may share a process, a NATS connection and a progress
 * store (one simulated fleet); each has its own gRPC connection and stream.
 */
import { FlotillaError, showValue, compact } from "@flotilla/core";
import type { NatsConnection } from "@nats-io/transport-node";
import { parseBundleContent, type BundleContent } from "@flotilla/protocol";
import type { Logger } from "pino";
import {
  createHubSession,
  type HubSession,
  type HubSessionOptions,
} from "../hub/hub-session.js";
import type { SessionState } from "../hub/session-events.js";
import type { HubAddresses } from "../hub/hub-rotation.js";
import type { HubTransport } from "../hub/transport.js";
import { getBundleContent } from "../intents/bundle-content.js";
import {
  createIntentWatcher,
  type IntentWatcher,
  type IntentWatcherOptions,
} from "../intents/intent-watcher.js";
import { noopMetrics, type AgentMetrics } from "../metrics/agent-metrics.js";
import type { ProgressStore } from "./progress-store.js";
import { systemClock, type Clock } from "@flotilla/node";
import { AGENT_VERSION } from "../version.js";
import type { AgentBackend } from "./agent-backend.js";
import { IntentFollower } from "./intent-follower.js";

/** Dependencies of {@link createAgent}. */
export interface AgentDeps {
  /** Shared; the agent neither connects nor closes it. */
  readonly nc: NatsConnection;
  /** Started by the caller before `start()`, stopped after `stop()`. */
  readonly backend: AgentBackend;
  /** May be shared by many agents; the agent calls `load()` (once per store). */
  readonly progress: ProgressStore;
  /** Default: the system clock. */
  readonly clock?: Clock;
  /** Uniform in [0, 1), for every jitter; default Math.random. */
  readonly random?: () => number;
  /** The agent adds `clusterName`. */
  readonly logger: Logger;
  readonly metrics?: AgentMetrics;
}

/** Options of {@link createAgent}. */
export interface AgentOptions {
  readonly clusterName: string;
  /** The hub's gRPC address, `HOST:PORT`, or the addresses of its replicas. */
  readonly hub: HubAddresses;
  readonly transport: HubTransport;
  /** Bucket and subject prefix of intents and bundle content, as the hub's; default `flotilla`. */
  readonly intentsPrefix?: string;
  readonly agentVersion?: string;
  /** Tuning of the hub session (tests shorten timeouts). */
  readonly session?: Pick<
    HubSessionOptions,
    "channelOptions" | "backoff" | "welcomeTimeoutMs" | "closeTimeoutMs"
  >;
  /** Tuning of the intent watcher. */
  readonly watcher?: Pick<
    IntentWatcherOptions,
    "timeoutMs" | "resyncIntervalMs" | "retryMinMs" | "retryMaxMs"
  >;
  /** How often the maintenance source is re-read; default 30000 ms, 0 never. */
  readonly windowsReloadIntervalMs?: number;
  /** Level of per-agent events; "debug" when one process hosts many agents. */
  readonly eventLevel?: "info" | "debug";
}

/** What an agent is doing, for health and summaries. */
export interface AgentStatus {
  readonly clusterName: string;
  readonly session: SessionState;
  /** The generation of the intent being followed; 0 before the first. */
  readonly generation: number;
  readonly lastAppliedGeneration: number;
}

/** One running agent. */
export interface Agent extends AsyncDisposable {
  readonly clusterName: string;
  readonly session: HubSession;
  readonly watcher: IntentWatcher;
  /** Loads progress, then starts the session and the watcher (both retry in the background). */
  start(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Stops the session (ending its stream), the watcher and all work, in that order. */
  stop(): Promise<void>;
  status(): AgentStatus;
}

/** Creates an agent; nothing happens until `start()`. */
export function createAgent(deps: AgentDeps, options: AgentOptions): Agent {
  const { clusterName } = options;
  const clock = deps.clock ?? systemClock;
  const random = deps.random ?? Math.random;
  const metrics = deps.metrics ?? noopMetrics;
  const logger = deps.logger.child({ cluster: clusterName });
  const prefix = options.intentsPrefix;
  const lifetime = new AbortController();
  const background = new Set<Promise<void>>();

  const watcher = createIntentWatcher(
    { nc: deps.nc, random },
    {
      cluster: clusterName,
      ...compact({ prefix }),
      ...options.watcher,
      onError: (error) => {
        // Outages retry on their own: say so at the event level; bad documents are warnings.
        const transient =
          error.code === "unavailable" ||
          error.code === "not_found" ||
          error.code === "deadline_exceeded";
        logger[transient ? (options.eventLevel ?? "info") : "warn"](
          { err: error },
          transient
            ? "Cannot read the intent yet; retrying"
            : "Ignoring an intent",
        );
      },
    },
  );

  const fetchContent = async (
    ref: { readonly digest: string; readonly key: string | undefined },
    fetchOptions: { readonly signal: AbortSignal },
  ): Promise<BundleContent> => {
    const { digest, key } = ref;
    if (key === undefined) {
      throw new FlotillaError(
        "failed_precondition",
        `Cannot fetch bundle content ${digest}: the intent carries no key for it (it was written before content was sealed; the hub adds the key on its next pass)`,
      );
    }
    const bytes = await getBundleContent(
      { nc: deps.nc },
      { digest, key },
      {
        ...compact({ prefix }),
        signal: fetchOptions.signal,
      },
    );
    const parsed = parseBundleContent(bytes);
    if (!parsed.ok)
      throw FlotillaError.invalid(`bundle content ${digest}`, parsed.problems);
    return parsed.value;
  };

  // The follower reports through the session and the session asks the follower: the reporter
  // reaches the session through a closure, used only once both exist.
  const following = new IntentFollower(
    {
      backend: deps.backend,
      progress: deps.progress,
      clock,
      random,
      logger,
      metrics,
      reporter: {
        report: (report) => {
          session.report(report);
        },
        retain: (subjects) => {
          session.retain(subjects);
        },
        factsChanged: () => {
          session.factsChanged();
        },
      },
      fetchContent,
    },
    {
      clusterName,
      ...compact({ eventLevel: options.eventLevel }),
    },
  );
  const session = createHubSession(
    { clock, random, logger, metrics },
    {
      clusterName,
      agentVersion: options.agentVersion ?? AGENT_VERSION,
      hub: options.hub,
      transport: options.transport,
      ...options.session,
      ...compact({ eventLevel: options.eventLevel }),
      lastAppliedGeneration: () => following.lastAppliedGeneration(),
      facts: (factsOptions) => deps.backend.facts(factsOptions),
      onSync: async (_reason, syncOptions) => {
        await watcher.refresh(syncOptions);
        const event = watcher.current();
        if (event !== undefined) following.handle(event);
      },
    },
  );

  const runInBackground = (task: Promise<void>): void => {
    const tracked = task.catch((error: unknown) => {
      if (!lifetime.signal.aborted)
        logger.error({ err: FlotillaError.from(error) }, "Agent task failed");
    });
    background.add(tracked);
    void tracked.finally(() => background.delete(tracked));
  };

  const followIntents = async (): Promise<void> => {
    for await (const event of watcher.events({ signal: lifetime.signal }))
      following.handle(event);
  };

  const reloadWindows = async (intervalMs: number): Promise<void> => {
    const { signal } = lifetime;
    let catalogueProblem: string | undefined;
    for (;;) {
      try {
        await clock.sleep(intervalMs, { signal });
        await deps.backend.windows.reload({ signal });
        await deps.backend.catalogue?.reload({ signal });
        const problem = deps.backend.catalogue?.error();
        if (problem !== undefined && problem !== catalogueProblem)
          logger.warn(problem);
        catalogueProblem = problem;
      } catch (error) {
        if (signal.aborted) return;
        logger.warn(
          { err: FlotillaError.from(error) },
          "Cannot reload maintenance windows",
        );
      }
    }
  };

  let state: "new" | "started" | "stopped" = "new";
  const stop = async (): Promise<void> => {
    if (state === "stopped") return;
    state = "stopped";
    lifetime.abort();
    await session.stop();
    await watcher.stop();
    await following.stop();
    await Promise.allSettled([...background]);
  };

  return {
    clusterName,
    session,
    watcher,
    async start(startOptions = {}) {
      if (state !== "new")
        throw new FlotillaError(
          "failed_precondition",
          `Cannot start the agent of cluster ${showValue(clusterName)}: it was ${state}`,
        );
      state = "started";
      const loaded = await deps.progress.load(startOptions);
      if (loaded.warning !== undefined) logger.warn(loaded.warning);
      following.start();
      deps.backend.windows.watch(
        (event) => {
          session.windowsChanged(event.state.maintenance);
          if (event.state.error !== undefined)
            logger.warn(
              { problems: event.state.error.problems },
              event.state.error.message,
            );
        },
        { signal: lifetime.signal },
      );
      // A new catalogue (a version released) reaches the hub with the facts.
      deps.backend.catalogue?.watch(
        () => {
          session.factsChanged();
        },
        { signal: lifetime.signal },
      );
      session.start();
      runInBackground(followIntents());
      // Resolves only once NATS answers; the session and the follower do not wait for it.
      runInBackground(watcher.start({ signal: lifetime.signal }));
      const reloadMs = options.windowsReloadIntervalMs ?? 30_000;
      if (reloadMs > 0) runInBackground(reloadWindows(reloadMs));
    },
    stop,
    [Symbol.asyncDispose]: stop,
    status: () => ({
      clusterName,
      session: session.state,
      generation: following.generation(),
      lastAppliedGeneration: following.lastAppliedGeneration(),
    }),
  };
}
