/**
 * AKS-style update strategies (docs/semantics.md#staged-runs): stages → groups, concurrency,
 * failure budgets, approval and scheduled-start gates, after-stage waits. Accepts the AKS JSON
 * shape as it is.
 */
import { z } from "zod";
import type { IntOrPercent } from "./int-or-percent.js";
import {
  DAYS_OF_WEEK,
  parseTimeOfDay,
  parseUtcOffset,
  type DayOfWeek,
} from "./maintenance/calendar.js";
import { labelKeyProblem, type LabelSelector } from "./label-selector.js";
import { fail, joinPath, ok, type Result } from "./result.js";
import { MAX_STAGES, strategyRuleProblems } from "./update-strategy-rules.js";

import {
  DNS_LABEL,
  intOrPercentField,
  parseWith,
  selectorStringField,
  strictObject,
} from "./schema.js";
import { compact } from "./compact.js";
import { parseDuration } from "./duration.js";
import { parseCondition } from "./metrics/condition.js";

/** Longest metric gate query. */
export const MAX_METRIC_QUERY_LENGTH = 4_096;
/** A metric gate's interval when it gives none. */
export const DEFAULT_METRIC_INTERVAL_SECONDS = 60;
/** What a metric gate's query may name in `{{…}}` (docs/engine.md#metric-gates). */
export const METRIC_PLACEHOLDERS = [
  "clusters",
  "stage",
  "group",
  "run",
] as const;

/** The first `{{name}}` of `query` that is not one of `known`. */
function unknownPlaceholder(
  query: string,
  known: readonly string[],
): string | undefined {
  for (const match of query.matchAll(/\{\{\s*([^}]*?)\s*\}\}/g)) {
    const name = match[1] ?? "";
    if (!known.includes(name)) return name;
  }
  return undefined;
}

/** Highest stage maxConcurrency (AKS system limit) and the stage default. */
export const MAX_STAGE_CONCURRENCY = 50;

/** An approval gate (before or after a stage or group). */
export interface ApprovalGateSpec {
  readonly type: "Approval";
  readonly displayName?: string;
}

/** A scheduled-start gate (before-gates only): opens at the next `startDay startTime utcOffset`. */
export interface ScheduledStartGateSpec {
  readonly type: "ScheduledStart";
  readonly displayName?: string;
  readonly scheduledStartConfiguration: {
    readonly startDay: DayOfWeek;
    /** Minutes after local midnight. */
    readonly startMinutes: number;
    /** Offset from UTC in minutes (`+02:00` → 120). */
    readonly utcOffsetMinutes: number;
  };
}

/**
 * A metric gate (a flotilla extension, docs/engine.md#metric-gates): a Prometheus query measured
 * every `intervalSeconds` and judged by its conditions until `count` measurements pass, more than
 * `failureLimit` fail (the run fails) or more than `inconclusiveLimit` are inconclusive (the gate
 * waits for an approval).
 */
export interface MetricGateSpec {
  readonly type: "Metric";
  readonly displayName?: string;
  /** PromQL; `{{clusters}}`, `{{stage}}`, `{{group}}`, `{{run}}` are filled in when measured. */
  readonly query: string;
  /** Condition texts as written (parsed when the strategy is: docs/engine.md#metric-gates). */
  readonly successCondition?: string;
  readonly failureCondition?: string;
  readonly intervalSeconds: number;
  readonly count: number;
  readonly failureLimit: number;
  readonly inconclusiveLimit: number;
}

/** Any gate. */
export type GateSpec =
  ApprovalGateSpec | ScheduledStartGateSpec | MetricGateSpec;

/** A group of a stage. */
export interface GroupSpec {
  readonly name: string;
  readonly memberSelector?: LabelSelector;
  readonly maxConcurrency?: IntOrPercent;
  readonly maxAllowedFailures?: IntOrPercent;
  readonly beforeGates: readonly GateSpec[];
  readonly afterGates: readonly GateSpec[];
}

