/**
 * One window as a set of open instants. A one-off window is `[startMs, endMs)`. A recurring window
 * is the union of its occurrences minus its blocked dates:
 * - an occurrence starts at `startTime` (local, at `utcOffset`) on each local day the schedule
 *   selects, on or after `startDate`, and is open for `[start, start + durationHours)`, so it may
 *   run into the next day or month;
 * - intervals count from `startDate`: days, Monday-based weeks from the week containing it, or
 *   calendar months from its month (without `startDate` the interval is 1 and there is no start);
 * - `dayOfMonth` beyond a month's length selects no day that month (AKS does not clamp it);
 * - **Decision:** `notAllowedDates` close the window at every instant whose local date is in a
 *   range, even in the middle of an occurrence that began the day before; the part of an occurrence
 *   that runs past a blocked range into an allowed date is open again.
 */
import {
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
  DAYS_OF_WEEK,
  daysInMonth,
  firstDayOfMonth,
  mod,
  monthIndexOf,
  parseDate,
  parseTimeOfDay,
  parseUtcOffset,
  weekdayOf,
  weekNumberOf,
} from "./calendar.js";
import type { MaintenanceWindow, RecurringWindow, Schedule } from "./types.js";

/** A window prepared for repeated queries within one call. */
export interface WindowSet {
  /** Whether the window is open at `tMs`. */
  isOpen(tMs: number): boolean;
  /**
   * The first instant > `tMs` at which openness may change (a superset of the real changes, which
   * callers re-check), considering only occurrences starting by `limitMs`; undefined if none.
   */
  nextBoundary(tMs: number, limitMs: number): number | undefined;
}

const WEEK_INDEX = {
  First: 0,
  Second: 1,
  Third: 2,
  Fourth: 3,
  Last: -1,
} as const;

function earliest(
  a: number | undefined,
  b: number | undefined,
): number | undefined {
  if (a === undefined) return b;
  return b === undefined || a <= b ? a : b;
}

/** The schedule's occurrence day (epoch day, local) in `month`, if that month has one. */
function dayInMonth(schedule: Schedule, month: number): number | undefined {
  const first = firstDayOfMonth(month);
  switch (schedule.type) {
    case "AbsoluteMonthly":
      return schedule.dayOfMonth <= daysInMonth(month)
        ? first + schedule.dayOfMonth - 1
        : undefined;
    case "RelativeMonthly": {
      const dow = DAYS_OF_WEEK.indexOf(schedule.dayOfWeek);
      const index = WEEK_INDEX[schedule.weekIndex];
      if (index >= 0) return first + mod(dow - weekdayOf(first), 7) + 7 * index;
      const last = first + daysInMonth(month) - 1;
      return last - mod(weekdayOf(last) - dow, 7);
    }
    case "Daily":
    case "Weekly":
      return undefined;
    default: {
      const never: never = schedule;
      return never;
    }
  }
}

/** Returns the first occurrence day in `[fromDay, lastDay]`, jumping by the interval rather than scanning. */
function nextOccurrenceDay(
  w: RecurringWindow,
  anchorDay: number,
  fromDay: number,
  lastDay: number,
): number | undefined {
  const s = w.schedule;
  let day = Math.max(fromDay, w.startDate === undefined ? fromDay : anchorDay);
  switch (s.type) {
    case "Daily":
      day += mod(anchorDay - day, s.intervalDays);
      break;
    case "Weekly":
      day += mod(DAYS_OF_WEEK.indexOf(s.dayOfWeek) - weekdayOf(day), 7);
      day +=
        7 * mod(weekNumberOf(anchorDay) - weekNumberOf(day), s.intervalWeeks);
      break;
    case "AbsoluteMonthly":
    case "RelativeMonthly": {
      let month = monthIndexOf(day);
      month += mod(monthIndexOf(anchorDay) - month, s.intervalMonths);
      for (; firstDayOfMonth(month) <= lastDay; month += s.intervalMonths) {
        const candidate = dayInMonth(s, month);
        if (candidate !== undefined && candidate >= day)
          return candidate <= lastDay ? candidate : undefined;
      }
      return undefined;
    }
    default: {
      const never: never = s;
      return never;
    }
  }
  return day <= lastDay ? day : undefined;
}

