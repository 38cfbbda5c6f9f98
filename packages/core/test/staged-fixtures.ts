/**
 * Shared builders for the staged-update-run tests: clusters, strategies, resolved runs, and a small
 * driver that feeds events to `step`, keeps the actions and the (event, nowMs) log for replay, and
 * checks the invariants every step must keep.
 */
import { expect } from "vitest";
import type { Cluster, NodePool, SupportPlan } from "../src/cluster.js";
import type { Labels } from "../src/label-selector.js";
import {
  parseMaintenance,
  type Maintenance,
} from "../src/maintenance/windows.js";
import { formatProblem } from "../src/result.js";
import type { RunAction, RunEvent, StepResult } from "../src/staged/events.js";
import { resolveRun, type ResolveRunInput } from "../src/staged/resolve.js";
import type {
  Gate,
  Group,
  Member,
  Run,
  RunPayload,
  Stage,
} from "../src/staged/run.js";
import { step } from "../src/staged/step.js";
import {
  parseUpdateStrategy,
  type UpdateStrategy,
} from "../src/update-strategy.js";
import { compact } from "../src/compact.js";

/** Monday 2026-03-02 10:00 UTC: the clock every staged test starts from. */
export const T0 = Date.UTC(2026, 2, 2, 10);
export const SECOND = 1000;
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** Epoch ms of an ISO timestamp, failing loudly on a typo. */
export function at(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`bad timestamp in test: ${iso}`);
  return ms;
}

/** A bundle payload (no upgrade decisions, `workloads` windows). */
export const BUNDLE: RunPayload = {
  kind: "bundle",
  bundle: "web",
  revision: "rev-2",
};

/** A Full Kubernetes upgrade payload (`kubernetes` windows). */
export function fullUpgrade(
  kubernetesVersion = "1.31.2",
  nodeImageSelection: "Latest" | "Consistent" = "Latest",
): RunPayload {
  return {
    kind: "upgrade",
    upgrade: { type: "Full", kubernetesVersion, nodeImageSelection },
  };
}

/** Options of a test cluster. */
export interface ClusterOptions {
  readonly labels?: Labels;
  readonly updateGroup?: string;
  readonly maintenance?: Maintenance;
  readonly kubernetesVersion?: string;
  readonly nodePools?: readonly NodePool[];
  readonly region?: string;
  readonly supportPlan?: SupportPlan;
}

/** A cluster with a name and the given facts. */
export function cluster(name: string, options: ClusterOptions = {}): Cluster {
  return {
    name,
    labels: options.labels ?? {},
    groups: [],
    nodePools: options.nodePools ?? [],
    ...compact({
      updateGroup: options.updateGroup,
      maintenance: options.maintenance,
      kubernetesVersion: options.kubernetesVersion,
      region: options.region,
      supportPlan: options.supportPlan,
    }),
  };
}

/** `n` clusters `PREFIX-00`, `PREFIX-01`, … in update group `group` (zero-padded: byte order = numeric order). */
export function groupOf(group: string, n: number, prefix = group): Cluster[] {
  return Array.from({ length: n }, (_, i) =>
    cluster(`${prefix}-${String(i).padStart(2, "0")}`, { updateGroup: group }),
  );
}

/** Parses a maintenance block that the test expects to be valid. */
export function windows(raw: unknown): Maintenance {
  const parsed = parseMaintenance(raw);
  if (!parsed.ok)
    throw new Error(parsed.problems.map(formatProblem).join("\n"));
  return parsed.value;
}

/** A one-off window for `scope` open on [fromMs, toMs). */
export function oneOff(
  fromMs: number,
  toMs: number,
  scope: "kubernetes" | "nodeImage" | "workloads" = "workloads",
): Maintenance {
  return windows({
    [scope]: {
      start: new Date(fromMs).toISOString(),
      end: new Date(toMs).toISOString(),
    },
  });
}

/** Parses an AKS strategy document the test expects to be valid. */
export function strategy(raw: unknown): UpdateStrategy {
  const parsed = parseUpdateStrategy(raw);
  if (!parsed.ok)
    throw new Error(parsed.problems.map(formatProblem).join("\n"));
  return parsed.value;
}

