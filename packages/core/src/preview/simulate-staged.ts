/**
 * Simulates a staged update run in virtual time with the real engine: the scenario decides when
 * each started member succeeds or fails, when agents go offline and when operators approve gates;
 * `step` decides everything else.
 */
import type { Cluster } from "../cluster.js";
import { isoTime } from "../staged/context.js";
import type { RunAction, RunEvent } from "../staged/events.js";
import { gateMatches } from "../staged/gates.js";
import { locateMember } from "../staged/member-index.js";
import { resolveRun } from "../staged/resolve.js";
import { isRunFinished, type Run, type RunPayload } from "../staged/run.js";
import { step } from "../staged/step.js";
import type { UpdateStrategy } from "../update-strategy.js";
import type {
  SimulatedWave,
  SimulationOutput,
  TimelineEntry,
} from "../preview-types.js";
import { behaviourOf, type Scenario } from "../scenario.js";
import { fail, ok, type Result } from "../result.js";
import { EventQueue } from "./event-queue.js";

type SimEvent =
  | {
      readonly kind: "run";
      readonly event: RunEvent;
      readonly note?: TimelineEntry;
    }
  | { readonly kind: "approve"; readonly gate: string }
  | { readonly kind: "offline" | "online"; readonly member: string }
  | {
      readonly kind: "outcome";
      readonly member: string;
      readonly startedAtMs: number;
      readonly ok: boolean;
    };

/** Inputs of a staged simulation. */
export interface StagedSimulationInput {
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
  const resolved = resolveRun({
    name: input.runName ?? "simulation",
    strategy: input.strategy,
    clusters: input.clusters,
    payload,
    createdAtMs: scenario.startMs,
    ...(scenario.progressDeadlineSeconds === undefined
      ? {}
      : { progressDeadlineSeconds: scenario.progressDeadlineSeconds }),
    ...(scenario.available === undefined
      ? {}
      : { available: scenario.available }),
    ...(input.maxStageConcurrency === undefined
      ? {}
      : { maxStageConcurrency: input.maxStageConcurrency }),
  });
  if (!resolved.ok) return fail(resolved.problems);
  const run = resolved.value;
  const keepTimeline = input.timeline ?? true;
  const timeline: TimelineEntry[] = [];
  const queue = new EventQueue<SimEvent>();
  const offline = new Set<string>();
  const pendingApprovals = new Set<string>();
  const waitingOutcomes = new Map<string, SimEvent>();

  for (const cluster of input.clusters) {
    for (const window of behaviourOf(scenario, cluster.name).offline) {
      queue.push(window.fromMs, { kind: "offline", member: cluster.name });
      queue.push(window.toMs, { kind: "online", member: cluster.name });
    }
  }
  for (const approval of scenario.approvals)
    queue.push(approval.atMs, { kind: "approve", gate: approval.gate });
  queue.push(scenario.startMs, {
    kind: "run",
    event: { type: "StartRun", actor: "simulation" },
  });

  let now = scenario.startMs;
  const apply = (event: RunEvent): void => {
    const result = step(run, event, now);
    if (
      result.rejected !== undefined &&
      keepTimeline &&
      event.type === "StartRun"
    ) {
      timeline.push({
        at: isoTime(now),
        type: "rejected",
        message: result.rejected.message,
      });
    }
    for (const action of result.actions) handle(action);
  };
  const handle = (action: RunAction): void => {
    if (action.type === "StartMember") {
      const b = behaviourOf(scenario, action.member);
      if (b.neverReady) return;
      const after = b.fail ? b.failAfterSeconds : b.readyAfterSeconds;
      queue.push(now + after * 1000, {
        kind: "outcome",
        member: action.member,
        startedAtMs: now,
        ok: !b.fail,
      });
      return;
    }
    if (keepTimeline) timeline.push(timelineEntry(action));
    if (action.scope === "gate" && action.to === "Pending") {
      if (
        scenario.autoApprove ||
        pendingApprovals.has(action.name.split("#")[0] ?? action.name)
      ) {
        queue.push(now, { kind: "approve", gate: action.name });
      }
    }
  };