/** A stage; stages run one after another. */
export interface StageSpec {
  readonly name: string;
  readonly memberSelector?: LabelSelector;
  readonly maxConcurrency?: IntOrPercent;
  readonly maxAllowedFailures?: IntOrPercent;
  readonly afterStageWaitInSeconds: number;
  readonly beforeGates: readonly GateSpec[];
  readonly afterGates: readonly GateSpec[];
  /**
   * KubeFleet's label whose integer value orders the members of each group of the stage (after the
   * maintenance-window category, before the name); see docs/semantics.md#order-and-concurrency.
   */
  readonly sortingLabelKey?: string;
  /** Absent: the stage's memberSelector forms one implicit group. */
  readonly groups?: readonly GroupSpec[];
}

/** A reusable update strategy. */
export interface UpdateStrategy {
  readonly stages: readonly StageSpec[];
}

const nameField = z
  .string()
  .min(1, "must not be empty")
  .max(50, "must be at most 50 characters")
  .regex(
    DNS_LABEL,
    "must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ (lower-case letters, digits, '-')",
  );

const dayField = z.string().transform((raw, ctx): DayOfWeek => {
  const day = DAYS_OF_WEEK.find((d) => d.toLowerCase() === raw.toLowerCase());
  if (day !== undefined) return day;
  ctx.addIssue({
    code: "custom",
    message: `must be one of ${DAYS_OF_WEEK.join(", ")}`,
    input: raw,
  });
  return z.NEVER;
});

const timeField = z.string().transform((raw, ctx) => {
  const minutes = parseTimeOfDay(raw);
  if (minutes !== undefined) return minutes;
  ctx.addIssue({
    code: "custom",
    message: 'must be a 24-hour time "HH:MM"',
    input: raw,
  });
  return z.NEVER;
});

const offsetField = z.string().transform((raw, ctx) => {
  const minutes = parseUtcOffset(raw);
  if (minutes !== undefined) return minutes;
  ctx.addIssue({
    code: "custom",
    message: 'must be an offset "+HH:MM" between -14:00 and +14:00',
    input: raw,
  });
  return z.NEVER;
});

const approvalGate = strictObject({
  type: z.literal("Approval"),
  displayName: z.string().min(1).max(100).optional(),
});

const scheduledGate = strictObject({
  type: z.literal("ScheduledStart"),
  displayName: z.string().min(1).max(100).optional(),
  scheduledStartConfiguration: strictObject({
    startDay: dayField,
    startTime: timeField,
    utcOffset: offsetField.optional(),
  }),
});

const conditionField = z.string().superRefine((raw, ctx) => {
  const parsed = parseCondition(raw, "");
  if (!parsed.ok)
    for (const p of parsed.problems)
      ctx.addIssue({ code: "custom", message: p.message, input: raw });
});

/**
 * The fields of a metric gate (docs/engine.md#metric-gates) whose query may name `placeholders`;
 * shared by staged-run gates and Fleet partition gates (fleet/rollout-gates.ts).
 */
// eslint-disable-next-line @typescript-eslint/explicit-module-boundary-types -- a zod shape: its type is what zod infers
export function metricGateShape(placeholders: readonly string[]) {
  return {
    type: z.literal("Metric"),
    displayName: z.string().min(1).max(100).optional(),
    query: z
      .string()
      .min(1, "must not be empty")
      .max(
        MAX_METRIC_QUERY_LENGTH,
        `must be at most ${String(MAX_METRIC_QUERY_LENGTH)} characters`,
      )
      .superRefine((raw, ctx) => {
        const unknown = unknownPlaceholder(raw, placeholders);
        if (unknown !== undefined)
          ctx.addIssue({
            code: "custom",
            message: `unknown placeholder "{{${unknown}}}" (known: ${placeholders.map((p) => `{{${p}}}`).join(", ")})`,
            input: raw,
          });
      }),
    successCondition: conditionField.optional(),
    failureCondition: conditionField.optional(),
    interval: z
      .string()
      .superRefine((raw, ctx) => {
        const parsed = parseDuration(raw);
        if (!parsed.ok)
          ctx.addIssue({
            code: "custom",
            message: parsed.problems[0]?.message ?? "is not a duration",
            input: raw,
          });
        else if (parsed.value < 1_000 || parsed.value > 86_400_000)
          ctx.addIssue({
            code: "custom",
            message: "must be from 1s to 24h",
            input: raw,
          });
      })
      .optional(),
    count: z
      .number()
      .int("must be a whole number")
      .min(1, "must be at least 1")
      .max(1_000, "must be at most 1000")
      .optional(),
    failureLimit: z
      .number()
      .int("must be a whole number")
      .min(0, "must not be negative")
      .optional(),
    inconclusiveLimit: z
      .number()
      .int("must be a whole number")
      .min(0, "must not be negative")
      .optional(),
  };
}

