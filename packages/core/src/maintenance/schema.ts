/**
 * Parsing of a cluster's `maintenance:` block (SPEC section 7) into {@link Maintenance}. Windows use
 * the AKS `maintenanceWindow` shape (or a one-off `{start, end}`); every problem is reported at once
 * as a zod issue with its path and value, so the schema composes into the clusters file's schema.
 */
import { z } from "zod";
import type { Result } from "../result.js";
import { parseWith, strictObject, unknownFieldMessage } from "../schema.js";
import { DAY_MS, MINUTE_MS, parseDate, parseInstant, parseUtcOffset } from "./calendar.js";
import {
  dateField,
  dateOrInstantField,
  dayOfMonthField,
  dayOfWeekField,
  durationHoursField,
  instantField,
  intervalField,
  startTimeField,
  utcOffsetField,
  weekIndexField,
} from "./fields.js";
import type { DateRange, Freeze, Maintenance, MaintenanceWindow, Schedule, WindowScope } from "./types.js";
import { WINDOW_SCOPES } from "./types.js";

type Ctx = z.core.$RefinementCtx;

function isRecord(raw: unknown): raw is Record<string, unknown> {
  return typeof raw === "object" && raw !== null && !Array.isArray(raw);
}

/** Runs `schema` on `raw` inside an enclosing transform and re-raises its issues under `path`. */
function forward<T>(schema: z.ZodType<T>, raw: unknown, ctx: Ctx, path: PropertyKey[] = []): T | undefined {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    // `input` is set explicitly: addIssue would otherwise report the enclosing object as the value.
    const input = (issue as { input?: unknown }).input;
    ctx.addIssue({ ...issue, path: [...path, ...issue.path], input } as Parameters<Ctx["addIssue"]>[0]);
  }
  return undefined;
}

const scheduleBodies = {
  daily: strictObject({ intervalDays: intervalField.optional() }).transform(
    (b): Schedule => ({ type: "Daily", intervalDays: b.intervalDays ?? 1 }),
  ),
  weekly: strictObject({ intervalWeeks: intervalField.optional(), dayOfWeek: dayOfWeekField }).transform(
    (b): Schedule => ({ type: "Weekly", intervalWeeks: b.intervalWeeks ?? 1, dayOfWeek: b.dayOfWeek }),
  ),
  absoluteMonthly: strictObject({ intervalMonths: intervalField.optional(), dayOfMonth: dayOfMonthField }).transform(
    (b): Schedule => ({ type: "AbsoluteMonthly", intervalMonths: b.intervalMonths ?? 1, dayOfMonth: b.dayOfMonth }),
  ),
  relativeMonthly: strictObject({
    intervalMonths: intervalField.optional(),
    weekIndex: weekIndexField,
    dayOfWeek: dayOfWeekField,
  }).transform(
    (b): Schedule => ({
      type: "RelativeMonthly",
      intervalMonths: b.intervalMonths ?? 1,
      weekIndex: b.weekIndex,
      dayOfWeek: b.dayOfWeek,
    }),
  ),
};
type ScheduleKind = keyof typeof scheduleBodies;
const SCHEDULE_KINDS = Object.keys(scheduleBodies) as ScheduleKind[];
const INTERVAL_NAMES = ["intervalDays", "intervalWeeks", "intervalMonths"];

/** `schedule`: exactly one of AKS's four kinds; `daily:` with no body means every day. */
const scheduleField = z.unknown().transform((raw, ctx): Schedule => {
  const oneOf = `one of ${SCHEDULE_KINDS.join(", ")}`;
  if (!isRecord(raw)) {
    ctx.addIssue({ code: "custom", message: raw === undefined ? "is required" : `must be an object with ${oneOf}`, input: raw });
    return z.NEVER;
  }
  const given = SCHEDULE_KINDS.filter((kind) => kind in raw);
  for (const key of Object.keys(raw)) {
    if (!(SCHEDULE_KINDS as string[]).includes(key)) {
      ctx.addIssue({ code: "custom", path: [key], message: unknownFieldMessage(key, SCHEDULE_KINDS) });
    }
  }
  if (given.length !== 1) {
    const message = given.length === 0 ? `must set ${oneOf}` : `must set exactly ${oneOf}, not ${given.join(" and ")}`;
    ctx.addIssue({ code: "custom", message, input: raw });
  }
  const parsed = given.map((kind) => forward(scheduleBodies[kind], raw[kind] ?? {}, ctx, [kind]));
  return parsed.length === 1 && parsed[0] !== undefined ? parsed[0] : z.NEVER;
});

const dateRangeSchema = strictObject({ start: dateField, end: dateField }).transform((r, ctx): DateRange => {
  if ((parseDate(r.end) ?? 0) < (parseDate(r.start) ?? 0)) {
    ctx.addIssue({ code: "custom", path: ["end"], message: `must not be before start ${r.start}`, input: r.end });
  }
  return { start: r.start, end: r.end };
});

