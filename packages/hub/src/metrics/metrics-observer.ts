/**
 * How the hub feeds its metrics (metrics.ts): the {@link HubObserver} hooks that record events as
 * they happen, the replication hooks (lease takeovers, forwarding), and the gauges read from the
 * hub's state on an interval (agents connected, runs by state, members of each run by state,
 * leases held). main.ts wires them all; tests use the same functions, so what
 * they scrape is what a running hub serves.
 *
 * Members by run is the one gauge labelled by run name. It lists active runs and runs that
 * finished less than `finishedRunRetentionMs` ago (default one hour, long enough for a dashboard
 * to show how a run ended); older finished runs lose their series, so however many runs the store
 * keeps, the number of series stays bounded by the runs of the last hour.
 */
import {
  isRunFinished,
  type MemberState,
  type Run,
  type RunState,
  type TransitionScope,
} from "@flotilla/core";
import { codeOfGrpcStatus, type StatusPhase } from "@flotilla/protocol";
import type { HubObserver } from "../hub.js";
import type { LeaseKeeper } from "../leases/lease-keeper.js";
import {
  AUTO_UPGRADE_UNIT,
  GITREPOS_UNIT,
  runOfUnit,
} from "../leases/units.js";
import type {
  ForwardKind,
  HubMetrics,
  LeaseKind,
  MemberCounts,
} from "./metrics.js";
import type { RunManager } from "../runs/run-manager.js";

/** Finished runs keep their member series this long after they finished: one hour. */
export const DEFAULT_FINISHED_RUN_RETENTION_MS = 3_600_000;

/** The observer hooks of a hub, recording into `metrics`. */
export function hubObserverOf(metrics: HubMetrics): HubObserver {
  return {
    onTransition: (scope, to) => {
      // Unknown scopes and states are counted as `other` by the metrics themselves.
      metrics.runTransition(scope as TransitionScope, to);
    },
    onReportToIntent: (seconds) => {
      metrics.reportToIntent(seconds);
    },
    onSessionRefused: (code) => {
      metrics.agentSessionRefused(
        code as Parameters<HubMetrics["agentSessionRefused"]>[0],
      );
    },
    onCatalogueRejected: (reason) => {
      metrics.catalogueRejected(reason);
    },
    onReport: (phase, accepted) => {
      metrics.statusReport(phase as StatusPhase, accepted);
    },
    onIntentPublish: (outcome, durationMs) => {
      metrics.intentPublish(outcome, durationMs);
    },
    onAdminCall: (method, code, durationMs) => {
      metrics.adminCall(
        method,
        code === 0 ? "ok" : codeOfGrpcStatus(code),
        durationMs,
      );
    },
    onAdminDenied: (method, code) => {
      metrics.adminCallDenied(method, code);
    },
    onAuditWriteFailed: (code) => {
      metrics.auditWriteFailed(code);
    },
    onRegistration: (method, code) => {
      metrics.registration(method, code);
    },
    onRefusalSuppressed: (method) => {
      metrics.auditRefusalSuppressed(method);
    },
    onUnreachable: (count) => {
      for (let i = 0; i < count; i++) metrics.heartbeatTimedOut();
    },
  };
}

/** What a lease's unit is, as the lease metrics label it. */
export function leaseKindOf(unit: string): LeaseKind {
  if (unit === AUTO_UPGRADE_UNIT) return "auto-upgrade";
  if (unit === GITREPOS_UNIT) return "gitrepos";
  return runOfUnit(unit) === undefined ? "bundles" : "run";
}

/** The hooks of a replica's lease keeper and forwarding, recording into `metrics`. */
export interface ReplicationObserver {
  /** For the hub's replication `onTakeover`: counts units that had a holder before. */
  readonly onTakeover: (unit: string, from: string | undefined) => void;
  /** For the run forwarding's `onForwarded`. */
  readonly onForwarded: (kind: ForwardKind) => void;
}

/** The replication hooks recording into `metrics`. */
export function replicationObserverOf(
  metrics: HubMetrics,
): ReplicationObserver {
  return {
    // A unit that had no lease is new (or was handed over and released), not taken over.
    onTakeover: (unit, from) => {
      if (from !== undefined) metrics.leaseTakeover(leaseKindOf(unit));
    },
    onForwarded: (kind) => {
      metrics.forwarded(kind);
    },
  };
}

/**
 * Member counts by state of the runs worth a series at `nowMs`: every run not finished, and
 * finished runs until `retentionMs` after they finished.
 */
export function membersByRun(
  runs: Iterable<Run>,
  nowMs: number,
  retentionMs: number,
): Map<string, MemberCounts> {
  const shown = new Map<string, MemberCounts>();
  for (const run of runs) {
    if (isRunFinished(run.state)) {
      const finishedAtMs = run.finishedAtMs ?? run.stateChangedAtMs;
      if (nowMs - finishedAtMs >= retentionMs) continue;
    }
    const counts: Partial<Record<MemberState, number>> = {};
    for (const stage of run.stages)
      for (const group of stage.groups)
        for (const member of group.members)
          counts[member.state] = (counts[member.state] ?? 0) + 1;
    shown.set(run.name, counts);
  }
  return shown;
}

/** What the state gauges read. */
export interface HubGaugeSources {
  readonly registry: { connectedCount(): number };
  readonly runs: Pick<RunManager, "list">;
  /** The lease keeper of a hub run as replicas; absent or undefined: no leases. */
  readonly leases?: Pick<LeaseKeeper, "heldUnits"> | undefined;
}

/** Options of {@link startHubGauges}. */
export interface HubGaugeOptions {
  /** How often the gauges are refreshed; main.ts uses 2000 ms. */
  readonly intervalMs: number;
  /** Default {@link DEFAULT_FINISHED_RUN_RETENTION_MS}. */
  readonly finishedRunRetentionMs?: number;
  /** The hub's clock; default Date.now. */
  readonly now?: () => number;
}

/** Gauges refreshed on an interval. */
export interface HubGauges {
  /** Refreshes every gauge now (also done on every interval). */
  refresh(): void;
  stop(): void;
}

/** Refreshes the state gauges now and then every `intervalMs`, until `stop()`. */
export function startHubGauges(
  sources: HubGaugeSources,
  metrics: HubMetrics,
  options: HubGaugeOptions,
): HubGauges {
  const now = options.now ?? Date.now;
  const retentionMs =
    options.finishedRunRetentionMs ?? DEFAULT_FINISHED_RUN_RETENTION_MS;
  const refresh = (): void => {
    metrics.setAgentsConnected(sources.registry.connectedCount());
    const runs = sources.runs.list().map((stored) => stored.run);
    const byState: Partial<Record<RunState, number>> = {};
    for (const run of runs) byState[run.state] = (byState[run.state] ?? 0) + 1;
    metrics.setRunsByState(byState);
    metrics.setMembersByRun(membersByRun(runs, now(), retentionMs));
    const held: Record<LeaseKind, number> = {
      run: 0,
      bundles: 0,
      "auto-upgrade": 0,
      gitrepos: 0,
    };
    for (const unit of sources.leases?.heldUnits() ?? [])
      held[leaseKindOf(unit)] += 1;
    metrics.setLeasesHeld(held);
  };
  refresh();
  const timer = setInterval(refresh, options.intervalMs);
  timer.unref();
  return {
    refresh,
    stop: () => {
      clearInterval(timer);
    },
  };
}
