/**
 * Random staged runs for property tests: a strategy with stages, groups, gates, limits and
 * maintenance windows, the fleet it updates, and operations turned into events for the run as it
 * is at that moment.
 */
import fc from "fast-check";
import type { Cluster } from "../src/cluster.js";
import { compact } from "../src/compact.js";
import type { Maintenance } from "../src/maintenance/windows.js";
import type { MemberOutcome, RunEvent } from "../src/staged/events.js";
import type { Run } from "../src/staged/run.js";
import type { UpdateStrategy } from "../src/update-strategy.js";
import {
  DAY,
  HOUR,
  T0,
  allMembers,
  cluster,
  oneOff,
  running,
  strategy,
  windows,
} from "./staged-fixtures.js";

export const MAINTENANCE: readonly (Maintenance | undefined)[] = [
  undefined,
  undefined,
  windows({
    workloads: {
      schedule: { weekly: { dayOfWeek: "Monday" } },
      startTime: "08:00",
      durationHours: 4,
    },
  }),
  windows({
    workloads: {
      schedule: { daily: {} },
      startTime: "12:00",
      durationHours: 2,
    },
  }),
  // Long enough that every generated run reaches it while it is still ahead or open.
  oneOff(T0 + 6 * HOUR, T0 + 90 * DAY),
  windows({
    workloads: {
      schedule: { daily: {} },
      startTime: "22:00",
      durationHours: 6,
    },
  }),
  windows({
    freezes: [
      {
        start: "2026-03-02T00:00:00Z",
        end: "2026-03-02T12:30:00Z",
        scopes: ["workloads"],
      },
    ],
  }),
];

const approval = { type: "Approval" };
const scheduledStart = {
  type: "ScheduledStart",
  scheduledStartConfiguration: { startDay: "Monday", startTime: "13:00" },
};

const groupArb = fc.record({
  // Some groups (and so some stages) are empty: they must never block a run.
  size: fc.constantFrom(0, 1, 1, 2, 2, 3, 3, 4, 4),
  maxConcurrency: fc.constantFrom<number | string | undefined>(
    undefined,
    1,
    2,
    3,
    "50%",
    "100%",
  ),
  maxAllowedFailures: fc.constantFrom<number | string | undefined>(
    undefined,
    undefined,
    0,
    1,
    "50%",
  ),
  beforeGates: fc.constantFrom<unknown[]>([], [], [approval], [scheduledStart]),
  afterGates: fc.constantFrom<unknown[]>([], [], [approval]),
  windows: fc.array(fc.nat(MAINTENANCE.length - 1), {
    minLength: 4,
    maxLength: 4,
  }),
});

const stageArb = fc.record({
  groups: fc.array(groupArb, { minLength: 1, maxLength: 3 }),
  maxConcurrency: fc.constantFrom<number | string | undefined>(
    undefined,
    1,
    2,
    4,
    "50%",
  ),
  maxAllowedFailures: fc.constantFrom<number | string | undefined>(
    undefined,
    undefined,
    0,
    1,
    2,
  ),
  afterStageWaitInSeconds: fc.constantFrom(0, 0, 300),
  beforeGates: fc.constantFrom<unknown[]>([], [], [approval], [scheduledStart]),
  afterGates: fc.constantFrom<unknown[]>([], [], [approval]),
});

type StageInput = typeof stageArb extends fc.Arbitrary<infer T> ? T : never;

export const scenarioArb = fc.record({
  stages: fc.array(stageArb, { minLength: 1, maxLength: 3 }),
  unassigned: fc.nat(2),
});

/** An AKS strategy and the fleet it updates: each group gets its own update group of clusters. */
export function build(input: { stages: StageInput[]; unassigned: number }): {
  strategy: UpdateStrategy;
  clusters: Cluster[];
} {
  const clusters: Cluster[] = [];
  let g = 0;
  const stages = input.stages.map((s, si) => ({
    name: `s${String(si)}`,
    ...compact({
      maxConcurrency: s.maxConcurrency,
      maxAllowedFailures: s.maxAllowedFailures,
    }),
    afterStageWaitInSeconds: s.afterStageWaitInSeconds,
    beforeGates: s.beforeGates,
    afterGates: s.afterGates,
    groups: s.groups.map((group) => {
      const name = `g${String(g++)}`;
      for (let i = 0; i < group.size; i++) {
        const maintenance = MAINTENANCE[group.windows[i] ?? 0];
        clusters.push(
          cluster(`${name}-c${String(i)}`, {
            updateGroup: name,
            ...compact({ maintenance }),
          }),
        );
      }
      return {
        name,
        ...compact({
          maxConcurrency: group.maxConcurrency,
          maxAllowedFailures: group.maxAllowedFailures,
        }),
        beforeGates: group.beforeGates,
        afterGates: group.afterGates,
      };
    }),
  }));
  for (let i = 0; i < input.unassigned; i++)
    clusters.push(cluster(`zz-${String(i)}`));
  return { strategy: strategy({ stages }), clusters };
}