function recurringSet(w: RecurringWindow): WindowSet {
  const offsetMs = (parseUtcOffset(w.utcOffset) ?? 0) * MINUTE_MS;
  const startOfDayMs = (parseTimeOfDay(w.startTime) ?? 0) * MINUTE_MS;
  const durationMs = w.durationHours * HOUR_MS;
  // Without startDate the interval is 1 (validation requires it above 1), so any anchor will do.
  const anchorDay =
    w.startDate === undefined ? 0 : (parseDate(w.startDate) ?? 0);
  const blocked = w.notAllowedDates.map((r) => ({
    fromMs: (parseDate(r.start) ?? 0) * DAY_MS - offsetMs,
    toMs: ((parseDate(r.end) ?? 0) + 1) * DAY_MS - offsetMs,
  }));
  // Durations are at most 24h, so occurrences touch only for a 24-hour window every day: that one
  // is open without a break from its first occurrence on, and has no occurrence edges to walk.
  const continuous =
    w.schedule.type === "Daily" &&
    w.schedule.intervalDays === 1 &&
    w.durationHours === 24;
  const localDay = (tMs: number): number =>
    Math.floor((tMs + offsetMs) / DAY_MS);
  const startOf = (day: number): number =>
    day * DAY_MS + startOfDayMs - offsetMs;
  const next = (fromDay: number, lastDay: number): number | undefined =>
    nextOccurrenceDay(w, anchorDay, fromDay, lastDay);

  return {
    isOpen(tMs) {
      if (blocked.some((b) => b.fromMs <= tMs && tMs < b.toMs)) return false;
      // Occurrences last at most 24h from at most 23:59, so only today's and yesterday's can be open.
      const today = localDay(tMs);
      for (const day of [today - 1, today]) {
        const start = startOf(day);
        if (start <= tMs && tMs < start + durationMs && next(day, day) === day)
          return true;
      }
      return false;
    },
    nextBoundary(tMs, limitMs) {
      const lastDay = localDay(limitMs);
      let found: number | undefined;
      if (continuous) {
        const first =
          w.startDate === undefined ? undefined : startOf(anchorDay);
        if (first !== undefined && first > tMs) found = first;
      }
      // Occurrences are ordered and equally long, so the first one still running or ahead decides.
      for (
        let day = continuous ? undefined : next(localDay(tMs) - 1, lastDay);
        day !== undefined;
        day = next(day + 1, lastDay)
      ) {
        const start = startOf(day);
        if (start + durationMs > tMs) {
          found = start > tMs ? start : start + durationMs;
          break;
        }
      }
      for (const b of blocked) {
        found = earliest(
          found,
          b.fromMs > tMs ? b.fromMs : b.toMs > tMs ? b.toMs : undefined,
        );
      }
      return found;
    },
  };
}

// Memo of prepared windows. The engine asks about the same cluster's windows thousands of times
// per simulated run; parsing their strings once per window object (not per call) keeps each query a
// few arithmetic steps. Answers do not depend on the memo, so core stays deterministic.
const prepared = new WeakMap<MaintenanceWindow, WindowSet>();

/** Prepares a window for queries (memoised per window object). */
export function windowSet(w: MaintenanceWindow): WindowSet {
  let set = prepared.get(w);
  if (set === undefined) {
    set =
      w.type === "Recurring"
        ? recurringSet(w)
        : {
            isOpen: (tMs) => w.startMs <= tMs && tMs < w.endMs,
            nextBoundary: (tMs) =>
              w.startMs > tMs ? w.startMs : w.endMs > tMs ? w.endMs : undefined,
          };
    prepared.set(w, set);
  }
  return set;
}