const recurringSchema = strictObject({
  schedule: scheduleField,
  startTime: startTimeField,
  utcOffset: utcOffsetField.optional(),
  durationHours: durationHoursField,
  startDate: dateField.optional(),
  notAllowedDates: z.array(dateRangeSchema).optional(),
}).transform(
  (w): MaintenanceWindow => ({
    type: "Recurring",
    schedule: w.schedule,
    startTime: w.startTime,
    utcOffset: w.utcOffset ?? "+00:00",
    durationHours: w.durationHours,
    ...(w.startDate === undefined ? {} : { startDate: w.startDate }),
    notAllowedDates: w.notAllowedDates ?? [],
  }),
);

const oneOffSchema = strictObject({ start: instantField, end: instantField }).transform((w, ctx): MaintenanceWindow => {
  const startMs = parseInstant(w.start) ?? 0;
  const endMs = parseInstant(w.end) ?? 0;
  if (endMs <= startMs) ctx.addIssue({ code: "custom", path: ["end"], message: `must be after start ${w.start}`, input: w.end });
  return { type: "OneOff", startMs, endMs };
});

/** An interval above 1 with no `startDate` has no anchor to count from, so it is refused (checked on raw input so it is reported alongside every other problem). */
function checkIntervalAnchor(raw: Record<string, unknown>, ctx: Ctx): void {
  if (raw["startDate"] !== undefined || !isRecord(raw["schedule"])) return;
  for (const [kind, body] of Object.entries(raw["schedule"])) {
    if (!isRecord(body)) continue;
    for (const name of INTERVAL_NAMES) {
      const value = body[name];
      if (typeof value === "number" && value > 1) {
        const message = `is required when schedule.${kind}.${name} is more than 1: it anchors the interval`;
        ctx.addIssue({ code: "custom", path: ["startDate"], message, input: undefined });
      }
    }
  }
}

const RECURRING_ONLY = ["schedule", "startTime", "utcOffset", "durationHours", "startDate", "notAllowedDates"];

/** One window: recurring when it has a `schedule` (or nothing one-off), one-off when it has `start`/`end`. */
const windowField = z.unknown().transform((raw, ctx): MaintenanceWindow => {
  if (!isRecord(raw)) {
    ctx.addIssue({ code: "custom", message: "must be a recurring window {schedule, startTime, durationHours, ...} or a one-off window {start, end}", input: raw });
    return z.NEVER;
  }
  const oneOff = "start" in raw || "end" in raw;
  const recurring = RECURRING_ONLY.filter((key) => key in raw);
  if (oneOff && recurring.length > 0) {
    const message = `must be either a one-off window {start, end} or a recurring one, not both (remove start/end or ${recurring.join(", ")})`;
    ctx.addIssue({ code: "custom", message, input: raw });
    return z.NEVER;
  }
  if (oneOff) return forward(oneOffSchema, raw, ctx) ?? z.NEVER;
  checkIntervalAnchor(raw, ctx);
  return forward(recurringSchema, raw, ctx) ?? z.NEVER;
});

/** A scope's value: one window or a list of them. */
const scopeWindowsField = z.unknown().transform((raw, ctx): MaintenanceWindow[] => {
  const parsed = Array.isArray(raw) ? raw.map((w, i) => forward(windowField, w, ctx, [i])) : [forward(windowField, raw, ctx)];
  return parsed.every((w) => w !== undefined) ? parsed : z.NEVER;
});

const scopeField = z.enum(WINDOW_SCOPES as [WindowScope, ...WindowScope[]]);

const freezeSchema = strictObject({
  start: dateOrInstantField,
  end: dateOrInstantField,
  scopes: z.array(scopeField).min(1, "must list at least one scope (leave it out to freeze all)").optional(),
  reason: z.string().optional(),
  utcOffset: utcOffsetField.optional(),
}).transform((f, ctx): Freeze => {
  const offsetMs = (parseUtcOffset(f.utcOffset ?? "+00:00") ?? 0) * MINUTE_MS;
  // A date means local midnight at its start; an end date includes that whole day.
  const bound = (text: string, isEnd: boolean): number => {
    const day = parseDate(text);
    return day === undefined ? (parseInstant(text) ?? 0) : (day + (isEnd ? 1 : 0)) * DAY_MS - offsetMs;
  };
  const startMs = bound(f.start, false);
  const endMs = bound(f.end, true);
  if (endMs <= startMs) ctx.addIssue({ code: "custom", path: ["end"], message: `must be after start ${f.start}`, input: f.end });
  const scopes = f.scopes === undefined ? WINDOW_SCOPES : WINDOW_SCOPES.filter((s) => f.scopes?.includes(s));
  return { startMs, endMs, scopes, ...(f.reason === undefined ? {} : { reason: f.reason }) };
});

/** The `maintenance:` field of a cluster: windows per scope and freezes, normalised. */
export const maintenanceField: z.ZodType<Maintenance> = strictObject({
  kubernetes: scopeWindowsField.optional(),
  nodeImage: scopeWindowsField.optional(),
  workloads: scopeWindowsField.optional(),
  freezes: z.array(freezeSchema).optional(),
}).transform(
  (m): Maintenance => ({
    windows: { kubernetes: m.kubernetes ?? [], nodeImage: m.nodeImage ?? [], workloads: m.workloads ?? [] },
    freezes: m.freezes ?? [],
  }),
);

/** Parses a `maintenance:` block on its own; problem paths start with `path`. */
export function parseMaintenance(raw: unknown, path = "maintenance"): Result<Maintenance> {
  return parseWith(maintenanceField, raw, path);
}
