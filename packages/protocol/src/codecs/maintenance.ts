/**
 * Maintenance windows and freezes (docs/semantics.md#maintenance-windows) on the wire. Decoding is
 * two passes: a wire schema checks shapes, enum values and bounds (paths in wire names); then the
 * value goes through core's own {@link parseMaintenance}, so a window from an agent obeys exactly
 * the rules of a window in a local file (calendar dates, offsets, interval anchors, end after
 * start) and comes out canonicalised the same way. Core's problem paths are mapped back to wire
 * names.
 */
import {
  fail,
  parseMaintenance,
  type Gate,
  type Maintenance,
  type MaintenanceWindow,
  type Problem,
  type Result,
  type WindowScope,
  compact,
} from "@flotilla/core";
import { z } from "zod";
import type * as wire from "../generated/index.js";
import {
  MAX_FREEZES,
  MAX_ID_LENGTH,
  MAX_MESSAGE_LENGTH,
  MAX_NOT_ALLOWED_DATES,
  MAX_WINDOWS_PER_SCOPE,
} from "../limits.js";
import { enumCodec } from "./enum-codec.js";
import {
  boundedList,
  boundedString,
  optional,
  parseWire,
  wholeNumber,
} from "./validate.js";

type DayOfWeek = NonNullable<Gate["schedule"]>["startDay"];
type WeekIndex = Extract<
  Extract<MaintenanceWindow, { type: "Recurring" }>["schedule"],
  { type: "RelativeMonthly" }
>["weekIndex"];

/** Window scopes ↔ `WINDOW_SCOPE_*`. */
export const WINDOW_SCOPE = enumCodec<WindowScope, wire.WindowScope__Output>({
  kubernetes: "WINDOW_SCOPE_KUBERNETES",
  nodeImage: "WINDOW_SCOPE_NODE_IMAGE",
  workloads: "WINDOW_SCOPE_WORKLOADS",
});

/** Day names ↔ `DAY_OF_WEEK_*`. */
export const DAY_OF_WEEK = enumCodec<DayOfWeek, wire.DayOfWeek__Output>({
  Monday: "DAY_OF_WEEK_MONDAY",
  Tuesday: "DAY_OF_WEEK_TUESDAY",
  Wednesday: "DAY_OF_WEEK_WEDNESDAY",
  Thursday: "DAY_OF_WEEK_THURSDAY",
  Friday: "DAY_OF_WEEK_FRIDAY",
  Saturday: "DAY_OF_WEEK_SATURDAY",
  Sunday: "DAY_OF_WEEK_SUNDAY",
});

const WEEK_INDEX = enumCodec<WeekIndex, wire.WeekIndex__Output>({
  First: "WEEK_INDEX_FIRST",
  Second: "WEEK_INDEX_SECOND",
  Third: "WEEK_INDEX_THIRD",
  Fourth: "WEEK_INDEX_FOURTH",
  Last: "WEEK_INDEX_LAST",
});

function windowToWire(window: MaintenanceWindow): wire.MaintenanceWindow {
  if (window.type === "OneOff") {
    return { oneOff: { startMs: window.startMs, endMs: window.endMs } };
  }
  const s = window.schedule;
  let schedule: wire.Schedule;
  switch (s.type) {
    case "Daily":
      schedule = { daily: { intervalDays: s.intervalDays } };
      break;
    case "Weekly":
      schedule = {
        weekly: {
          intervalWeeks: s.intervalWeeks,
          dayOfWeek: DAY_OF_WEEK.toWire(s.dayOfWeek),
        },
      };
      break;
    case "AbsoluteMonthly":
      schedule = {
        absoluteMonthly: {
          intervalMonths: s.intervalMonths,
          dayOfMonth: s.dayOfMonth,
        },
      };
      break;
    case "RelativeMonthly":
      schedule = {
        relativeMonthly: {
          intervalMonths: s.intervalMonths,
          weekIndex: WEEK_INDEX.toWire(s.weekIndex),
          dayOfWeek: DAY_OF_WEEK.toWire(s.dayOfWeek),
        },
      };
      break;
    default: {
      const unreachable: never = s;
      return unreachable;
    }
  }
  return {
    recurring: {
      schedule,
      startTime: window.startTime,
      utcOffset: window.utcOffset,
      durationHours: window.durationHours,
      ...compact({ startDate: window.startDate }),
      notAllowedDates: window.notAllowedDates.map((r) => ({
        start: r.start,
        end: r.end,
      })),
    },
  };
}

/** Encodes a cluster's maintenance configuration. */
export function maintenanceToWire(maintenance: Maintenance): wire.Maintenance {
  return {
    kubernetes: maintenance.windows.kubernetes.map(windowToWire),
    nodeImage: maintenance.windows.nodeImage.map(windowToWire),
    workloads: maintenance.windows.workloads.map(windowToWire),
    freezes: maintenance.freezes.map((f) => ({
      startMs: f.startMs,
      endMs: f.endMs,
      scopes: f.scopes.map((s) => WINDOW_SCOPE.toWire(s)),
      ...compact({ reason: f.reason }),
    })),
  };
}

// ---- Decoding, pass 1: the wire shape and its bounds, rewritten into core's input shape ----

const interval = wholeNumber(1, 1000);
const text = boundedString(MAX_ID_LENGTH);

