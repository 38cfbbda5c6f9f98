/**
 * Simulates a staged update run in virtual time with the real engine: the scenario decides when
 * each started member succeeds or fails, when agents go offline, when clusters join or leave, and
 * when operators approve gates or act on the run; `step` decides everything else.
 */
import type { Cluster } from "../cluster.js";
import type { SimulationOutput, TimelineEntry } from "../preview-types.js";
import type { Measurement, QueryOutcome } from "../metrics/analysis.js";
import { fail, ok, type Result } from "../result.js";
import { behaviourOf, failsAttempt, type Scenario } from "../scenario.js";
import { joiningLater, type ScenarioAction } from "../scenario-actions.js";
import { isoTime } from "../staged/context.js";
import type { MemberOutcome, RunAction, RunEvent } from "../staged/events.js";
import { gateMatches } from "../staged/gates.js";
import { locateMember } from "../staged/member-index.js";
import { resolveRun } from "../staged/resolve.js";
import {
  isRunFinished,
  type Gate,
  type Run,
  type RunPayload,
} from "../staged/run.js";
import { step } from "../staged/step.js";
import type { UpdateStrategy } from "../update-strategy.js";
import { describeRelease, withRelease } from "../versions/catalogue.js";
import type { AvailableVersions } from "../versions/version.js";
import { EventQueue } from "./event-queue.js";
import { operatorCommands, SIMULATION_ACTOR } from "./staged-actions.js";
import { outputOf, timelineEntry } from "./staged-output.js";
import { planUpgradeTargets } from "./upgrade-plan.js";
import { compact } from "../compact.js";

type SimEvent =
  | { readonly kind: "start" }
  | { readonly kind: "release"; readonly offers: AvailableVersions }
  | { readonly kind: "action"; readonly action: ScenarioAction }
  | { readonly kind: "approve"; readonly gate: string }
  | {
      readonly kind: "measure";
      readonly gate: string;
      readonly outcome: QueryOutcome;
    }
  | { readonly kind: "offline" | "online"; readonly member: string }
  | Outcome;

/** A started member's result, due when the scenario says it finishes. */
interface Outcome {
  readonly kind: "outcome";
  readonly member: string;
  readonly startedAtMs: number;
  readonly ok: boolean;
}

/** Inputs of a staged simulation. */
export interface StagedSimulationInput {
  /** Every cluster of the clusters file; those that join later are not members. */
  readonly clusters: readonly Cluster[];
  readonly strategy: UpdateStrategy;
  readonly scenario: Scenario;
  readonly runName?: string;
  /** Benchmarks only: raises the AKS stage-concurrency ceiling of 50. */
  readonly maxStageConcurrency?: number;
  /** Skips building the timeline (benchmarks of the engine itself). */
  readonly timeline?: boolean;
}