const metricGate = strictObject(metricGateShape(METRIC_PLACEHOLDERS));

/** Why a metric gate with neither condition is refused. */
export const METRIC_GATE_NEEDS_CONDITION =
  "a metric gate needs a successCondition, a failureCondition or both";

/**
 * The spec of a metric gate whose fields {@link metricGateShape} checked, its defaults filled in;
 * undefined when it has no condition at all.
 */
export function metricGateSpecOf(
  gate: z.output<z.ZodObject<ReturnType<typeof metricGateShape>>>,
): MetricGateSpec | undefined {
  if (
    gate.successCondition === undefined &&
    gate.failureCondition === undefined
  )
    return undefined;
  const interval =
    gate.interval === undefined ? undefined : parseDuration(gate.interval);
  return {
    type: "Metric",
    ...compact({
      displayName: gate.displayName,
      successCondition: gate.successCondition,
      failureCondition: gate.failureCondition,
    }),
    query: gate.query,
    intervalSeconds:
      interval?.ok === true
        ? Math.max(1, Math.round(interval.value / 1000))
        : DEFAULT_METRIC_INTERVAL_SECONDS,
    count: gate.count ?? 1,
    failureLimit: gate.failureLimit ?? 0,
    inconclusiveLimit: gate.inconclusiveLimit ?? 0,
  };
}

const gateField = z.unknown().transform((raw, ctx): GateSpec => {
  const type =
    raw !== null && typeof raw === "object"
      ? (raw as Record<string, unknown>)["type"]
      : undefined;
  const schema =
    type === "ScheduledStart"
      ? scheduledGate
      : type === "Approval"
        ? approvalGate
        : type === "Metric"
          ? metricGate
          : undefined;
  if (schema === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["type"],
      message: 'must be "Approval", "ScheduledStart" or "Metric"',
      input: type,
    });
    return z.NEVER;
  }
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    for (const issue of parsed.error.issues)
      ctx.addIssue({ ...issue, code: "custom", input: issue.input });
    return z.NEVER;
  }
  const gate = parsed.data;
  if (gate.type === "Approval")
    return {
      type: "Approval",
      ...compact({ displayName: gate.displayName }),
    };
  if (gate.type === "Metric") {
    const spec = metricGateSpecOf(gate);
    if (spec === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["successCondition"],
        message: METRIC_GATE_NEEDS_CONDITION,
        input: raw,
      });
      return z.NEVER;
    }
    return spec;
  }
  const config = gate.scheduledStartConfiguration;
  return {
    type: "ScheduledStart",
    ...compact({ displayName: gate.displayName }),
    scheduledStartConfiguration: {
      startDay: config.startDay,
      startMinutes: config.startTime,
      utcOffsetMinutes: config.utcOffset ?? 0,
    },
  };
});

const memberSelectorField = strictObject({
  byLabel: selectorStringField.refine(
    (s) => s.source.length <= 512,
    "must be at most 512 characters",
  ),
});

const labelKeyField = z.string().superRefine((raw, ctx) => {
  const problem = labelKeyProblem(raw);
  if (problem !== undefined)
    ctx.addIssue({ code: "custom", message: problem, input: raw });
});

const groupSchema = strictObject({
  name: nameField,
  memberSelector: memberSelectorField.optional(),
  maxConcurrency: intOrPercentField("concurrency").optional(),
  maxAllowedFailures: intOrPercentField("failureBudget").optional(),
  beforeGates: z.array(gateField).optional(),
  afterGates: z.array(gateField).optional(),
});

