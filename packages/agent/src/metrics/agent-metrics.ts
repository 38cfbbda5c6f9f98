/**
 * The agent's Prometheus metrics (named `flotilla_agent_*`, in base units, `_total` on
 * counters). No per-cluster labels: one process may host thousands of simulated agents, and the
 * hub already tracks each cluster; these say how the process as a whole is doing. Bundle names
 * are the only names used as labels (a fleet has tens of bundles, not thousands); never resource
 * names. The gauges read at scrape time (session states, resources not ready, certificate
 * expiry) are in agent-gauges.ts.
 */
import type { FlotillaErrorCode } from "@flotilla/core";
import type { StatusPhase } from "@flotilla/protocol";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** What the agent's components count; {@link noopMetrics} when nobody scrapes. */
export interface AgentMetrics {
  sessionConnected(): void;
  sessionDisconnected(): void;
  /** A connection attempt after the first one of a session. */
  reconnect(): void;
  /** A session moved on to another of the hub's addresses (its stream failed or ended). */
  hubFailover(): void;
  heartbeatSent(): void;
  /**
   * How late a heartbeat went out: its send time minus when it was due (the previous heartbeat,
   * or the welcome, plus the interval). A heartbeat skipped while the stream was backlogged makes
   * the next one an interval late.
   */
  heartbeatLag(lagMs: number): void;
  reportSent(phase: StatusPhase): void;
  reportAcked(accepted: boolean): void;
  /** The hub refused a session or a message (a StreamError). */
  hubError(code: FlotillaErrorCode): void;
  intentReceived(): void;
  /** One bundle revision from Applying to Applied or Failed. */
  applyFinished(outcome: "Applied" | "Failed", durationMs: number): void;
  /** One upgrade from its start to Succeeded or Failed (time Pending not included). */
  upgradeFinished(outcome: "Succeeded" | "Failed", durationMs: number): void;
  /** A bundle the agent follows went from another phase to Modified: its objects drifted. */
  driftDetected(bundle: string): void;
  /** One correction of one drifted object (docs/agent.md#drift-correction), by outcome. */
  driftCorrected(bundle: string, result: "ok" | "error"): void;
}

/** Metrics that go nowhere. */
export const noopMetrics: AgentMetrics = {
  sessionConnected: () => undefined,
  sessionDisconnected: () => undefined,
  reconnect: () => undefined,
  hubFailover: () => undefined,
  heartbeatSent: () => undefined,
  heartbeatLag: () => undefined,
  reportSent: () => undefined,
  reportAcked: () => undefined,
  hubError: () => undefined,
  intentReceived: () => undefined,
  applyFinished: () => undefined,
  upgradeFinished: () => undefined,
  driftDetected: () => undefined,
  driftCorrected: () => undefined,
};

/** Registers the agent's metrics in `registry`. */
export function createAgentMetrics(registry: Registry): AgentMetrics {
  const registers = [registry];
  const sessions = new Gauge({
    name: "flotilla_agent_sessions_connected",
    help: "Hub sessions that are welcomed and open",
    registers,
  });
  const reconnects = new Counter({
    name: "flotilla_agent_reconnects_total",
    help: "Connection attempts to the hub after a session's first",
    registers,
  });
  const failovers = new Counter({
    name: "flotilla_agent_hub_failovers_total",
    help: "Times a hub session moved on to another of the hub's addresses after its stream failed or ended",
    registers,
  });
  const heartbeats = new Counter({
    name: "flotilla_agent_heartbeats_sent_total",
    help: "Heartbeats sent to the hub",
    registers,
  });
  const reports = new Counter({
    name: "flotilla_agent_reports_sent_total",
    help: "Status reports sent to the hub, by phase",
    labelNames: ["phase"] as const,
    registers,
  });
  const acks = new Counter({
    name: "flotilla_agent_reports_acked_total",
    help: "Acks received for status reports, by whether the hub counted the report",
    labelNames: ["accepted"] as const,
    registers,
  });
  const hubErrors = new Counter({
    name: "flotilla_agent_hub_errors_total",
    help: "Stream errors the hub sent (refused sessions or messages), by code",
    labelNames: ["code"] as const,
    registers,
  });
  const intents = new Counter({
    name: "flotilla_agent_intents_received_total",
    help: "New intent generations received",
    registers,
  });
  const applySeconds = new Histogram({
    name: "flotilla_agent_apply_duration_seconds",
    help: "Time from fetching a bundle revision to Applied or Failed",
    labelNames: ["outcome"] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });
  const upgradeSeconds = new Histogram({
    name: "flotilla_agent_upgrade_duration_seconds",
    help: "Time from starting a platform upgrade to Succeeded or Failed",
    labelNames: ["outcome"] as const,
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200],
    registers,
  });
  const heartbeatLagSeconds = new Histogram({
    name: "flotilla_agent_heartbeat_lag_seconds",
    help: "How late heartbeats were sent: send time minus the time they were due",
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const drifts = new Counter({
    name: "flotilla_agent_drift_detected_total",
    help: "Times a followed bundle's objects drifted (its phase became Modified), by bundle",
    labelNames: ["bundle"] as const,
    registers,
  });
  const corrections = new Counter({
    name: "flotilla_agent_drift_corrections_total",
    help: "Corrections of drifted or missing objects (correctDrift), by bundle and result (ok, error)",
    labelNames: ["bundle", "result"] as const,
    registers,
  });
  return {
    sessionConnected: () => {
      sessions.inc();
    },
    sessionDisconnected: () => {
      sessions.dec();
    },
    reconnect: () => {
      reconnects.inc();
    },
    hubFailover: () => {
      failovers.inc();
    },
    heartbeatSent: () => {
      heartbeats.inc();
    },
    heartbeatLag: (lagMs) => {
      heartbeatLagSeconds.observe(Math.max(0, lagMs) / 1000);
    },
    reportSent: (phase) => {
      reports.inc({ phase });
    },
    reportAcked: (accepted) => {
      acks.inc({ accepted: String(accepted) });
    },
    hubError: (code) => {
      hubErrors.inc({ code });
    },
    intentReceived: () => {
      intents.inc();
    },
    applyFinished: (outcome, durationMs) => {
      applySeconds.observe({ outcome }, durationMs / 1000);
    },
    upgradeFinished: (outcome, durationMs) => {
      upgradeSeconds.observe({ outcome }, durationMs / 1000);
    },
    driftDetected: (bundle) => {
      drifts.inc({ bundle });
    },
    driftCorrected: (bundle, result) => {
      corrections.inc({ bundle, result });
    },
  };
}