/** Runs the simulation; the result is the run plus what happened, in order. */
export function simulateStagedRun(
  input: StagedSimulationInput,
): Result<{ run: Run; output: SimulationOutput }> {
  const { scenario } = input;
  const payload: RunPayload =
    scenario.kind === "upgrade" && scenario.upgrade !== undefined
      ? { kind: "upgrade", upgrade: scenario.upgrade }
      : {
          kind: "bundle",
          bundle: "simulated",
          revision: scenario.kind === "firstDeployment" ? "1" : "2",
        };
  // Members are frozen when the run is created: a cluster that joins later is not one.
  const later = joiningLater(scenario.actions);
  const clusters = input.clusters.filter((c) => !later.has(c.name));
  const resolved = resolveRun({
    name: input.runName ?? "simulation",
    strategy: input.strategy,
    clusters,
    payload,
    createdAtMs: scenario.startMs,
    ...compact({
      progressDeadlineSeconds: scenario.progressDeadlineSeconds,
      available: scenario.available,
      maxStageConcurrency: input.maxStageConcurrency,
    }),
  });
  if (!resolved.ok) return fail(resolved.problems);
  const run = resolved.value;
  const plan = planUpgradeTargets(run, scenario.startMs);
  const keepTimeline = input.timeline ?? true;
  const timeline: TimelineEntry[] = [];
  let now = scenario.startMs;
  const note = (entry: Omit<TimelineEntry, "at">): void => {
    if (keepTimeline) timeline.push({ at: isoTime(now), ...entry });
  };
  const queue = new EventQueue<SimEvent>();
  const offline = new Set<string>();
  const pendingApprovals = new Set<string>();
  const waitingOutcomes = new Map<string, SimEvent>();
  const attempts = new Map<string, number>();

  for (const cluster of clusters) {
    for (const window of behaviourOf(scenario, cluster.name).offline) {
      queue.push(window.fromMs, { kind: "offline", member: cluster.name });
      queue.push(window.toMs, { kind: "online", member: cluster.name });
    }
  }
  for (const approval of scenario.approvals)
    queue.push(approval.atMs, { kind: "approve", gate: approval.gate });
  for (const release of scenario.releases)
    queue.push(release.atMs, { kind: "release", offers: release.offers });
  queue.push(scenario.startMs, { kind: "start" });
  // After the start: an action at the start instant applies to the running run.
  for (const action of scenario.actions)
    queue.push(action.atMs, { kind: "action", action });
  let actionsLeft = scenario.actions.length;

  /** What the member's agent reports now, if it can and the member is still in that attempt. */
  const report = (ev: Outcome): MemberOutcome[] => {
    if (offline.has(ev.member)) {
      // An unreachable agent cannot report; it reports when it comes back.
      waitingOutcomes.set(ev.member, ev);
      return [];
    }
    const member = locateMember(run, ev.member)?.member;
    if (member?.state !== "Running" || member.startedAtMs !== ev.startedAtMs)
      return [];
    const b = behaviourOf(scenario, ev.member);
    return [
      ev.ok
        ? { type: "MemberSucceeded", member: ev.member }
        : {
            type: "MemberFailed",
            member: ev.member,
            error: `Upgrade failed after ${String(b.failAfterSeconds)}s (simulated)`,
          },
    ];
  };
  const apply = (event: RunEvent, label?: string): void => {
    const result = step(run, event, now);
    if (result.rejected !== undefined) {
      if (label !== undefined || event.type === "StartRun")
        note({
          type: "rejected",
          message:
            label === undefined
              ? result.rejected.message
              : `${label}: ${result.rejected.message}`,
        });
      return;
    }
    for (const action of result.actions) handle(action);
  };
  const handle = (action: RunAction): void => {
    if (action.type === "StartMember") {
      const b = behaviourOf(scenario, action.member);
      const attempt = (attempts.get(action.member) ?? 0) + 1;
      attempts.set(action.member, attempt);
      if (b.neverReady) return;
      const fails = failsAttempt(b, attempt);
      const after = fails ? b.failAfterSeconds : b.readyAfterSeconds;
      queue.push(now + after * 1000, {
        kind: "outcome",
        member: action.member,
        startedAtMs: now,
        ok: !fails,
      });
      return;
    }
    if (action.type === "MeasureGate") {
      queue.push(now, {
        kind: "measure",
        gate: action.gate,
        outcome: scenarioMetric(scenario, action.gate, now),
      });
      return;
    }
    if (keepTimeline) timeline.push(timelineEntry(action));
    if (action.scope === "gate" && action.to === "Pending") {
      // autoApprove stands for an operator who approves every approval; a scheduled start keeps
      // its time unless the scenario completes it explicitly.
      if (
        (scenario.autoApprove && gateType(run, action.name) === "Approval") ||
        pendingApprovals.has(action.name.split("#")[0] ?? action.name)
      ) {
        queue.push(now, { kind: "approve", gate: action.name });
      }
    }
  };
  const act = (action: ScenarioAction): void => {
    if (action.action === "join") {
      note({
        type: "joined",
        cluster: action.cluster,
        message:
          "Cluster joined the fleet; not part of this run (its members were frozen when it was created)",
      });
      return;
    }
    if (action.action === "leave") {
      const where = locateMember(run, action.cluster);
      note({
        type: "left",
        cluster: action.cluster,
        ...(where === undefined
          ? {}
          : { wave: where.stage.name, group: where.group.name }),
        message: "Cluster left the fleet",
      });
      if (where !== undefined)
        apply({ type: "MemberLeft", member: action.cluster });
      return;
    }
    for (const command of operatorCommands(action))
      apply(command, action.action);
  };

  for (;;) {
    const next = minTime(queue.peekTime(), run.wakeAtMs);
    if (next === undefined || next > scenario.untilMs) break;
    // A finished run can still be started again, retried or skipped by a later action.
    if (isRunFinished(run.state) && !hasInFlight(run) && actionsLeft === 0)
      break;
    now = Math.max(now, next);
    if (
      run.wakeAtMs !== undefined &&
      run.wakeAtMs <= now &&
      queue.peekTime() !== now
    ) {
      apply({ type: "Tick" });
      continue;
    }
    const popped = queue.pop();
    if (popped === undefined) break;
    const ev = popped.item;
    switch (ev.kind) {
      case "start":
        apply({ type: "StartRun", actor: SIMULATION_ACTOR });
        break;
      case "release":
        note({
          type: "offered",
          message: `Now offered: ${describeRelease(ev.offers)}`,
        });
        apply({
          type: "AvailableVersionsChanged",
          available: withRelease(
            run.available ?? { kubernetes: [], nodeImages: [] },
            ev.offers,
          ),
        });
        break;
      case "action":
        actionsLeft -= 1;
        act(ev.action);
        break;
      case "approve":
        approve(ev.gate);
        break;
      case "measure": {
        const before = timeline.length;
        apply({ type: "GateMeasured", gate: ev.gate, outcome: ev.outcome });
        const where = gatePlace(run, ev.gate);
        const measured = where?.gate.metric?.measurements.at(-1);
        // Shown before what it caused (the gate passing or failing).
        if (keepTimeline && where !== undefined && measured?.atMs === now)
          timeline.splice(before, 0, {
            at: isoTime(now),
            type: "measured",
            wave: where.stage,
            ...compact({ group: where.group }),
            gate: ev.gate,
            message: measurementText(measured),
          });
        break;
      }
      case "offline":
        offline.add(ev.member);
        note({
          type: "offline",
          cluster: ev.member,
          message: "Agent unreachable",
        });
        apply({ type: "MemberUnreachable", member: ev.member });
        break;
      case "online": {
        offline.delete(ev.member);
        note({
          type: "online",
          cluster: ev.member,
          message: "Agent reconnected",
        });
        apply({ type: "MemberReachable", member: ev.member });
        const held = waitingOutcomes.get(ev.member);
        if (held !== undefined) {
          waitingOutcomes.delete(ev.member);
          queue.push(now, held);
        }
        break;
      }
      case "outcome": {
        // Outcomes due at the same instant reach the engine as one batch, so all are counted
        // before a freed slot is refilled (docs/semantics.md#simultaneous-outcomes).
        const due: Outcome[] = [ev];
        const others: SimEvent[] = [];
        while (queue.peekTime() === now) {
          const next = queue.pop()?.item;
          if (next === undefined) break;
          if (next.kind === "outcome") due.push(next);
          else others.push(next);
        }
        for (const other of others) queue.push(now, other);
        const reports = due.flatMap(report);
        const [only] = reports;
        if (reports.length > 1) apply({ type: "MembersReported", reports });
        else if (only !== undefined) apply(only);
        break;
      }
      default: {
        const never: never = ev;
        return never;
      }
    }
  }

  function approve(gate: string): void {
    const before = timeline.length;
    const position = gate.split("#")[0] ?? gate;
    // CompleteGate, not ApproveGate: an operator may complete a ScheduledStart gate early too.
    const result = step(
      run,
      {
        type: "CompleteGate",
        gate,
        actor: SIMULATION_ACTOR,
        reason: "scenario approval",
      },
      now,
    );
    if (result.rejected === undefined) {
      for (const action of result.actions) handle(action);
      pendingApprovals.delete(position);
    } else if (isAwaitingGate(run, gate)) {
      // Approved before the gate was reached: it applies as soon as the gate is reached.
      pendingApprovals.add(position);
    } else if (keepTimeline) {
      timeline.splice(before, 0, {
        at: isoTime(now),
        type: "warning",
        gate,
        message: result.rejected.message,
      });
    }
  }

  const truncated = !isRunFinished(run.state);
  return ok({
    run,
    output: outputOf(run, scenario, now, timeline, truncated, plan),
  });
}

