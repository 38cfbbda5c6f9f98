/**
 * Parsing of a cluster's `maintenance:` block (docs/semantics.md#maintenance-windows) into {@link
 * Maintenance}: windows per scope (see window-schema.ts) and freezes. Every problem is reported at
 * once as a zod issue with its path and value, so the schema composes into the clusters file's
 * schema.
 */
import { z } from "zod";
import type { Result } from "../result.js";
import { parseWith, strictObject } from "../schema.js";
import {
  DAY_MS,
  MINUTE_MS,
  parseDate,
  parseInstant,
  parseUtcOffset,
} from "./calendar.js";
import { dateOrInstantField, utcOffsetField } from "./fields.js";
import type { Freeze, Maintenance, WindowScope } from "./types.js";
import { WINDOW_SCOPES } from "./types.js";
import { scopeWindowsField } from "./window-schema.js";
import { compact } from "../compact.js";

const scopeField = z.enum(WINDOW_SCOPES as [WindowScope, ...WindowScope[]]);

/**
 * A freeze: `start`/`end` are each a date (local midnight at `utcOffset`, default +00:00; an end
 * date includes its whole day) or a timestamp (an end timestamp is exclusive); `scopes` defaults to
 * all three and is stored deduplicated in canonical order.
 */
const freezeSchema = strictObject({
  start: dateOrInstantField,
  end: dateOrInstantField,
  scopes: z
    .array(scopeField)
    .min(1, "must list at least one scope (leave it out to freeze all)")
    .optional(),
  reason: z.string().optional(),
  utcOffset: utcOffsetField.optional(),
}).transform((f, ctx): Freeze => {
  const offsetMs = (parseUtcOffset(f.utcOffset ?? "+00:00") ?? 0) * MINUTE_MS;
  // A date means local midnight at its start; an end date includes that whole day.
  const bound = (text: string, isEnd: boolean): number => {
    const day = parseDate(text);
    return day === undefined
      ? (parseInstant(text) ?? 0)
      : (day + (isEnd ? 1 : 0)) * DAY_MS - offsetMs;
  };
  const startMs = bound(f.start, false);
  const endMs = bound(f.end, true);
  if (endMs <= startMs) {
    // An end date is inclusive, so a date may equal start; a timestamp end is exclusive.
    const relation =
      parseDate(f.end) === undefined ? "be after" : "not be before";
    ctx.addIssue({
      code: "custom",
      path: ["end"],
      message: `must ${relation} start ${f.start}`,
      input: f.end,
    });
  }
  const scopes =
    f.scopes === undefined
      ? WINDOW_SCOPES
      : WINDOW_SCOPES.filter((s) => f.scopes?.includes(s));
  return {
    startMs,
    endMs,
    scopes,
    ...compact({ reason: f.reason }),
  };
});

/** The `maintenance:` field of a cluster: windows per scope and freezes, normalised. */
export const maintenanceField: z.ZodType<Maintenance> = strictObject({
  kubernetes: scopeWindowsField.optional(),
  nodeImage: scopeWindowsField.optional(),
  workloads: scopeWindowsField.optional(),
  freezes: z.array(freezeSchema).optional(),
}).transform((m): Maintenance => ({
  windows: {
    kubernetes: m.kubernetes ?? [],
    nodeImage: m.nodeImage ?? [],
    workloads: m.workloads ?? [],
  },
  freezes: m.freezes ?? [],
}));

/** Parses a `maintenance:` block on its own; problem paths start with `path`. */
export function parseMaintenance(
  raw: unknown,
  path = "maintenance",
): Result<Maintenance> {
  return parseWith(maintenanceField, raw, path);
}
