/**
 * Instants for people: UTC timestamps (the hub's clock and the reader's may differ by a timezone,
 * never by meaning) and relative ages against the caller's clock.
 */
import { formatDuration } from "./duration.js";

/** `2026-03-02T10:05:00Z` (milliseconds only when not zero). */
export function formatInstant(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}

/** `5m ago`, `2h 3m ago`, `just now`; a future instant reads `in 5m`. */
export function formatAgo(ms: number, nowMs: number): string {
  const seconds = Math.round((nowMs - ms) / 1000);
  if (Math.abs(seconds) < 1) return "just now";
  return seconds > 0
    ? `${formatDuration(seconds)} ago`
    : `in ${formatDuration(-seconds)}`;
}

/** The age column of a table: `5m`, `2d 3h` (no "ago": the header says it). */
export function formatAge(ms: number, nowMs: number): string {
  return formatDuration(Math.max(0, Math.round((nowMs - ms) / 1000)));
}
