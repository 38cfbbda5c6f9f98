/**
 * What a staged simulation reports: timeline entries made from the engine's transitions, and the
 * final state of every wave, group and member in the documented `simulate -o json` shape.
 */
import type {
  SimulatedMember,
  SimulatedWave,
  SimulationOutput,
  TimelineEntry,
  UpgradePlan,
} from "../preview-types.js";
import type { Scenario } from "../scenario.js";
import { isoTime } from "../staged/context.js";
import type { RunAction } from "../staged/events.js";
import type { Member, Run } from "../staged/run.js";
import { compact } from "../compact.js";

const MEMBER_TYPES: Readonly<Record<string, string>> = {
  Running: "started",
  Succeeded: "succeeded",
  Failed: "failed",
  Skipped: "skipped",
  Pending: "pending",
  NotStarted: "queued",
};

/** The timeline entry of one engine transition. */
export function timelineEntry(
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
        ...compact({ wave: action.stage, group: action.group }),
      };
    case "gate":
      return {
        ...base,
        type: "gate",
        gate: action.name,
        ...compact({ wave: action.stage, group: action.group }),
      };
    case "group":
      return {
        ...base,
        type: "group",
        ...compact({ wave: action.stage }),
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

/** The `simulate -o json` object of a finished (or truncated) staged simulation. */
export function outputOf(
  run: Run,
  scenario: Scenario,
  endMs: number,
  timeline: TimelineEntry[],
  truncated: boolean,
  plan?: UpgradePlan,
): SimulationOutput {
  const end = run.finishedAtMs ?? endMs;
  const waves: SimulatedWave[] = run.stages.map((stage) => ({
    name: stage.name,
    state: stage.state,
    ...compact({ reason: stage.reason }),
    failureCount: stage.failureCount,
    groups: stage.groups.map((group) => ({
      name: group.name,
      state: group.state,
      ...compact({ reason: group.reason }),
      failureCount: group.failureCount,
      members: group.members.map((m) => ({
        name: m.name,
        state: m.state,
        ...compact({ reason: m.reason }),
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
        ...(run.payload.kind === "upgrade" ? targetOf(m) : {}),
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
    ...compact({ plan }),
    timeline,
    waves,
    unassigned: run.unassigned,
    warnings: [],
  };
}

function targetOf(member: Member): Pick<SimulatedMember, "target"> {
  const target = member.target;
  if (target === undefined) return {};
  return {
    target: {
      ...compact({ kubernetesVersion: target.kubernetesVersion }),
      ...(target.nodeImages === undefined || target.nodeImages.length === 0
        ? {}
        : { nodeImages: target.nodeImages }),
    },
  };
}
