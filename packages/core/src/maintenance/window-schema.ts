/**
 * The schema of one scope's windows: a recurring window in the AKS `maintenanceWindow` shape or a
 * one-off `{start, end}`, alone or in a list. Cross-field rules (one schedule kind, an anchor for
 * intervals above 1, end after start) are checked here so they are reported with field problems.
 */
import { z } from "zod";
import { strictObject, unknownFieldMessage } from "../schema.js";
import { parseDate, parseInstant } from "./calendar.js";
import {
  dateField,
  dayOfMonthField,
  dayOfWeekField,
  durationHoursField,
  forward,
  instantField,
  intervalField,
  isRecord,
  startTimeField,
  utcOffsetField,
  weekIndexField,
  type Ctx,
} from "./fields.js";
import type { DateRange, MaintenanceWindow, Schedule } from "./types.js";
import { compact } from "../compact.js";

const scheduleBodies = {
  daily: strictObject({ intervalDays: intervalField.optional() }).transform(
    (b): Schedule => ({ type: "Daily", intervalDays: b.intervalDays ?? 1 }),
  ),
  weekly: strictObject({
    intervalWeeks: intervalField.optional(),
    dayOfWeek: dayOfWeekField,
  }).transform((b): Schedule => ({
    type: "Weekly",
    intervalWeeks: b.intervalWeeks ?? 1,
    dayOfWeek: b.dayOfWeek,
  })),
  absoluteMonthly: strictObject({
    intervalMonths: intervalField.optional(),
    dayOfMonth: dayOfMonthField,
  }).transform((b): Schedule => ({
    type: "AbsoluteMonthly",
    intervalMonths: b.intervalMonths ?? 1,
    dayOfMonth: b.dayOfMonth,
  })),
  relativeMonthly: strictObject({
    intervalMonths: intervalField.optional(),
    weekIndex: weekIndexField,
    dayOfWeek: dayOfWeekField,
  }).transform((b): Schedule => ({
    type: "RelativeMonthly",
    intervalMonths: b.intervalMonths ?? 1,
    weekIndex: b.weekIndex,
    dayOfWeek: b.dayOfWeek,
  })),
};
type ScheduleKind = keyof typeof scheduleBodies;
const SCHEDULE_KINDS = Object.keys(scheduleBodies) as ScheduleKind[];
const INTERVAL_NAMES = ["intervalDays", "intervalWeeks", "intervalMonths"];

/** `schedule`: exactly one of AKS's four kinds; `daily:` with no body means every day. */
const scheduleField = z.unknown().transform((raw, ctx): Schedule => {
  const oneOf = `one of ${SCHEDULE_KINDS.join(", ")}`;
  if (!isRecord(raw)) {
    ctx.addIssue({
      code: "custom",
      message:
        raw === undefined ? "is required" : `must be an object with ${oneOf}`,
      input: raw,
    });
    return z.NEVER;
  }
  const given = SCHEDULE_KINDS.filter((kind) => kind in raw);
  for (const key of Object.keys(raw)) {
    if (!(SCHEDULE_KINDS as string[]).includes(key)) {
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: unknownFieldMessage(key, SCHEDULE_KINDS),
      });
    }
  }
  if (given.length !== 1) {
    const message =
      given.length === 0
        ? `must set ${oneOf}`
        : `must set exactly ${oneOf}, not ${given.join(" and ")}`;
    ctx.addIssue({ code: "custom", message, input: raw });
  }
  const parsed = given.map((kind) =>
    forward(scheduleBodies[kind], raw[kind] ?? {}, ctx, [kind]),
  );
  return parsed.length === 1 && parsed[0] !== undefined ? parsed[0] : z.NEVER;
});

const dateRangeSchema = strictObject({
  start: dateField,
  end: dateField,
}).transform((r, ctx): DateRange => {
  if ((parseDate(r.end) ?? 0) < (parseDate(r.start) ?? 0)) {
    ctx.addIssue({
      code: "custom",
      path: ["end"],
      message: `must not be before start ${r.start}`,
      input: r.end,
    });
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
}).transform((w): MaintenanceWindow => ({
  type: "Recurring",
  schedule: w.schedule,
  startTime: w.startTime,
  utcOffset: w.utcOffset ?? "+00:00",
  durationHours: w.durationHours,
  ...compact({ startDate: w.startDate }),
  notAllowedDates: w.notAllowedDates ?? [],
}));

const oneOffSchema = strictObject({
  start: instantField,
  end: instantField,
}).transform((w, ctx): MaintenanceWindow => {
  const startMs = parseInstant(w.start) ?? 0;
  const endMs = parseInstant(w.end) ?? 0;
  if (endMs <= startMs)
    ctx.addIssue({
      code: "custom",
      path: ["end"],
      message: `must be after start ${w.start}`,
      input: w.end,
    });
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
        ctx.addIssue({
          code: "custom",
          path: ["startDate"],
          message,
          input: undefined,
        });
      }
    }
  }
}

const RECURRING_ONLY = [
  "schedule",
  "startTime",
  "utcOffset",
  "durationHours",
  "startDate",
  "notAllowedDates",
];

/** One window: recurring when it has a `schedule` (or nothing one-off), one-off when it has `start`/`end`. */
const windowField = z.unknown().transform((raw, ctx): MaintenanceWindow => {
  if (!isRecord(raw)) {
    ctx.addIssue({
      code: "custom",
      message:
        "must be a recurring window {schedule, startTime, durationHours, ...} or a one-off window {start, end}",
      input: raw,
    });
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
export const scopeWindowsField = z
  .unknown()
  .transform((raw, ctx): MaintenanceWindow[] => {
    const parsed = Array.isArray(raw)
      ? raw.map((w, i) => forward(windowField, w, ctx, [i]))
      : [forward(windowField, raw, ctx)];
    return parsed.every((w) => w !== undefined) ? parsed : z.NEVER;
  });
