/**
 * The hub's Prometheus metrics (named `flotilla_hub_*`, in base units, `_total` on
 * counters) in a registry of their own, so that two hubs in one process (tests) never share
 * counters. Label values come from closed sets only (phases, states, error codes, AdminService
 * method names); anything else is counted as `other`. Cluster names are never labels: a fleet of
 * thousands of clusters would make thousands of series. Run names label one gauge only (members by
 * state), and only for the runs the caller lists (active and recently finished, see
 * metrics-observer.ts): the series of every other run are removed, so their number stays bounded.
 */
import {
  WEBHOOK_OUTCOMES,
  type WebhookOutcome,
} from "../gitrepos/git-webhook.js";
import {
  FLOTILLA_ERROR_CODES,
  type FlotillaErrorCode,
  type MemberState,
  type RunState,
  type TransitionScope,
} from "@flotilla/core";
import {
  GATE_STATE,
  loadProtocol,
  MEMBER_STATE,
  RUN_STATE,
  SCOPE_STATE,
  STATUS_PHASE,
  TRANSITION_SCOPE,
  type StatusPhase,
} from "@flotilla/protocol";
import {
  AUDIT_SKIP_REASONS,
  type AuditSkipReason,
} from "../audit/audit-record.js";
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
} from "prom-client";

/** How an admin call ended: `ok`, or its error's code. */
export type AdminCallCode = FlotillaErrorCode | "ok";

/** What became of one intent publish. */
export type IntentPublishResult =
  "written" | "unchanged" | "refused" | "failed";

/** An agent registration call. */
export type RegistrationMethod = "Register" | "RenewIdentity";

/** Member counts of one run, by state; states left out are 0. */
export type MemberCounts = Readonly<Partial<Record<MemberState, number>>>;

/** The hub's metrics: typed recorders over one registry. */
export interface HubMetrics {
  /** Serve with `await registry.metrics()` and `registry.contentType`. */
  readonly registry: Registry;
  /** Agents with an open session now. */
  setAgentsConnected(count: number): void;
  /** Whether the hub's NATS connection is up (1) or down (0: reconnecting or closed). */
  setNatsConnected(connected: boolean): void;
  /** An agent session refused (bad hello, wrong protocol version, duplicate cluster...). */
  agentSessionRefused(code: FlotillaErrorCode): void;
  /** A status report received; `accepted` false when its generation did not count. */
  statusReport(phase: StatusPhase, accepted: boolean): void;
  /** An agent missed its heartbeats and is now Unreachable. */
  heartbeatTimedOut(): void;
  /** One publish: counts written intents and observes the latency of every attempt. */
  intentPublish(result: IntentPublishResult, durationMs: number): void;
  /** A state change inside a run (core's `Transitioned` action). */
  runTransition(scope: TransitionScope, to: string): void;
  /** A Ready report that started other members: seconds until their intents were published. */
  reportToIntent(seconds: number): void;
  /** The number of runs in each state; states left out are set to 0. */
  setRunsByState(counts: Readonly<Partial<Record<RunState, number>>>): void;
  /** One AdminService call: `method` as `StartUpdateRun` or the full gRPC path. */
  adminCall(method: string, code: AdminCallCode, durationMs: number): void;
  /** An AdminService call refused by authentication or authorization, before any handler ran. */
  adminCallDenied(method: string, code: FlotillaErrorCode): void;
  /** A Register or RenewIdentity call answered: `ok`, or its error's code. */
  registration(method: RegistrationMethod, code: AdminCallCode): void;
  /** A refused call counted but not recorded in the audit log; `method` bare or full. */
  auditRefusalSuppressed(method: string): void;
  /**
   * Members of each listed run by state (keyed by run name). Series of runs not listed are
   * removed: list the runs worth watching, not every run ever stored.
   */
  setMembersByRun(runs: ReadonlyMap<string, MemberCounts>): void;
  /** A list or watch of the audit log skipped a stored message that is not a valid record. */
  auditRecordSkipped(reason: AuditSkipReason): void;
  /** An audit record could not be stored (it was written to the hub's log instead). */
  auditWriteFailed(code: FlotillaErrorCode): void;
  /** The leases this replica holds now, by kind of unit. */
  setLeasesHeld(counts: Readonly<Record<LeaseKind, number>>): void;
  /** A unit taken over: its lease was held by another replica, or by none since it expired. */
  leaseTakeover(kind: LeaseKind): void;
  /** A report or command sent on to the replica that owns its run (or the bundle rollouts). */
  forwarded(kind: ForwardKind): void;
  /** An agent's version catalogue refused (docs/engine.md#the-version-catalogue). */
  catalogueRejected(reason: "implausible" | "malformed"): void;
  /** A request to POST /hooks/git, by how it ended (gitrepos/git-webhook.ts). */
  gitWebhook(outcome: WebhookOutcome): void;
}