const stageSchema = strictObject({
  name: nameField,
  memberSelector: memberSelectorField.optional(),
  maxConcurrency: intOrPercentField("concurrency").optional(),
  maxAllowedFailures: intOrPercentField("failureBudget").optional(),
  afterStageWaitInSeconds: z
    .number()
    .int("must be a whole number of seconds")
    .min(0, "must not be negative")
    .optional(),
  beforeGates: z.array(gateField).optional(),
  afterGates: z.array(gateField).optional(),
  sortingLabelKey: labelKeyField.optional(),
  groups: z.array(groupSchema).optional(),
});

const strategySchema = strictObject({
  stages: z.array(stageSchema).min(1, "must have at least one stage"),
});

/** True when a parsed document looks like an AKS update strategy (`{stages}` or `{strategy: {stages}}`). */
export function isUpdateStrategyDocument(raw: unknown): boolean {
  return unwrapStrategy(raw) !== undefined;
}

function unwrapStrategy(
  raw: unknown,
): { doc: unknown; prefix: string } | undefined {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    return undefined;
  const obj = raw as Record<string, unknown>;
  if ("stages" in obj) return { doc: obj, prefix: "" };
  const strategy = obj["strategy"];
  if (
    strategy !== null &&
    typeof strategy === "object" &&
    "stages" in strategy
  ) {
    return { doc: strategy, prefix: "strategy" };
  }
  return undefined;
}

/** Parses an update strategy and checks the rules the schema alone cannot express. */
export function parseUpdateStrategy(
  raw: unknown,
  limits = { maxStageConcurrency: MAX_STAGE_CONCURRENCY },
): Result<UpdateStrategy> {
  const unwrapped = unwrapStrategy(raw) ?? { doc: raw, prefix: "" };
  // Refused before anything else is checked: every stage would add its own problems.
  const rawStages = (unwrapped.doc as { stages?: unknown } | null)?.stages;
  if (Array.isArray(rawStages) && rawStages.length > MAX_STAGES) {
    return fail([
      {
        path: joinPath(unwrapped.prefix, "stages"),
        message: `must have at most ${String(MAX_STAGES)} stages`,
        value: `${String(rawStages.length)} stages`,
      },
    ]);
  }
  const parsed = parseWith(strategySchema, unwrapped.doc, unwrapped.prefix);
  const rules = strategyRuleProblems(
    unwrapped.doc,
    unwrapped.prefix,
    limits.maxStageConcurrency,
  );
  if (!parsed.ok) {
    // Both passes may see the same thing (a ScheduledStart in afterGates): report it once.
    const seen = new Set(
      parsed.problems.map((p) => `${p.path}\u0000${p.message}`),
    );
    return fail([
      ...parsed.problems,
      ...rules.filter((p) => !seen.has(`${p.path}\u0000${p.message}`)),
    ]);
  }
  if (rules.length > 0) return fail(rules);
  const stages: StageSpec[] = parsed.value.stages.map((s) => {
    const groups = (s.groups ?? []).map((g): GroupSpec => ({
      name: g.name,
      ...(g.memberSelector === undefined
        ? {}
        : { memberSelector: g.memberSelector.byLabel }),
      ...compact({
        maxConcurrency: g.maxConcurrency,
        maxAllowedFailures: g.maxAllowedFailures,
      }),
      beforeGates: g.beforeGates ?? [],
      afterGates: g.afterGates ?? [],
    }));
    return {
      name: s.name,
      ...(s.memberSelector === undefined
        ? {}
        : { memberSelector: s.memberSelector.byLabel }),
      ...compact({
        maxConcurrency: s.maxConcurrency,
        maxAllowedFailures: s.maxAllowedFailures,
      }),
      afterStageWaitInSeconds: s.afterStageWaitInSeconds ?? 0,
      beforeGates: s.beforeGates ?? [],
      afterGates: s.afterGates ?? [],
      ...compact({ sortingLabelKey: s.sortingLabelKey }),
      ...(s.groups === undefined || s.groups.length === 0 ? {} : { groups }),
    };
  });
  return ok({ stages });
}
