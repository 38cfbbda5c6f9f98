/**
 * The hub session's public shape: what it needs, how it is tuned, what it offers. The
 * implementation is hub-session.ts.
 */
import type { Maintenance } from "@flotilla/core";
import type { ChannelOptions } from "@grpc/grpc-js";
import type { ClusterFacts, StatusSubject } from "@flotilla/protocol";
import type { Logger } from "pino";
import type { AgentMetrics } from "../metrics/agent-metrics.js";
import type { Clock } from "@flotilla/node";
import type { BackoffOptions } from "@flotilla/node";
import type {
  SessionEvent,
  SessionState,
  SyncReason,
} from "./session-events.js";
import type { HubAddresses } from "./hub-rotation.js";
import type { StatusReportInput } from "./status-outbox.js";
import type { HubTransport } from "./transport.js";

/** Dependencies of `createHubSession`. */
export interface HubSessionDeps {
  readonly clock: Clock;
  /** Uniform in [0, 1), for backoff jitter and the order of the hub's addresses; default Math.random. */
  readonly random?: () => number;
  /** Already carries `clusterName`. */
  readonly logger: Logger;
  readonly metrics?: AgentMetrics;
}

/** Options of `createHubSession`. */
export interface HubSessionOptions {
  readonly clusterName: string;
  readonly agentVersion: string;
  /**
   * The hub's AgentService address, `HOST:PORT`, or the addresses of its replicas: the session
   * connects to one at a time and moves to the next after every failed or ended stream
   * (hub-rotation.ts).
   */
  readonly hub: HubAddresses;
  readonly transport: HubTransport;
  /** Added to (and overriding) {@link HUB_CHANNEL_DEFAULTS}. */
  readonly channelOptions?: ChannelOptions;
  /** Reconnect delays; default 500 ms doubling to 8 s, ±50%. */
  readonly backoff?: Omit<BackoffOptions, "random">;
  /** How long to wait for welcome after hello; default 30000 ms. */
  readonly welcomeTimeoutMs?: number;
  /** How long `stop()` waits for the hub to end the stream; default 2000 ms (real time). */
  readonly closeTimeoutMs?: number;
  /** Level of per-session events (connected, disconnected); "debug" when one process hosts many. */
  readonly eventLevel?: "info" | "debug";
  /** The highest intent generation finished, for hello and heartbeats. */
  readonly lastAppliedGeneration: () => number;
  /** The cluster's facts, read before every hello and on `factsChanged()`. */
  readonly facts: (options: {
    readonly signal: AbortSignal;
  }) => Promise<ClusterFacts>;
  /**
   * Brings the intent up to date before the current statuses go out again (re-read it, report on
   * anything new). Errors are logged; the statuses go out anyway.
   */
  readonly onSync?: (
    reason: SyncReason,
    options: { readonly signal: AbortSignal },
  ) => Promise<void>;
  readonly onEvent?: (event: SessionEvent) => void;
}

/** Counters of one session, for tests and summaries. */
export interface SessionStats {
  readonly connects: number;
  readonly heartbeatsSent: number;
  readonly reportsSent: number;
  readonly acksReceived: number;
}

/** One agent's session with the hub. */
export interface HubSession extends AsyncDisposable {
  readonly clusterName: string;
  readonly state: SessionState;
  /** The hub address of the welcomed stream; undefined when not connected. */
  readonly connectedAddress: string | undefined;
  /** Starts connecting (and reconnecting) in the background. */
  start(): void;
  /** Ends the stream (half-close, then cancel), stops every timer and closes the channel. */
  stop(): Promise<void>;
  /** Sets an item's current status; sends it now when welcomed, else after the next welcome. */
  report(report: StatusReportInput): void;
  /** Forgets the statuses of items not in `subjects`: they left the intent. */
  retain(subjects: Iterable<StatusSubject>): void;
  /** The current status of every item, in the order items were first reported. */
  currentStatuses(): StatusReportInput[];
  /** Re-reads the facts and sends them on the open stream (a fact other than windows changed). */
  factsChanged(): void;
  /** Sends windowsChanged on the open stream; undefined means no constraints. */
  windowsChanged(maintenance: Maintenance | undefined): void;
  stats(): SessionStats;
  /**
   * Ends the current stream (half-close) and connects again at once with a new channel, whose
   * credentials are read afresh from the transport: how a renewed client certificate takes
   * effect. It stays with the hub address it was connected to. Statuses not yet acked go out
   * again after the welcome, as after any reconnect.
   */
  reconnect(reason: string): void;
}

/**
 * Channel options every session starts from: its own connection (a process hosting many agents
 * must not multiplex them onto one), grpc-js's reconnects paced like the session's, and keepalive
 * pings so a hub that vanished without a FIN is noticed.
 */
export const HUB_CHANNEL_DEFAULTS: ChannelOptions = {
  "grpc.use_local_subchannel_pool": 1,
  "grpc.initial_reconnect_backoff_ms": 500,
  "grpc.max_reconnect_backoff_ms": 8_000,
  "grpc.keepalive_time_ms": 30_000,
  "grpc.keepalive_timeout_ms": 10_000,
};
