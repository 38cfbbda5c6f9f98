/**
 * The agent's Prometheus metrics (STYLE "Names": `flotilla_agent_*`, base units, `_total` on
 * counters). No per-cluster labels: one process may host thousands of simulated agents, and the
 * hub already tracks each cluster; these say how the process as a whole is doing.
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
  heartbeatSent(): void;
  reportSent(phase: StatusPhase): void;
  reportAcked(accepted: boolean): void;
  /** The hub refused a session or a message (a StreamError). */
  hubError(code: FlotillaErrorCode): void;
  intentReceived(): void;
  /** One bundle revision from Applying to Applied or Failed. */
  applyFinished(outcome: "Applied" | "Failed", durationMs: number): void;
  /** One upgrade from its start to Succeeded or Failed (time Pending not included). */
  upgradeFinished(outcome: "Succeeded" | "Failed", durationMs: number): void;
}

/** Metrics that go nowhere. */
export const noopMetrics: AgentMetrics = {
  sessionConnected: () => undefined,
  sessionDisconnected: () => undefined,
  reconnect: () => undefined,
  heartbeatSent: () => undefined,
  reportSent: () => undefined,
  reportAcked: () => undefined,
  hubError: () => undefined,
  intentReceived: () => undefined,
  applyFinished: () => undefined,
  upgradeFinished: () => undefined,
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
    heartbeatSent: () => {
      heartbeats.inc();
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
  };
}