/** One stage holding the given groups (raw AKS JSON), plus stage-level fields. */
export function oneStage(
  groups: readonly Record<string, unknown>[],
  stage: Record<string, unknown> = {},
): UpdateStrategy {
  return strategy({ stages: [{ name: "stage-1", groups, ...stage }] });
}

/** Resolves a run the test expects to be valid. */
export function resolve(
  strategyValue: UpdateStrategy | undefined,
  clusters: readonly Cluster[],
  options: Partial<Omit<ResolveRunInput, "strategy" | "clusters">> = {},
): Run {
  const resolved = resolveRun({
    name: options.name ?? "run-1",
    ...compact({ strategy: strategyValue }),
    clusters,
    payload: options.payload ?? BUNDLE,
    createdAtMs: options.createdAtMs ?? T0,
    ...compact({
      progressDeadlineSeconds: options.progressDeadlineSeconds,
      available: options.available,
      maxStageConcurrency: options.maxStageConcurrency,
      isUnreachable: options.isUnreachable,
      atTarget: options.atTarget,
    }),
  });
  if (!resolved.ok)
    throw new Error(resolved.problems.map(formatProblem).join("\n"));
  return resolved.value;
}

/** Every member of a run with its stage and group. */
export function allMembers(
  run: Run,
): { stage: Stage; group: Group; member: Member }[] {
  return run.stages.flatMap((stage) =>
    stage.groups.flatMap((group) =>
      group.members.map((member) => ({ stage, group, member })),
    ),
  );
}

/** A member by name (throws when absent). */
export function member(run: Run, name: string): Member {
  const found = allMembers(run).find((m) => m.member.name === name);
  if (found === undefined) throw new Error(`no member ${name}`);
  return found.member;
}

/** A group by name (throws when absent). */
export function group(run: Run, name: string): Group {
  const found = run.stages
    .flatMap((s) => s.groups)
    .find((g) => g.name === name);
  if (found === undefined) throw new Error(`no group ${name}`);
  return found;
}

/** A stage by name (throws when absent). */
export function stage(run: Run, name: string): Stage {
  const found = run.stages.find((s) => s.name === name);
  if (found === undefined) throw new Error(`no stage ${name}`);
  return found;
}

/** A gate by id (throws when absent). */
export function gate(run: Run, id: string): Gate {
  const gates = run.stages.flatMap((s) => [
    ...s.beforeGates,
    ...s.afterGates,
    ...s.groups.flatMap((g) => [...g.beforeGates, ...g.afterGates]),
  ]);
  const found = gates.find((g) => g.id === id);
  if (found === undefined) throw new Error(`no gate ${id}`);
  return found;
}

/** Names of members in `state`, in run order. */
export function namesIn(run: Run, state: Member["state"]): string[] {
  return allMembers(run)
    .filter((m) => m.member.state === state)
    .map((m) => m.member.name);
}

/** Names of the members that are Running now. */
export function running(run: Run): string[] {
  return namesIn(run, "Running");
}

/** Members started by these actions, in order. */
export function startedBy(actions: readonly RunAction[]): string[] {
  return actions.flatMap((a) => (a.type === "StartMember" ? [a.member] : []));
}

/** The Transitioned actions among `actions`. */
export function transitions(
  actions: readonly RunAction[],
): Extract<RunAction, { type: "Transitioned" }>[] {
  return actions.flatMap((a) => (a.type === "Transitioned" ? [a] : []));
}

/**
 * Checks what must hold after every step: in-flight counters match the Running members and stay
 * within the effective group and stage concurrency; failure counts add up; every transition has a
 * time and a message.
 */
