/**
 * Operator actions in a `flotilla simulate` scenario (docs/plan-and-simulate.md): `stop`, `start`,
 * `skip`, `retry` at given times, and clusters that `join` or `leave` the fleet. Names and times
 * that can be checked against the input files are checked when the scenario is parsed; whether an
 * action applies at its time is the engine's answer during the simulation.
 */
import { z } from "zod";
import { compareNames } from "./cluster.js";
import type { Problem } from "./result.js";
import { strictObject, unknownFieldMessage } from "./schema.js";
import type { UpdateStrategy } from "./update-strategy.js";
import { compact } from "./compact.js";

/** What `skip` can name, as AKS's skip targets (`{type: Group, name: prod-eu}` or `Group:prod-eu`). */
export interface SkipTarget {
  readonly type: "Stage" | "Group" | "Member";
  readonly name: string;
}

/** One operator action; `atMs` is absolute. */
export type ScenarioAction =
  | {
      readonly action: "stop" | "start";
      readonly atMs: number;
      readonly reason?: string;
    }
  | {
      readonly action: "skip";
      readonly atMs: number;
      readonly targets: readonly SkipTarget[];
      readonly reason?: string;
    }
  | {
      readonly action: "retry";
      readonly atMs: number;
      /** Absent: every Failed member of the current stage. */
      readonly members?: readonly string[];
      readonly reason?: string;
    }
  | {
      readonly action: "join";
      readonly atMs: number;
      readonly cluster: string;
    }
  | {
      readonly action: "leave";
      readonly atMs: number;
      readonly cluster: string;
    };

const ACTIONS = ["stop", "start", "skip", "retry", "join", "leave"] as const;
const TARGET_TYPES = ["Stage", "Group", "Member"] as const;

const targetField = z.unknown().transform((raw, ctx): SkipTarget => {
  const object =
    typeof raw === "object" && raw !== null && !Array.isArray(raw)
      ? (raw as Record<string, unknown>)
      : undefined;
  let type: unknown;
  let name: unknown;
  if (typeof raw === "string") {
    const colon = raw.indexOf(":");
    type = colon === -1 ? undefined : raw.slice(0, colon);
    name = colon === -1 ? undefined : raw.slice(colon + 1);
  } else if (object !== undefined) {
    ({ type, name } = object);
    for (const key of Object.keys(object))
      if (key !== "type" && key !== "name")
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: unknownFieldMessage(key, ["type", "name"]),
        });
  }
  if (type === undefined && name === undefined) {
    ctx.addIssue({
      code: "custom",
      message:
        'must be {type: Stage|Group|Member, name: NAME} or "Type:NAME", e.g. "Group:prod-eu"',
      input: raw,
    });
    return z.NEVER;
  }
  if (type === "AfterStageWait") {
    ctx.addIssue({
      code: "custom",
      path: object === undefined ? [] : ["type"],
      message:
        "skipping an after-stage wait is not supported: skip the stage, or set afterStageWaitInSeconds to 0",
      input: type,
    });
    return z.NEVER;
  }
  if (!TARGET_TYPES.includes(type as SkipTarget["type"])) {
    ctx.addIssue({
      code: "custom",
      path: object === undefined ? [] : ["type"],
      message: "the type must be Stage, Group or Member",
      input: object === undefined ? raw : type,
    });
    return z.NEVER;
  }
  if (typeof name !== "string" || name === "") {
    ctx.addIssue({
      code: "custom",
      path: object === undefined ? [] : ["name"],
      message: "needs the name of the stage, group or member",
      input: object === undefined ? raw : name,
    });
    return z.NEVER;
  }
  return { type: type as SkipTarget["type"], name };
});

/** The fields each action takes besides `at` and `action`. */
const FIELDS: Readonly<Record<(typeof ACTIONS)[number], readonly string[]>> = {
  stop: ["reason"],
  start: ["reason"],
  skip: ["targets", "reason"],
  retry: ["members", "reason"],
  join: ["cluster"],
  leave: ["cluster"],
};

/** Schema of one `actions[]` entry; `at` stays text until the scenario's start is known. */
export const actionField = strictObject({
  at: z.string().min(1),
  action: z.enum(ACTIONS),
  reason: z.string().optional(),
  targets: z
    .array(targetField)
    .min(1, "must name at least one target")
    .optional(),
  members: z
    .array(z.string().min(1, "must not be empty"))
    .min(
      1,
      "must name at least one member (omit it to retry every failed member)",
    )
    .optional(),
  cluster: z.string().min(1, "must not be empty").optional(),
}).superRefine((value, ctx) => {
  const allowed = FIELDS[value.action];
  for (const key of ["reason", "targets", "members", "cluster"] as const) {
    if (value[key] !== undefined && !allowed.includes(key))
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: `is not a field of action ${value.action} (it takes ${["at", "action", ...allowed].join(", ")})`,
        input: value[key],
      });
  }
  if (value.action === "skip" && value.targets === undefined)
    ctx.addIssue({
      code: "custom",
      path: ["targets"],
      message: "is required for skip, e.g. [{type: Group, name: prod-eu}]",
      input: undefined,
    });
  if (
    (value.action === "join" || value.action === "leave") &&
    value.cluster === undefined
  )
    ctx.addIssue({
      code: "custom",
      path: ["cluster"],
      message: `is required for ${value.action}: the name of a cluster in the clusters file`,
      input: undefined,
    });
});

