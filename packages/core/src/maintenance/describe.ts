/** One-line human descriptions of a scope's windows and freezes, for `plan` output and Pending messages. */
import { formatInstant } from "./calendar.js";
import type {
  DateRange,
  Freeze,
  Maintenance,
  MaintenanceWindow,
  Schedule,
  WindowScope,
} from "./types.js";

function every(interval: number, unit: string, single: string): string {
  return interval === 1 ? single : `Every ${String(interval)} ${unit}s`;
}

function describeSchedule(s: Schedule): string {
  switch (s.type) {
    case "Daily":
      return every(s.intervalDays, "day", "Daily");
    case "Weekly":
      return s.intervalWeeks === 1
        ? `Weekly ${s.dayOfWeek}`
        : `Every ${String(s.intervalWeeks)} weeks on ${s.dayOfWeek}`;
    case "AbsoluteMonthly":
      return `${every(s.intervalMonths, "month", "Monthly")} on day ${String(s.dayOfMonth)}`;
    case "RelativeMonthly":
      return `${every(s.intervalMonths, "month", "Monthly")} on the ${s.weekIndex.toLowerCase()} ${s.dayOfWeek}`;
    default: {
      const never: never = s;
      return never;
    }
  }
}

function describeRange(r: DateRange): string {
  return r.start === r.end ? r.start : `${r.start}–${r.end}`;
}

/** E.g. `Weekly Saturday 22:00 +02:00 for 4h` or `2026-03-07T00:00Z–2026-03-08T12:00Z`. */
function describeWindow(w: MaintenanceWindow): string {
  if (w.type === "OneOff")
    return `${formatInstant(w.startMs)}–${formatInstant(w.endMs)}`;
  let text = `${describeSchedule(w.schedule)} ${w.startTime} ${w.utcOffset} for ${String(w.durationHours)}h`;
  if (w.startDate !== undefined) text += ` from ${w.startDate}`;
  if (w.notAllowedDates.length > 0)
    text += ` except ${w.notAllowedDates.map(describeRange).join(", ")}`;
  return text;
}

function describeFreeze(f: Freeze): string {
  const reason = f.reason === undefined ? "" : ` (${f.reason})`;
  return `frozen ${formatInstant(f.startMs)}–${formatInstant(f.endMs)}${reason}`;
}

/**
 * The scope's windows (or `any time` when it has none), then the freezes that touch it, joined by
 * `; `. Freezes are included because a plan reader needs them to understand a hold.
 */
export function describeWindows(
  m: Maintenance | undefined,
  scope: WindowScope,
): string {
  if (m === undefined) return "any time";
  const windows = m.windows[scope];
  const parts =
    windows.length === 0 ? ["any time"] : windows.map(describeWindow);
  for (const f of m.freezes)
    if (f.scopes.includes(scope)) parts.push(describeFreeze(f));
  return parts.join("; ");
}