  while (!isRunFinished(run.state) || queue.size > 0) {
    const next = minTime(queue.peekTime(), run.wakeAtMs);
    if (next === undefined || next > scenario.untilMs) break;
    if (isRunFinished(run.state) && !hasInFlight(run)) break;
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
      case "run":
        apply(ev.event);
        break;
      case "approve": {
        const before = timeline.length;
        const position = ev.gate.split("#")[0] ?? ev.gate;
        // CompleteGate, not ApproveGate: an operator may complete a ScheduledStart gate early too.
        const result = step(
          run,
          {
            type: "CompleteGate",
            gate: ev.gate,
            actor: "simulation",
            reason: "scenario approval",
          },
          now,
        );
        if (result.rejected === undefined) {
          for (const action of result.actions) handle(action);
          pendingApprovals.delete(position);
        } else if (isAwaitingGate(run, ev.gate)) {
          // Approved before the gate was reached: it applies as soon as the gate is reached.
          pendingApprovals.add(position);
        } else if (keepTimeline) {
          timeline.splice(before, 0, {
            at: isoTime(now),
            type: "warning",
            gate: ev.gate,
            message: result.rejected.message,
          });
        }
        break;
      }
      case "offline":
        offline.add(ev.member);
        if (keepTimeline)
          timeline.push({
            at: isoTime(now),
            type: "offline",
            cluster: ev.member,
            message: "Agent unreachable",
          });
        apply({ type: "MemberUnreachable", member: ev.member });
        break;
      case "online": {
        offline.delete(ev.member);
        if (keepTimeline)
          timeline.push({
            at: isoTime(now),
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
        if (offline.has(ev.member)) {
          // An unreachable agent cannot report; it reports when it comes back.
          waitingOutcomes.set(ev.member, ev);
          break;
        }
        const member = locateMember(run, ev.member)?.member;
        if (
          member?.state !== "Running" ||
          member.startedAtMs !== ev.startedAtMs
        )
          break;
        const b = behaviourOf(scenario, ev.member);
        apply(
          ev.ok
            ? { type: "MemberSucceeded", member: ev.member }
            : {
                type: "MemberFailed",
                member: ev.member,
                error: `Upgrade failed after ${String(b.failAfterSeconds)}s (simulated)`,
              },
        );
        break;
      }
      default: {
        const never: never = ev;
        return never;
      }
    }
  }
  const truncated = !isRunFinished(run.state);
  return ok({ run, output: outputOf(run, scenario, now, timeline, truncated) });
}

/** True when a gate at `id` has not been reached yet, so an approval can wait for it. */
function isAwaitingGate(run: Run, id: string): boolean {
  return run.stages.some((stage) =>
    [
      stage.beforeGates,
      stage.afterGates,
      ...stage.groups.flatMap((g) => [g.beforeGates, g.afterGates]),
    ].some((gates) =>
      gates.some(
        (gate) => gate.state === "NotStarted" && gateMatches(gate, id),
      ),
    ),
  );
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

const MEMBER_TYPES: Readonly<Record<string, string>> = {
  Running: "started",
  Succeeded: "succeeded",
  Failed: "failed",
  Skipped: "skipped",
  Pending: "pending",
  NotStarted: "queued",
};

function timelineEntry(
  action: Extract<RunAction, { type: "Transitioned" }>,
): TimelineEntry {
  const base = {
    at: isoTime(action.atMs),
    from: action.from,
    to: action.to,
    message: action.message,
  };
  switch (action.scope) {
    case "member":
      return {
        ...base,
        type: MEMBER_TYPES[action.to] ?? "member",
        cluster: action.name,
        ...(action.stage === undefined ? {} : { wave: action.stage }),
        ...(action.group === undefined ? {} : { group: action.group }),
      };
    case "gate":
      return {
        ...base,
        type: "gate",
        gate: action.name,
        ...(action.stage === undefined ? {} : { wave: action.stage }),
        ...(action.group === undefined ? {} : { group: action.group }),
      };
    case "group":
      return {
        ...base,
        type: "group",
        ...(action.stage === undefined ? {} : { wave: action.stage }),
        group: action.name,
      };
    case "stage":
      return { ...base, type: "stage", wave: action.name };
    case "run":
      return { ...base, type: "run" };
    default: {
      const never: never = action.scope;
      return never;
    }
  }
}

function outputOf(
  run: Run,
  scenario: Scenario,
  endMs: number,
  timeline: TimelineEntry[],
  truncated: boolean,
): SimulationOutput {
  const end = run.finishedAtMs ?? endMs;
  const waves: SimulatedWave[] = run.stages.map((stage) => ({
    name: stage.name,
    state: stage.state,
    failureCount: stage.failureCount,
    groups: stage.groups.map((group) => ({
      name: group.name,
      state: group.state,
      failureCount: group.failureCount,
      members: group.members.map((m) => ({
        name: m.name,
        state: m.state,
        ...(m.reason === undefined ? {} : { reason: m.reason }),
        ...(m.message === "" ? {} : { message: m.message }),
        ...(m.startedAtMs === undefined
          ? {}
          : { releasedAt: isoTime(m.startedAtMs) }),
        ...(m.finishedAtMs === undefined ||
        m.state === "NotStarted" ||
        m.state === "Pending" ||
        m.state === "Running"
          ? {}
          : { finishedAt: isoTime(m.finishedAtMs) }),
      })),
    })),
  }));
  return {
    apiVersion: "flotilla.dev/v1",
    dialect: "staged",
    start: isoTime(scenario.startMs),
    end: isoTime(end),
    durationSeconds: Math.round((end - scenario.startMs) / 1000),
    finalState: run.state,
    failureCount: run.failureCount,
    truncated,
    timeline,
    waves,
    unassigned: run.unassigned,
    warnings: [],
  };
}