export function checkInvariants(
  run: Run,
  actions: readonly RunAction[],
  nowMs: number,
): void {
  let runFailures = 0;
  for (const s of run.stages) {
    let stageRunning = 0;
    let stageFailures = 0;
    for (const g of s.groups) {
      const groupRunning = g.members.filter(
        (m) => m.state === "Running",
      ).length;
      expect(g.inFlight, `group ${g.name} inFlight`).toBe(groupRunning);
      expect(groupRunning, `group ${g.name} concurrency`).toBeLessThanOrEqual(
        g.maxConcurrency,
      );
      expect(g.remaining, `group ${g.name} remaining`).toBe(
        g.members.filter(
          (m) =>
            m.state === "NotStarted" ||
            m.state === "Pending" ||
            m.state === "Running",
        ).length,
      );
      stageRunning += groupRunning;
      stageFailures += g.failureCount;
    }
    expect(s.inFlight, `stage ${s.name} inFlight`).toBe(stageRunning);
    expect(stageRunning, `stage ${s.name} concurrency`).toBeLessThanOrEqual(
      s.maxConcurrency,
    );
    expect(s.failureCount, `stage ${s.name} failureCount`).toBe(stageFailures);
    runFailures += stageFailures;
  }
  expect(run.failureCount).toBe(runFailures);
  for (const t of transitions(actions)) {
    expect(t.atMs).toBe(nowMs);
    expect(
      t.message,
      `message of ${t.scope} ${t.name} ${t.from}→${t.to}`,
    ).not.toBe("");
  }
}

/** Feeds events to `step`, keeping the actions and the log of what was sent when. */
export class Driver {
  now: number;
  readonly log: { event: RunEvent; nowMs: number }[] = [];
  readonly actions: RunAction[] = [];
  last: StepResult<Run> | undefined;

  constructor(
    public readonly run: Run,
    startMs = run.createdAtMs,
  ) {
    this.now = startMs;
  }

  /** Applies `event` at the current time (or `atMs`, which must not go back in time). */
  send(event: RunEvent, atMs: number = this.now): StepResult<Run> {
    if (atMs < this.now) throw new Error("time goes forward only");
    this.now = atMs;
    this.log.push({ event, nowMs: atMs });
    const result = step(this.run, event, atMs);
    expect(result.run).toBe(this.run);
    this.actions.push(...result.actions);
    this.last = result;
    checkInvariants(this.run, result.actions, atMs);
    return result;
  }

  /** Sends an event that must be accepted; returns the members it started. */
  ok(event: RunEvent, atMs: number = this.now): string[] {
    const result = this.send(event, atMs);
    expect(
      result.rejected,
      `${event.type} rejected: ${result.rejected?.message ?? ""}`,
    ).toBeUndefined();
    return startedBy(result.actions);
  }

  start(): string[] {
    return this.ok({ type: "StartRun", actor: "alice", reason: "test" });
  }

  succeed(...names: string[]): string[] {
    return names.flatMap((name) =>
      this.ok({ type: "MemberSucceeded", member: name }),
    );
  }

  fail(...names: string[]): string[] {
    return names.flatMap((name) =>
      this.ok({ type: "MemberFailed", member: name, error: "upgrade failed" }),
    );
  }

  /** Ticks at `atMs` (default: the run's wake time). */
  tick(atMs: number | undefined = this.run.wakeAtMs): string[] {
    if (atMs === undefined) throw new Error("the run has no wake time");
    return this.ok({ type: "Tick" }, atMs);
  }

  /** Succeeds whatever is running until nothing is, returning every member started meanwhile in order. */
  drain(): string[] {
    const order: string[] = [];
    for (let guard = 0; guard < 10_000; guard++) {
      const next = running(this.run)[0];
      if (next === undefined) return order;
      order.push(...this.succeed(next));
    }
    throw new Error("drain did not terminate");
  }

  /** Transitions recorded so far for one scope and name. */
  transitionsOf(scope: string, name: string): string[] {
    return transitions(this.actions)
      .filter((t) => t.scope === scope && t.name === name)
      .map((t) => `${t.from}->${t.to}`);
  }
}

/** A started driver: resolves, starts, and returns it with the members started first. */
export function started(
  run: Run,
  startMs = run.createdAtMs,
): { d: Driver; first: string[] } {
  const d = new Driver(run, startMs);
  const first = d.start();
  return { d, first };
}
