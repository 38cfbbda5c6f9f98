/**
 * Words for the parts of a staged run: what it rolls out, failure counts against budgets, gates
 * (with the exact command that completes a pending one) and members.
 */
import type { Gate, RunPayload } from "@flotilla/core";
import type { GroupView, MemberView, StageView } from "@flotilla/protocol";
import { shortRevision } from "./bundle-view.js";
import { formatDuration } from "./duration.js";
import { DOT } from "./limits.js";
import type { Style } from "./style.js";
import { styleState } from "./style.js";
import { formatAgo, formatInstant } from "./time.js";

/**
 * `upgrade to Kubernetes 1.31.2 (control plane and nodes, node images Latest)`, with `; requires
 * long-term support` for a minor past standard support; `bundle web @ abc…`.
 */
export function payloadWords(payload: RunPayload): string {
  if (payload.kind === "bundle")
    return `bundle ${payload.bundle} revision ${shortRevision(payload.revision)}`;
  const u = payload.upgrade;
  const lts =
    u.type !== "NodeImageOnly" && u.requiresLongTermSupport === true
      ? "; requires long-term support"
      : "";
  switch (u.type) {
    case "Full":
      return `upgrade to Kubernetes ${u.kubernetesVersion} (control plane and nodes, node images ${u.nodeImageSelection}${lts})`;
    case "ControlPlaneOnly":
      return `upgrade to Kubernetes ${u.kubernetesVersion} (control plane only${lts})`;
    case "NodeImageOnly":
      return `node image upgrade (${u.nodeImageSelection}${u.securityPatchOnly === true ? ", security patches only" : ""})`;
  }
}

/**
 * Failures against the budget: `failures 1/2`; `failures 0/0 (fail-fast)` for a stage with no
 * budget at any level; `failures 3 (no limit of its own)`; red once exceeded (strictly,
 * docs/semantics.md#failure-budget).
 */
export function failureWords(
  scope: {
    readonly failureCount: number;
    readonly maxAllowedFailures: number | null;
    readonly failFast?: boolean;
  },
  style: Style,
): string | undefined {
  const { failureCount: n, maxAllowedFailures: budget } = scope;
  if (budget === null) {
    if (scope.failFast === true)
      return n > 0
        ? style.red(`failures ${String(n)}/0 exceeded (fail-fast)`)
        : "fail-fast";
    return n > 0 ? `failures ${String(n)} (no limit of its own)` : undefined;
  }
  const text = `failures ${String(n)}/${String(budget)}${scope.failFast === true ? " (fail-fast)" : ""}`;
  return n > budget ? style.red(`${text} exceeded`) : text;
}

/**
 * `maxConcurrency 2` (with the value as written when it was a percentage); a stage's only when
 * configured (its default, 50, rarely limits anything).
 */
export function concurrencyWords(
  scope: StageView | GroupView,
): string | undefined {
  const written = scope.configuredMaxConcurrency;
  if ("groups" in scope && written === undefined) return undefined;
  return written === undefined || written === String(scope.maxConcurrency)
    ? `maxConcurrency ${String(scope.maxConcurrency)}`
    : `maxConcurrency ${String(scope.maxConcurrency)} (${written})`;
}

/** The command that completes pending gate `gate` of run `run`. */
export function gateCommand(run: string, gate: Gate): string {
  return gate.type === "ScheduledStart"
    ? `flotilla run complete-gate ${run} ${gate.id}`
    : `flotilla run approve ${run} ${gate.id}`;
}

/** A measured number as people read it (NaN and infinities as Prometheus writes them). */
function metricNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : "-Inf";
  return String(Number(value.toPrecision(6)));
}

/**
 * The last measurement of a metric gate in a few words: `0.0042 (Successful)`, or the reason
 * there was none; undefined before the first one.
 */
export function lastMeasurementWords(gate: Gate): string | undefined {
  const last = gate.metric?.measurements.at(-1);
  if (last === undefined) return undefined;
  const values =
    last.values === undefined
      ? ""
      : `${last.values.length === 0 ? "no series" : last.values.slice(0, 3).map(metricNumber).join(", ")}${last.values.length > 3 ? ", …" : ""} `;
  return `${values}(${last.verdict}: ${last.message})`;
}

/** What a metric gate shows under its title: what it measures and how far it is. */
function metricLines(gate: Gate, style: Style, nowMs: number): string[] {
  const metric = gate.metric;
  if (metric === undefined) return [];
  const judged = [
    metric.successCondition === undefined
      ? undefined
      : `success ${metric.successCondition}`,
    metric.failureCondition === undefined
      ? undefined
      : `failure ${metric.failureCondition}`,
  ]
    .filter((x) => x !== undefined)
    .join(", ");
  const lines = [
    style.dim(
      `query ${metric.lastQuery ?? metric.query}; ${judged}; every ${String(metric.intervalSeconds)}s, ${String(metric.measurements.length)} of ${String(metric.count)} taken (failureLimit ${String(metric.failureLimit)}, inconclusiveLimit ${String(metric.inconclusiveLimit)})`,
    ),
  ];
  const last = lastMeasurementWords(gate);
  if (last !== undefined) lines.push(`last: ${last}`);
  if (gate.state === "Pending" && metric.nextAtMs !== undefined)
    lines.push(
      style.dim(`next measurement ${formatAgo(metric.nextAtMs, nowMs)}`),
    );
  return lines;
}