function gatesOf(run: Run): Gate[] {
  return run.stages.flatMap((stage) => [
    ...stage.beforeGates,
    ...stage.afterGates,
    ...stage.groups.flatMap((g) => [...g.beforeGates, ...g.afterGates]),
  ]);
}

/** The gate with exactly this id, with the stage (and group) it belongs to. */
function gatePlace(
  run: Run,
  id: string,
): { gate: Gate; stage: string; group?: string } | undefined {
  for (const stage of run.stages) {
    const own = [...stage.beforeGates, ...stage.afterGates].find(
      (g) => g.id === id,
    );
    if (own !== undefined) return { gate: own, stage: stage.name };
    for (const group of stage.groups) {
      const gate = [...group.beforeGates, ...group.afterGates].find(
        (g) => g.id === id,
      );
      if (gate !== undefined)
        return { gate, stage: stage.name, group: group.name };
    }
  }
  return undefined;
}

/** True when a gate at `id` has not been reached yet, so an approval can wait for it. */
function isAwaitingGate(run: Run, id: string): boolean {
  return gatesOf(run).some(
    (gate) => gate.state === "NotStarted" && gateMatches(gate, id),
  );
}

/** A measurement as the timeline shows it: `0.2 (Failed: failureCondition … is true)`. */
function measurementText(m: Measurement): string {
  const values =
    m.values === undefined
      ? "no value"
      : m.values.length === 1
        ? String(m.values[0])
        : `[${m.values.join(", ")}]`;
  return `${values} (${m.verdict}: ${m.message})`;
}

/** The type of the gate with exactly this id. */
function gateType(run: Run, id: string): Gate["type"] | undefined {
  return gatesOf(run).find((gate) => gate.id === id)?.type;
}

function hasInFlight(run: Run): boolean {
  return run.stages.some((s) => s.inFlight > 0);
}

function minTime(
  a: number | undefined,
  b: number | undefined,
): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/**
 * What a metric gate's query returns at `atMs` in `scenario` (docs/engine.md#metric-gates): the
 * last entry given for the gate (by its id, else its place's id) at or before then.
 */
function scenarioMetric(
  scenario: Scenario,
  gate: string,
  atMs: number,
): QueryOutcome {
  const entries =
    scenario.metrics[gate] ?? scenario.metrics[gate.split("#")[0] ?? gate];
  let found: QueryOutcome | undefined;
  for (const entry of entries ?? []) {
    if (entry.atMs > atMs) break;
    found = entry.outcome;
  }
  return (
    found ?? {
      ok: false,
      reason: `the scenario gives no metric value for gate ${gate} at this time (metrics:)`,
    }
  );
}