/** What a lease is on: an update run, the bundle rollouts, or the auto-upgrade trigger. */
export const LEASE_KINDS = [
  "run",
  "bundles",
  "auto-upgrade",
  "gitrepos",
] as const;
export type LeaseKind = (typeof LEASE_KINDS)[number];

/** What a replica forwards to an owner. */
export const FORWARD_KINDS = ["report", "command"] as const;
export type ForwardKind = (typeof FORWARD_KINDS)[number];

/** Options of {@link createHubMetrics}. */
export interface HubMetricsOptions {
  /** Add prom-client's default process and Node.js metrics; default true. */
  readonly defaultMetrics?: boolean;
}

const OTHER = "other";
const LATENCY_BUCKETS_SECONDS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Creates the hub's metrics in a new registry. */
export function createHubMetrics(options: HubMetricsOptions = {}): HubMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true)
    collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const agentsConnected = new Gauge({
    name: "flotilla_hub_agents_connected",
    help: "Agents with an open session.",
    registers,
  });
  const natsConnected = new Gauge({
    name: "flotilla_hub_nats_connected",
    help: "1 while the hub's NATS connection is up, 0 while it is down (the hub is then not ready).",
    registers,
  });
  const catalogueRejected = new Counter({
    name: "flotilla_hub_catalogue_rejected_total",
    help: "Version catalogues from agents refused (the cluster keeps its previous one), by reason.",
    labelNames: ["reason"] as const,
    registers,
  });
  for (const reason of ["implausible", "malformed"])
    catalogueRejected.inc({ reason }, 0);
  const gitWebhooks = new Counter({
    name: "flotilla_hub_git_webhooks_total",
    help: "Requests to POST /hooks/git, by outcome (accepted, or why refused).",
    labelNames: ["outcome"] as const,
    registers,
  });
  for (const outcome of WEBHOOK_OUTCOMES) gitWebhooks.inc({ outcome }, 0);
  const sessionsRefused = new Counter({
    name: "flotilla_hub_agent_sessions_refused_total",
    help: "Agent sessions refused, by error code.",
    labelNames: ["code"] as const,
    registers,
  });
  const statusReports = new Counter({
    name: "flotilla_hub_status_reports_total",
    help: "Status reports received, by phase and whether they counted toward a rollout.",
    labelNames: ["phase", "accepted"] as const,
    registers,
  });
  const heartbeatsTimedOut = new Counter({
    name: "flotilla_hub_heartbeats_timed_out_total",
    help: "Agents that missed their heartbeats and became Unreachable.",
    registers,
  });
  const intentsPublished = new Counter({
    name: "flotilla_hub_intents_published_total",
    help: "Intents written to NATS (no-op republishes excluded).",
    registers,
  });
  const publishDuration = new Histogram({
    name: "flotilla_hub_intent_publish_duration_seconds",
    help: "Time to publish one intent, by result.",
    labelNames: ["result"] as const,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers,
  });
  const reportToIntent = new Histogram({
    name: "flotilla_hub_report_to_intent_seconds",
    help: "From a member's Ready report arriving to the intents of the members it let start being published.",
    buckets: [
      0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5,
      1, 2.5,
    ],
    registers,
  });
  const runTransitions = new Counter({
    name: "flotilla_hub_run_transitions_total",
    help: "State changes inside runs, by scope and new state.",
    labelNames: ["scope", "to"] as const,
    registers,
  });
  const runsByState = new Gauge({
    name: "flotilla_hub_runs",
    help: "Update runs, by state.",
    labelNames: ["state"] as const,
    registers,
  });
  const adminCalls = new Counter({
    name: "flotilla_hub_admin_calls_total",
    help: "AdminService calls, by method and outcome code.",
    labelNames: ["method", "code"] as const,
    registers,
  });
  const adminDuration = new Histogram({
    name: "flotilla_hub_admin_call_duration_seconds",
    help: "AdminService call duration, by method.",
    labelNames: ["method"] as const,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers,
  });

  const adminDenied = new Counter({
    name: "flotilla_hub_admin_calls_denied_total",
    help: "AdminService calls refused by authentication or authorization, by method and code.",
    labelNames: ["method", "code"] as const,
    registers,
  });
  const registrations = new Counter({
    name: "flotilla_hub_registrations_total",
    help: "Agent Register and RenewIdentity calls, by method and outcome code.",
    labelNames: ["method", "code"] as const,
    registers,
  });
  const refusalsSuppressed = new Counter({
    name: "flotilla_hub_audit_refusals_suppressed_total",
    help: "Refused calls not recorded one by one in the audit log (past the limit per peer; summary records count them), by method.",
    labelNames: ["method"] as const,
    registers,
  });
  const runMembers = new Gauge({
    name: "flotilla_hub_run_members",
    help: "Members of active and recently finished update runs, by run and member state.",
    labelNames: ["run", "state"] as const,
    registers,
  });
  const auditSkipped = new Counter({
    name: "flotilla_hub_audit_records_skipped_total",
    help: "Messages of the audit stream that a list or watch skipped because they are not valid records, by reason; counted once per read that passes over them.",
    labelNames: ["reason"] as const,
    registers,
  });
  // Every reason has a series from the start: an alert on its increase sees the first skip.
  for (const reason of AUDIT_SKIP_REASONS) auditSkipped.inc({ reason }, 0);
  const auditWriteFailures = new Counter({
    name: "flotilla_hub_audit_write_failures_total",
    help: "Audit records the audit stream did not take (written to the hub's log instead), by error code.",
    labelNames: ["code"] as const,
    registers,
  });
  const leasesHeld = new Gauge({
    name: "flotilla_hub_leases_held",
    help: "Leases this hub replica holds, by kind of unit (run, bundles, auto-upgrade).",
    labelNames: ["kind"] as const,
    registers,
  });
  const leaseTakeovers = new Counter({
    name: "flotilla_hub_lease_takeovers_total",
    help: "Units this hub replica took over from another replica or after their lease expired, by kind of unit.",
    labelNames: ["kind"] as const,
    registers,
  });
  const forwardedTotal = new Counter({
    name: "flotilla_hub_forwarded_total",
    help: "Agent reports and admin commands this hub replica sent on to the replica owning their run, by kind.",
    labelNames: ["kind"] as const,
    registers,
  });
  // Every kind has a series from the start: a single hub shows zeros, and alerts see the first one.
  for (const kind of LEASE_KINDS) {
    leasesHeld.set({ kind }, 0);
    leaseTakeovers.inc({ kind }, 0);
  }
  for (const kind of FORWARD_KINDS) forwardedTotal.inc({ kind }, 0);
  /** Runs with series in `runMembers` now. */
  const runsShown = new Set<string>();

  const phases = new Set<string>(STATUS_PHASE.values);
  const scopes = new Set<string>(TRANSITION_SCOPE.values);
  const states = new Set<string>([
    ...RUN_STATE.values,
    ...SCOPE_STATE.values,
    ...MEMBER_STATE.values,
    ...GATE_STATE.values,
  ]);
  const methods = new Set(Object.keys(loadProtocol().adminService));
  const refusedMethods = new Set([
    ...methods,
    ...Object.keys(loadProtocol().agentService),
  ]);
  const codes = new Set<string>([
    "ok",
    ...FLOTILLA_ERROR_CODES,
  ] satisfies AdminCallCode[]);
  const known = (set: ReadonlySet<string>, value: string): string =>
    set.has(value) ? value : OTHER;
  const methodLabel = (method: string): string =>
    known(methods, method.slice(method.lastIndexOf("/") + 1));

  // Every error code has a series from the start: an alert on its increase sees the first one.
  for (const code of codes) {
    if (code !== "ok") auditWriteFailures.inc({ code }, 0);
  }
  // Every run state has a series from the start, so that dashboards never see gaps.
  for (const state of RUN_STATE.values) runsByState.set({ state }, 0);

  return {
    registry,
    setAgentsConnected(count) {
      agentsConnected.set(count);
    },
    setNatsConnected(connected) {
      natsConnected.set(connected ? 1 : 0);
    },
    agentSessionRefused(code) {
      sessionsRefused.inc({ code: known(codes, code) });
    },
    statusReport(phase, accepted) {
      statusReports.inc({
        phase: known(phases, phase),
        accepted: accepted ? "true" : "false",
      });
    },
    heartbeatTimedOut() {
      heartbeatsTimedOut.inc();
    },
    intentPublish(result, durationMs) {
      if (result === "written") intentsPublished.inc();
      publishDuration.observe({ result }, durationMs / 1000);
    },
    reportToIntent(seconds) {
      reportToIntent.observe(seconds);
    },
    runTransition(scope, to) {
      runTransitions.inc({
        scope: known(scopes, scope),
        to: known(states, to),
      });
    },
    setRunsByState(counts) {
      for (const state of RUN_STATE.values) {
        runsByState.set({ state }, counts[state] ?? 0);
      }
    },
    adminCall(method, code, durationMs) {
      const label = methodLabel(method);
      adminCalls.inc({ method: label, code: known(codes, code) });
      adminDuration.observe({ method: label }, durationMs / 1000);
    },
    adminCallDenied(method, code) {
      adminDenied.inc({
        method: methodLabel(method),
        code: known(codes, code),
      });
    },
    registration(method, code) {
      registrations.inc({ method, code: known(codes, code) });
    },
    auditRefusalSuppressed(method) {
      refusalsSuppressed.inc({
        method: known(
          refusedMethods,
          method.slice(method.lastIndexOf("/") + 1),
        ),
      });
    },
    setMembersByRun(runs) {
      for (const run of runsShown) {
        if (runs.has(run)) continue;
        for (const state of MEMBER_STATE.values)
          runMembers.remove({ run, state });
        runsShown.delete(run);
      }
      for (const [run, counts] of runs) {
        for (const state of MEMBER_STATE.values)
          runMembers.set({ run, state }, counts[state] ?? 0);
        runsShown.add(run);
      }
    },
    auditRecordSkipped(reason) {
      auditSkipped.inc({ reason });
    },
    setLeasesHeld(counts) {
      for (const kind of LEASE_KINDS) leasesHeld.set({ kind }, counts[kind]);
    },
    leaseTakeover(kind) {
      leaseTakeovers.inc({ kind });
    },
    forwarded(kind) {
      forwardedTotal.inc({ kind });
    },
    catalogueRejected(reason) {
      catalogueRejected.inc({ reason });
    },
    gitWebhook(outcome) {
      gitWebhooks.inc({ outcome });
    },
    auditWriteFailed(code) {
      auditWriteFailures.inc({ code: known(codes, code) });
    },
  };
}