/** The gate's label: `gate ID  Approval "name"  State`. */
export function gateTitle(gate: Gate, style: Style): string {
  const name = gate.displayName === "" ? "" : ` "${gate.displayName}"`;
  const state =
    gate.state === "Pending"
      ? style.bold(style.yellow("Pending"))
      : styleState(style, gate.state);
  return `gate ${gate.id}  ${gate.type}${name}  ${state}`;
}

/** What to say under a gate: who completed it, when it starts, or what to run. */
export function gateDetail(
  run: string,
  gate: Gate,
  style: Style,
  nowMs: number,
): string[] {
  const metric = metricLines(gate, style, nowMs);
  switch (gate.state) {
    case "Completed": {
      const by =
        gate.completedBy === undefined ? "" : ` by ${gate.completedBy}`;
      const at =
        gate.completedAtMs === undefined
          ? ""
          : ` at ${formatInstant(gate.completedAtMs)}`;
      return [...metric, style.dim(`completed${by}${at}`)];
    }
    case "Failed":
      return [
        ...metric,
        style.red(gate.message),
        "to go on anyway, approve it and start the run again:",
        style.yellow(`→ ${gateCommand(run, gate)}`),
      ];
    case "Pending": {
      const lines: string[] = [...metric];
      if (gate.type === "Metric")
        lines.push(
          gate.metric?.verdict === "Inconclusive"
            ? `${gate.message}; to approve:`
            : "measuring; to go on without waiting:",
        );
      else if (gate.type === "ScheduledStart")
        lines.push(
          gate.scheduledAtMs === undefined
            ? "to start now:"
            : `starts ${formatInstant(gate.scheduledAtMs)} (${formatAgo(gate.scheduledAtMs, nowMs)}); to start now:`,
        );
      else
        lines.push(
          gate.reachedAtMs === undefined
            ? "to approve:"
            : `waiting since ${formatInstant(gate.reachedAtMs)}; to approve:`,
        );
      lines.push(style.yellow(`→ ${gateCommand(run, gate)}`));
      return lines;
    }
    case "NotStarted":
    case "Skipped":
      return [];
  }
}

/** The facts after a member's state: reason and message, times, flags. */
export function memberFacts(
  m: MemberView,
  style: Style,
  nowMs: number,
): string[] {
  const facts: string[] = [];
  const why = [m.reason, m.message].filter(
    (w) => w !== undefined && w !== "" && w !== m.state,
  );
  if (why.length > 0) facts.push(why.join(": "));
  if (m.unreachable) facts.push(style.red("agent unreachable"));
  // Bundle runs: the revision sent and what the agent reports of it (docs/semantics.md#staged-bundle-runs).
  const revision = m.target?.revision;
  if (revision !== undefined) {
    facts.push(`revision ${shortRevision(revision)}`);
    if (m.state === "Running")
      facts.push(`agent: ${m.lastReport ?? "nothing reported yet"}`);
    else if (m.state === "Succeeded") facts.push("agent: Ready");
  }
  if (m.state === "Running" && m.startedAtMs !== undefined)
    facts.push(`started ${formatAgo(m.startedAtMs, nowMs)}`);
  if (m.state === "Running" && m.deadlineAtMs !== undefined)
    facts.push(`deadline ${formatInstant(m.deadlineAtMs)}`);
  if (m.notBeforeMs !== undefined && m.notBeforeMs > nowMs)
    facts.push(`not before ${formatInstant(m.notBeforeMs)}`);
  const earlier = m.state === "Failed" ? m.failureCount - 1 : m.failureCount;
  if (earlier > 0)
    facts.push(`${String(earlier)} earlier failure${earlier === 1 ? "" : "s"}`);
  return facts;
}

/** `wait 10m after the stage`, with where the wait stands. */
export function waitWords(stage: StageView, nowMs: number): string | undefined {
  if (stage.afterStageWaitSeconds <= 0) return undefined;
  const head = `wait ${formatDuration(stage.afterStageWaitSeconds)} after the stage`;
  if (stage.waitUntilMs === undefined) return head;
  return stage.waitUntilMs > nowMs
    ? `${head}${DOT}until ${formatInstant(stage.waitUntilMs)} (${formatAgo(stage.waitUntilMs, nowMs)})`
    : `${head}${DOT}done at ${formatInstant(stage.waitUntilMs)}`;
}
