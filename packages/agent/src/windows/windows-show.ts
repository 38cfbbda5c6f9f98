/**
 * What `flotilla-agent windows` prints: per scope, whether work may start now and when that
 * changes (core's window maths), then the scope's windows and freezes in words.
 */
import {
  describeWindows,
  hasConstraints,
  isOpenAt,
  nextChangeAfter,
  nextOpening,
  WINDOW_SCOPES,
  type Maintenance,
} from "@flotilla/core";

/** An instant as `2026-03-07T22:00Z` (UTC, minutes; windows start on whole minutes). */
export function isoMinute(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16) + "Z";
}

/** One scope's state at `nowMs`, e.g. `closed, opens 2026-03-07T22:00Z`. */
function stateAt(
  m: Maintenance | undefined,
  scope: (typeof WINDOW_SCOPES)[number],
  nowMs: number,
): string {
  if (!hasConstraints(m, scope)) return "open any time";
  if (isOpenAt(m, scope, nowMs)) {
    const closes = nextChangeAfter(m, scope, nowMs);
    return closes === undefined
      ? "open now"
      : `open now, closes ${isoMinute(closes)}`;
  }
  const opens = nextOpening(m, scope, nowMs);
  return opens === undefined
    ? "closed, no opening in sight"
    : `closed, opens ${isoMinute(opens)}`;
}

/** The per-scope report, one block per scope, ending with a newline. */
export function describeOpenings(
  m: Maintenance | undefined,
  nowMs: number,
): string {
  const width = Math.max(...WINDOW_SCOPES.map((s) => s.length));
  return WINDOW_SCOPES.map(
    (scope) =>
      `${scope.padEnd(width)}  ${stateAt(m, scope, nowMs)}\n${" ".repeat(width + 2)}${describeWindows(m, scope)}\n`,
  ).join("");
}