const scheduleSchema = z
  .object({
    daily: optional(z.object({ intervalDays: interval })),
    weekly: optional(
      z.object({ intervalWeeks: interval, dayOfWeek: DAY_OF_WEEK.field }),
    ),
    absoluteMonthly: optional(
      z.object({ intervalMonths: interval, dayOfMonth: wholeNumber(1, 31) }),
    ),
    relativeMonthly: optional(
      z.object({
        intervalMonths: interval,
        weekIndex: WEEK_INDEX.field,
        dayOfWeek: DAY_OF_WEEK.field,
      }),
    ),
  })
  .transform((s, ctx): Record<string, unknown> => {
    const set = Object.entries(s).filter(([, v]) => v !== undefined);
    if (set.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message:
          "must set exactly one of daily, weekly, absoluteMonthly, relativeMonthly",
      });
      return z.NEVER;
    }
    return Object.fromEntries(set);
  });

const recurringSchema = z.object({
  schedule: scheduleSchema,
  startTime: text,
  utcOffset: text,
  durationHours: wholeNumber(1, 24),
  startDate: optional(text),
  notAllowedDates: boundedList(
    z.object({ start: text, end: text }),
    MAX_NOT_ALLOWED_DATES,
  ),
});

/** Epoch ms as RFC 3339, the form core's file parser reads; out-of-range values stay numbers. */
function instant(ms: number): unknown {
  const date = new Date(ms);
  return ms <= 253_402_300_799_999 ? date.toISOString() : ms;
}

const windowSchema = z
  .object({
    recurring: optional(recurringSchema),
    oneOff: optional(
      z.object({ startMs: wholeNumber(), endMs: wholeNumber() }),
    ),
  })
  .transform((w, ctx): unknown => {
    if (w.recurring !== undefined && w.oneOff === undefined) {
      const r = w.recurring;
      return {
        schedule: r.schedule,
        startTime: r.startTime,
        utcOffset: r.utcOffset,
        durationHours: r.durationHours,
        ...compact({ startDate: r.startDate }),
        notAllowedDates: r.notAllowedDates,
      };
    }
    if (w.oneOff !== undefined && w.recurring === undefined) {
      return { start: instant(w.oneOff.startMs), end: instant(w.oneOff.endMs) };
    }
    ctx.addIssue({
      code: "custom",
      message: "must set exactly one of recurring, oneOff",
    });
    return z.NEVER;
  });

const windowsField = boundedList(windowSchema, MAX_WINDOWS_PER_SCOPE);

const freezeSchema = z
  .object({
    startMs: wholeNumber(),
    endMs: wholeNumber(),
    scopes: boundedList(WINDOW_SCOPE.field, 3),
    reason: optional(boundedString(MAX_MESSAGE_LENGTH)),
  })
  .transform((f) => ({
    start: instant(f.startMs),
    end: instant(f.endMs),
    // An empty list freezes every scope, as leaving `scopes` out of a file does.
    ...(f.scopes.length === 0 ? {} : { scopes: f.scopes }),
    ...compact({ reason: f.reason }),
  }));

const maintenanceSchema = z.object({
  kubernetes: windowsField,
  nodeImage: windowsField,
  workloads: windowsField,
  freezes: boundedList(freezeSchema, MAX_FREEZES),
});

// ---- Decoding, pass 2: core's rules, with its paths mapped back to the wire's ----

type Scope = "kubernetes" | "nodeImage" | "workloads";
const WINDOW_PATH = /^(kubernetes|nodeImage|workloads)\[(\d+)\](.*)$/;
const FREEZE_PATH = /^(freezes\[\d+\]\.(?:start|end))(.*)$/;

/**
 * Core's path of a problem → the wire's: a window gains its `recurring` / `oneOff` member, and the
 * bounds of one-off windows and freezes their `Ms` names.
 */
function wirePath(
  path: string,
  prefix: string,
  source: wire.Maintenance__Output,
): string {
  const head = prefix === "" ? "" : `${prefix}.`;
  if (!path.startsWith(head)) return path;
  const local = path.slice(head.length);
  const freeze = FREEZE_PATH.exec(local);
  if (freeze !== null) return `${head}${freeze[1] ?? ""}Ms${freeze[2] ?? ""}`;
  const window = WINDOW_PATH.exec(local);
  if (window === null) return path;
  const [, scope = "kubernetes", index = "0", rest = ""] = window;
  const oneOff = source[scope as Scope][Number(index)]?.oneOff != null;
  return oneOff
    ? `${head}${scope}[${index}].oneOff${rest.replace(/^\.(start|end)\b/, ".$1Ms")}`
    : `${head}${scope}[${index}].recurring${rest}`;
}

/**
 * Decodes a maintenance configuration from an agent. `null` or undefined (the field absent) is no
 * windows and no freezes. Problem paths start at `path`.
 */
export function maintenanceFromWire(
  raw: unknown,
  path = "maintenance",
): Result<Maintenance> {
  if (raw === null || raw === undefined) {
    return {
      ok: true,
      value: {
        windows: { kubernetes: [], nodeImage: [], workloads: [] },
        freezes: [],
      },
    };
  }
  const shaped = parseWire(maintenanceSchema, raw, path);
  if (!shaped.ok) return shaped;
  const parsed = parseMaintenance(shaped.value, path);
  if (parsed.ok) return parsed;
  const source = raw as wire.Maintenance__Output;
  return fail(
    parsed.problems.map((p): Problem => ({
      ...p,
      path: wirePath(p.path, path, source),
    })),
  );
}