/** One random operation; `pick` chooses among whatever the run offers at that moment. */
export const opArb = fc.record({
  kind: fc.constantFrom(
    "succeed",
    "succeed",
    "succeed",
    "succeed",
    "fail",
    "fail",
    "together",
    "tick",
    "tick",
    "wait",
    "unreachable",
    "reachable",
    "stop",
    "start",
    "start",
    "skipMember",
    "skipGroup",
    "skipStage",
    "retry",
    "approve",
    "approve",
    "completeGate",
    "defer",
    "left",
    "windows",
  ),
  pick: fc.nat(),
  dtMs: fc.integer({ min: 0, max: 3 * HOUR }),
});

export type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never;

function choose<T>(items: readonly T[], pick: number): T | undefined {
  return items.length === 0 ? undefined : items[pick % items.length];
}

/** Turns an operation into an event (and a time) for the run as it is now. */
export function eventFor(
  run: Run,
  op: Op,
  now: number,
): { event: RunEvent; atMs: number } {
  const members = allMembers(run).map((m) => m.member.name);
  const anyMember = choose(members, op.pick) ?? "nobody";
  const inFlight = running(run);
  const later = now + op.dtMs;
  const gates = run.stages.flatMap((s) => [
    ...s.beforeGates,
    ...s.afterGates,
    ...s.groups.flatMap((g) => [...g.beforeGates, ...g.afterGates]),
  ]);
  const pendingGate = choose(
    gates.filter((g) => g.state === "Pending").map((g) => g.id),
    op.pick,
  );
  switch (op.kind) {
    case "succeed":
      return {
        event: {
          type: "MemberSucceeded",
          member: choose(inFlight, op.pick) ?? anyMember,
        },
        atMs: later,
      };
    case "fail":
      return {
        event: {
          type: "MemberFailed",
          member: choose(inFlight, op.pick) ?? anyMember,
          error: "boom",
        },
        atMs: later,
      };
    case "together": {
      // Every member in flight reports at the same instant; `pick`'s bits say who failed (1 in 4).
      const reports = inFlight.map((name, i): MemberOutcome =>
        (op.pick >> (2 * i)) % 4 !== 0
          ? { type: "MemberSucceeded", member: name }
          : { type: "MemberFailed", member: name, error: "boom" },
      );
      return {
        event: {
          type: "MembersReported",
          reports:
            reports.length === 0
              ? [{ type: "MemberFailed", member: anyMember, error: "boom" }]
              : reports,
        },
        atMs: later,
      };
    }
    case "tick":
      return {
        event: { type: "Tick" },
        atMs:
          run.wakeAtMs !== undefined && run.wakeAtMs > now
            ? run.wakeAtMs
            : later,
      };
    case "wait":
      return { event: { type: "Tick" }, atMs: now + op.dtMs * 8 };
    case "unreachable":
      return {
        event: { type: "MemberUnreachable", member: anyMember },
        atMs: later,
      };
    case "reachable":
      return {
        event: { type: "MemberReachable", member: anyMember },
        atMs: later,
      };
    case "stop":
      return { event: { type: "StopRun", actor: "prop" }, atMs: later };
    case "start":
      return { event: { type: "StartRun", actor: "prop" }, atMs: later };
    case "skipMember":
      return {
        event: { type: "SkipMember", member: anyMember, actor: "prop" },
        atMs: later,
      };
    case "skipGroup": {
      const groups = run.stages.flatMap((s) => s.groups.map((g) => g.name));
      return {
        event: {
          type: "SkipGroup",
          group: choose(groups, op.pick) ?? "none",
          actor: "prop",
        },
        atMs: later,
      };
    }
    case "skipStage":
      return {
        event: {
          type: "SkipStage",
          stage: choose(run.stages, op.pick)?.name ?? "none",
          actor: "prop",
        },
        atMs: later,
      };
    case "retry":
      return {
        event:
          op.pick % 2 === 0
            ? { type: "RetryMembers", actor: "prop" }
            : {
                type: "RetryMembers",
                members: [
                  anyMember,
                  choose(members, op.pick >> 2) ?? anyMember,
                ],
                actor: "prop",
              },
        atMs: later,
      };
    case "approve":
      return {
        event: {
          type: "ApproveGate",
          gate: pendingGate ?? "stage:s0:before",
          actor: "prop",
        },
        atMs: later,
      };
    case "completeGate":
      return {
        event: {
          type: "CompleteGate",
          gate: pendingGate ?? "stage:s0:before",
          actor: "prop",
        },
        atMs: later,
      };
    case "defer":
      return {
        event: {
          type: "MemberDeferred",
          member: choose(inFlight, op.pick) ?? anyMember,
          message: "agent says later",
          ...(op.pick % 2 === 0 ? {} : { untilMs: later + HOUR }),
        },
        atMs: later,
      };
    case "left":
      return { event: { type: "MemberLeft", member: anyMember }, atMs: later };
    case "windows": {
      const maintenance = MAINTENANCE[op.pick % MAINTENANCE.length];
      return {
        event: {
          type: "MemberWindowsChanged",
          member: anyMember,
          ...compact({ maintenance }),
        },
        atMs: later,
      };
    }
    default: {
      const never: never = op.kind;
      return never;
    }
  }
}
