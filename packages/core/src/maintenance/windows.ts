/**
 * Maintenance-window maths (docs/semantics.md#order-and-concurrency and
 * docs/semantics.md#maintenance-windows): whether a scope may start work at an instant, when it
 * next opens or changes, and the ordering category of a member. Pure: every time is an argument in
 * epoch ms, and every interval is half-open `[start, end)`.
 *
 * A scope is open at t when (it has no windows, or one of them is open at t) and no freeze of the
 * scope covers t. Freezes beat windows: "nothing of that scope may start".
 */
import { DAY_MS, HOUR_MS } from "./calendar.js";
import { windowSet, type WindowSet } from "./occurrences.js";
import type { Freeze, Maintenance, WindowScope } from "./types.js";

export { describeWindows } from "./describe.js";
export { maintenanceField, parseMaintenance } from "./schema.js";
export { WINDOW_SCOPES } from "./types.js";
export type {
  DateRange,
  DayOfWeek,
  Freeze,
  Maintenance,
  MaintenanceWindow,
  OneOffWindow,
  RecurringWindow,
  Schedule,
  WeekIndex,
  WindowScope,
} from "./types.js";

/**
 * "Opens soon" reaches this far ahead, inclusive (docs/semantics.md#order-and-concurrency, after
 * AKS's member ordering).
 */
export const OPENS_SOON_MS = 4 * HOUR_MS;

/**
 * How far ahead nextOpening/nextChangeAfter look: 1096 days, i.e. any three calendar years. A window
 * that does not open within it (e.g. `dayOfMonth: 30` every 12 months from February) never will in
 * practice, and the bound keeps every query finite.
 */
export const MAINTENANCE_HORIZON_MS = 1096 * DAY_MS;

/** A member's order class for a run's scope: open now, opens within 4h, no window, closed. */
export type WindowCategory = "open" | "opensSoon" | "none" | "closed";

interface ScopeView {
  readonly windows: readonly WindowSet[];
  readonly freezes: readonly Freeze[];
}

const UNCONSTRAINED: ScopeView = { windows: [], freezes: [] };

function viewOf(m: Maintenance | undefined, scope: WindowScope): ScopeView {
  if (m === undefined) return UNCONSTRAINED;
  return {
    windows: m.windows[scope].map(windowSet),
    freezes: m.freezes.filter((f) => f.scopes.includes(scope)),
  };
}

/** The end of the freezes covering t (the latest one), or undefined when t is not frozen. */
function frozenUntil(v: ScopeView, tMs: number): number | undefined {
  let until: number | undefined;
  for (const f of v.freezes) {
    if (
      f.startMs <= tMs &&
      tMs < f.endMs &&
      (until === undefined || f.endMs > until)
    )
      until = f.endMs;
  }
  return until;
}

function openAt(v: ScopeView, tMs: number): boolean {
  if (frozenUntil(v, tMs) !== undefined) return false;
  return v.windows.length === 0 || v.windows.some((w) => w.isOpen(tMs));
}

/**
 * Walks component boundaries (window occurrence edges, blocked dates, freeze edges) after t until
 * openness differs from t's. A frozen stretch is skipped in one jump, since nothing inside it can
 * open the scope. Returns undefined past `limitMs`. Usually one or two steps; only windows that
 * together stay open without a break (say two daily 12-hour windows end to end) make it walk every
 * edge up to the horizon, which costs a few milliseconds.
 */
function nextChange(
  v: ScopeView,
  tMs: number,
  limitMs: number,
): number | undefined {
  const initial = openAt(v, tMs);
  let cursor = tMs;
  for (;;) {
    let next = frozenUntil(v, cursor);
    if (next === undefined) {
      for (const w of v.windows) {
        const b = w.nextBoundary(cursor, limitMs);
        if (b !== undefined && (next === undefined || b < next)) next = b;
      }
      for (const f of v.freezes) {
        if (f.startMs > cursor && (next === undefined || f.startMs < next))
          next = f.startMs;
      }
    }
    if (next === undefined || next > limitMs) return undefined;
    if (openAt(v, next) !== initial) return next;
    cursor = next;
  }
}

/** Whether work of `scope` may start at `tMs`; `m` undefined means the cluster set no constraints. */
export function isOpenAt(
  m: Maintenance | undefined,
  scope: WindowScope,
  tMs: number,
): boolean {
  return openAt(viewOf(m, scope), tMs);
}

/** `tMs` when open then, else the first later instant the scope opens; undefined if not within the horizon. */
export function nextOpening(
  m: Maintenance | undefined,
  scope: WindowScope,
  tMs: number,
): number | undefined {
  const v = viewOf(m, scope);
  return openAt(v, tMs)
    ? tMs
    : nextChange(v, tMs, tMs + MAINTENANCE_HORIZON_MS);
}

/** The first instant > `tMs` at which {@link isOpenAt} flips (opens or closes); undefined if not within the horizon. */
export function nextChangeAfter(
  m: Maintenance | undefined,
  scope: WindowScope,
  tMs: number,
): number | undefined {
  return nextChange(viewOf(m, scope), tMs, tMs + MAINTENANCE_HORIZON_MS);
}

/**
 * The docs/semantics.md#order-and-concurrency ordering category at `tMs`. "none" needs both no
 * windows and no freeze covering tMs; a frozen scope without windows is "closed", or "opensSoon"
 * when the freeze ends within 4 hours.
 */
export function windowCategory(
  m: Maintenance | undefined,
  scope: WindowScope,
  tMs: number,
): WindowCategory {
  const v = viewOf(m, scope);
  if (v.windows.length === 0 && frozenUntil(v, tMs) === undefined)
    return "none";
  if (openAt(v, tMs)) return "open";
  return nextChange(v, tMs, tMs + OPENS_SOON_MS) === undefined
    ? "closed"
    : "opensSoon";
}

/** Whether the scope has any window or any freeze (at any time), so unconstrained clusters can take a fast path. */
export function hasConstraints(
  m: Maintenance | undefined,
  scope: WindowScope,
): boolean {
  if (m === undefined) return false;
  return (
    m.windows[scope].length > 0 ||
    m.freezes.some((f) => f.scopes.includes(scope))
  );
}