type RawAction = z.infer<typeof actionField>;

/**
 * Turns parsed entries into actions with absolute times, reporting (into `problems`) times before
 * start, names that are not in the clusters file, and joins or leaves that contradict each other.
 */
export function resolveActions(
  raw: readonly RawAction[],
  time: (text: string, path: string) => number,
  startMs: number,
  clusterNames: ReadonlySet<string>,
  problems: Problem[],
): ScenarioAction[] {
  const actions = raw.map((a, i): ScenarioAction => {
    const path = `actions[${String(i)}]`;
    const atMs = time(a.at, `${path}.at`);
    if (atMs < startMs)
      problems.push({
        path: `${path}.at`,
        message: "must not be before start",
        value: a.at,
      });
    const known = (name: string, where: string): void => {
      if (!clusterNames.has(name))
        problems.push({
          path: where,
          message: "no cluster with this name in the clusters file",
          value: name,
        });
    };
    const reason = compact({ reason: a.reason });
    switch (a.action) {
      case "stop":
      case "start":
        return { action: a.action, atMs, ...reason };
      case "skip": {
        const targets = a.targets ?? [];
        targets.forEach((t, j) => {
          if (t.type === "Member")
            known(t.name, `${path}.targets[${String(j)}]`);
        });
        return { action: "skip", atMs, targets, ...reason };
      }
      case "retry":
        a.members?.forEach((m, j) => {
          known(m, `${path}.members[${String(j)}]`);
        });
        return {
          action: "retry",
          atMs,
          ...compact({ members: a.members }),
          ...reason,
        };
      case "join":
      case "leave": {
        const cluster = a.cluster ?? "";
        known(cluster, `${path}.cluster`);
        return { action: a.action, atMs, cluster };
      }
      default: {
        const never: never = a.action;
        return never;
      }
    }
  });
  problems.push(...membershipProblems(actions));
  return actions;
}

/** Joins and leaves of one cluster must alternate in time (a cluster cannot join twice). */
function membershipProblems(actions: readonly ScenarioAction[]): Problem[] {
  const problems: Problem[] = [];
  const byCluster = new Map<
    string,
    { index: number; action: ScenarioAction }[]
  >();
  actions.forEach((action, index) => {
    if (action.action !== "join" && action.action !== "leave") return;
    const list = byCluster.get(action.cluster) ?? [];
    list.push({ index, action });
    byCluster.set(action.cluster, list);
  });
  for (const list of byCluster.values()) {
    const ordered = [...list].sort(
      (a, b) => a.action.atMs - b.action.atMs || a.index - b.index,
    );
    ordered.forEach((entry, k) => {
      const previous = ordered[k - 1];
      if (
        previous === undefined ||
        previous.action.action !== entry.action.action
      )
        return;
      problems.push({
        path: `actions[${String(entry.index)}].action`,
        message:
          entry.action.action === "join"
            ? `the cluster already joined at actions[${String(previous.index)}] and has not left since`
            : `the cluster already left at actions[${String(previous.index)}] and has not joined since`,
        value: entry.action.action,
      });
    });
  }
  return problems;
}

/** Clusters that are not in the fleet when the simulation starts: their first join/leave is a join. */
export function joiningLater(actions: readonly ScenarioAction[]): Set<string> {
  const first = new Map<string, ScenarioAction>();
  for (const action of [...actions].sort((a, b) => a.atMs - b.atMs)) {
    if (
      (action.action === "join" || action.action === "leave") &&
      !first.has(action.cluster)
    )
      first.set(action.cluster, action);
  }
  return new Set(
    [...first]
      .filter(([, action]) => action.action === "join")
      .map(([name]) => name)
      .sort(compareNames),
  );
}

/**
 * Problems of actions against the strategy: a Fleet rollout takes only joins and leaves (it has no
 * run to stop, skip or retry), and a skipped stage or group must exist in the update strategy.
 */
export function strategyActionProblems(
  actions: readonly ScenarioAction[],
  strategy:
    | { readonly dialect: "fleet" }
    | { readonly dialect: "staged"; readonly strategy: UpdateStrategy },
): Problem[] {
  const problems: Problem[] = [];
  const stages = new Set<string>();
  const groups = new Set<string>();
  if (strategy.dialect === "staged")
    for (const stage of strategy.strategy.stages) {
      stages.add(stage.name);
      // A stage without groups forms one implicit group named after it.
      for (const group of stage.groups ?? [{ name: stage.name }])
        groups.add(group.name);
    }
  actions.forEach((action, i) => {
    const path = `actions[${String(i)}]`;
    if (strategy.dialect === "fleet") {
      if (action.action !== "join" && action.action !== "leave")
        problems.push({
          path: `${path}.action`,
          message:
            "a Fleet rollout has no run to stop, start, skip or retry: only join and leave apply (use an update strategy with stages)",
          value: action.action,
        });
      return;
    }
    if (action.action !== "skip") return;
    action.targets.forEach((target, j) => {
      const names =
        target.type === "Stage"
          ? stages
          : target.type === "Group"
            ? groups
            : undefined;
      if (names === undefined || names.has(target.name)) return;
      problems.push({
        path: `${path}.targets[${String(j)}]`,
        message: `the strategy has no ${target.type.toLowerCase()} with this name (${target.type.toLowerCase()}s: ${[...names].join(", ")})`,
        value: target.name,
      });
    });
  });
  return problems;
}
