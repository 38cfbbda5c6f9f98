/**
 * Leaf fields of the maintenance schema. Each checks one value and canonicalises it, with a message
 * that says what is expected (zod's generic messages do not say "HH:MM").
 */
import { z } from "zod";
import {
  DAYS_OF_WEEK,
  formatUtcOffset,
  parseDate,
  parseInstant,
  parseTimeOfDay,
  parseUtcOffset,
  type DayOfWeek,
} from "./calendar.js";
import type { WeekIndex } from "./types.js";

/** The context zod hands to transforms, where nested issues are raised. */
export type Ctx = z.core.$RefinementCtx;

/** Whether `raw` is a plain (non-array) object. */
export function isRecord(raw: unknown): raw is Record<string, unknown> {
  return typeof raw === "object" && raw !== null && !Array.isArray(raw);
}

/** Runs `schema` on `raw` inside an enclosing transform and re-raises its issues under `path`. */
export function forward<T>(
  schema: z.ZodType<T>,
  raw: unknown,
  ctx: Ctx,
  path: PropertyKey[] = [],
): T | undefined {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    // `input` is set explicitly: addIssue would otherwise report the enclosing object as the value.
    const input = (issue as { input?: unknown }).input;
    ctx.addIssue({
      ...issue,
      path: [...path, ...issue.path],
      input,
    } as Parameters<Ctx["addIssue"]>[0]);
  }
  return undefined;
}

/** A field that reads `raw` with `read` (undefined = invalid) and otherwise says it `must be ${expected}`. */
function leafField<T>(expected: string, read: (raw: unknown) => T | undefined) {
  return z.unknown().transform((raw, ctx): T => {
    const value = raw === undefined ? undefined : read(raw);
    if (value !== undefined) return value;
    ctx.addIssue({
      code: "custom",
      message: raw === undefined ? "is required" : `must be ${expected}`,
      input: raw,
    });
    return z.NEVER;
  });
}

function wholeNumber(min: number, max: number) {
  return leafField(
    max === Infinity
      ? `a whole number of at least ${String(min)}`
      : `a whole number from ${String(min)} to ${String(max)}`,
    (raw) =>
      typeof raw === "number" &&
      Number.isInteger(raw) &&
      raw >= min &&
      raw <= max
        ? raw
        : undefined,
  );
}

/** Case-insensitive match against `names`, returning the canonical spelling. */
function nameIn<T extends string>(names: readonly T[]) {
  return (raw: unknown): T | undefined =>
    typeof raw === "string"
      ? names.find((n) => n.toLowerCase() === raw.toLowerCase())
      : undefined;
}

function text<T>(read: (raw: string) => T | undefined) {
  return (raw: unknown): T | undefined =>
    typeof raw === "string" ? read(raw) : undefined;
}

/** `intervalDays/Weeks/Months`: every Nth day, week or month. */
export const intervalField = wholeNumber(1, Infinity);

/** `dayOfMonth`: 1–31. */
export const dayOfMonthField = wholeNumber(1, 31);

/** `durationHours`: whole hours, 1–24 (AKS recommends at least 4). */
export const durationHoursField = wholeNumber(1, 24);

/** `dayOfWeek`: AKS spells it `Monday`…`Sunday`; any case is accepted and canonicalised. */
export const dayOfWeekField = leafField<DayOfWeek>(
  'a day name from "Monday" to "Sunday"',
  nameIn(DAYS_OF_WEEK),
);

const WEEK_INDEXES: readonly WeekIndex[] = [
  "First",
  "Second",
  "Third",
  "Fourth",
  "Last",
];

/** `weekIndex`: First…Fourth or Last, any case. */
export const weekIndexField = leafField<WeekIndex>(
  `one of ${WEEK_INDEXES.map((w) => JSON.stringify(w)).join(", ")}`,
  nameIn(WEEK_INDEXES),
);

/** `startTime`: local `HH:MM`. */
export const startTimeField = leafField(
  "HH:MM from 00:00 to 23:59",
  text((raw) => (parseTimeOfDay(raw) === undefined ? undefined : raw)),
);

/** `utcOffset`: `±HH:MM` from −14:00 to +14:00; `-00:00` is canonicalised to `+00:00`. */
export const utcOffsetField = leafField(
  '±HH:MM from -14:00 to +14:00, e.g. "+02:00"',
  text((raw) => {
    const minutes = parseUtcOffset(raw);
    return minutes === undefined ? undefined : formatUtcOffset(minutes);
  }),
);

/** A calendar date `YYYY-MM-DD` that exists. */
export const dateField = leafField(
  "a date YYYY-MM-DD",
  text((raw) => (parseDate(raw) === undefined ? undefined : raw)),
);

const INSTANT_EXPECTED =
  'an RFC 3339 timestamp with Z or an offset, e.g. "2026-03-07T00:00:00Z"';

/** A timestamp naming its offset; offset-less times are refused because their zone is a guess. */
export const instantField = leafField(
  INSTANT_EXPECTED,
  text((raw) => (parseInstant(raw) === undefined ? undefined : raw)),
);

/** A freeze bound: a date (whole local days) or a timestamp. */
export const dateOrInstantField = leafField(
  `a date YYYY-MM-DD or ${INSTANT_EXPECTED}`,
  text((raw) =>
    parseDate(raw) === undefined && parseInstant(raw) === undefined
      ? undefined
      : raw,
  ),
);
