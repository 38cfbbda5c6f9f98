/**
 * The normalised maintenance configuration of one cluster (docs/semantics.md#maintenance-windows).
 * It is plain JSON data (strings, numbers, arrays, objects) because runs persist it and agents
 * report it over the wire; local wall-clock values stay as the owner wrote them (canonicalised),
 * absolute instants are epoch ms, and every interval is half-open `[start, end)`.
 */
import type { DayOfWeek } from "./calendar.js";

export type { DayOfWeek } from "./calendar.js";

/** What a window or freeze governs: Kubernetes upgrades, node-image upgrades, bundle releases. */
export type WindowScope = "kubernetes" | "nodeImage" | "workloads";

/** Every scope, in the order configuration and output list them. */
export const WINDOW_SCOPES: readonly WindowScope[] = [
  "kubernetes",
  "nodeImage",
  "workloads",
];

/** AKS `relativeMonthly.weekIndex`: which occurrence of the weekday in the month. */
export type WeekIndex = "First" | "Second" | "Third" | "Fourth" | "Last";

/** A recurrence in AKS's four schedule kinds; every interval is at least 1 (1 when not given). */
export type Schedule =
  | { readonly type: "Daily"; readonly intervalDays: number }
  | {
      readonly type: "Weekly";
      readonly intervalWeeks: number;
      readonly dayOfWeek: DayOfWeek;
    }
  | {
      readonly type: "AbsoluteMonthly";
      readonly intervalMonths: number;
      /** 1–31; a month without this day has no occurrence (AKS does not move it to the month's end). */
      readonly dayOfMonth: number;
    }
  | {
      readonly type: "RelativeMonthly";
      readonly intervalMonths: number;
      readonly weekIndex: WeekIndex;
      readonly dayOfWeek: DayOfWeek;
    };

/** An inclusive range of local calendar dates `YYYY-MM-DD`. */
export interface DateRange {
  readonly start: string;
  readonly end: string;
}

/** A recurring window in the AKS `maintenanceWindow` shape, canonicalised. */
export interface RecurringWindow {
  readonly type: "Recurring";
  readonly schedule: Schedule;
  /** Local start time `HH:MM` at `utcOffset`. */
  readonly startTime: string;
  /** `±HH:MM`, `+00:00` when not given. */
  readonly utcOffset: string;
  /** Whole hours, 1–24; an occurrence is open on `[start, start + durationHours)`. */
  readonly durationHours: number;
  /** First local date an occurrence may start on; anchors intervals above 1. */
  readonly startDate?: string;
  /** Local dates on which the window is closed, even mid-occurrence. */
  readonly notAllowedDates: readonly DateRange[];
}

/** A window open once, on `[startMs, endMs)`. */
export interface OneOffWindow {
  readonly type: "OneOff";
  readonly startMs: number;
  readonly endMs: number;
}

/** Either kind of maintenance window. */
export type MaintenanceWindow = RecurringWindow | OneOffWindow;

/** A period `[startMs, endMs)` during which nothing of the listed scopes may start. */
export interface Freeze {
  readonly startMs: number;
  readonly endMs: number;
  readonly scopes: readonly WindowScope[];
  readonly reason?: string;
}

/** A cluster's windows per scope (an empty list means "any time") and its freezes. */
export interface Maintenance {
  readonly windows: Readonly<Record<WindowScope, readonly MaintenanceWindow[]>>;
  readonly freezes: readonly Freeze[];
}
