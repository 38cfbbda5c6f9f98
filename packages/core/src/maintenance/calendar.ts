/**
 * Calendar arithmetic for maintenance windows on fixed UTC offsets. Days are counted as integers
 * since 1970-01-01 ("epoch days") in a window's local time; there is no daylight saving, because
 * AKS windows carry a fixed `utcOffset` rather than a time zone.
 */

/** Milliseconds in one (offset-local) day; fixed offsets mean every day is exactly this long. */
export const DAY_MS = 86_400_000;
/** Milliseconds in one hour. */
export const HOUR_MS = 3_600_000;
/** Milliseconds in one minute. */
export const MINUTE_MS = 60_000;

/** Day names in AKS spelling, Monday first so an index is the ISO weekday minus one. */
export const DAYS_OF_WEEK = [
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
  "Sunday",
] as const;

/** A day name as AKS spells it. */
export type DayOfWeek = (typeof DAYS_OF_WEEK)[number];

/** Modulo that is never negative, for counting back from anchors before 1970. */
export function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}

/** Weekday of an epoch day, 0 = Monday … 6 = Sunday (1970-01-01 was a Thursday). */
export function weekdayOf(day: number): number {
  return mod(day + 3, 7);
}

/** Monday-based week number of an epoch day: all days of one Monday–Sunday week share it. */
export function weekNumberOf(day: number): number {
  return Math.floor((day + 3) / 7);
}

// Civil-calendar conversions in integer arithmetic (H. Hinnant's algorithms, proleptic Gregorian):
// monthly schedules call them in loops, and they avoid allocating Date objects.

/** Epoch day of a civil date (month 1–12); day may exceed the month, rolling over like Date.UTC. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear =
    Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 +
    Math.floor(yearOfEra / 4) -
    Math.floor(yearOfEra / 100) +
    dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/** Months since January 1970 of an epoch day, the unit monthly intervals count in. */
export function monthIndexOf(day: number): number {
  const z = day + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36524) -
      Math.floor(dayOfEra / 146096)) /
      365,
  );
  const dayOfYear =
    dayOfEra -
    (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return (year - 1970) * 12 + month - 1;
}

/** Epoch day of the first day of a month index. */
export function firstDayOfMonth(monthIndex: number): number {
  return daysFromCivil(
    1970 + Math.floor(monthIndex / 12),
    mod(monthIndex, 12) + 1,
    1,
  );
}

/** Number of days in a month index (28–31). */
export function daysInMonth(monthIndex: number): number {
  return firstDayOfMonth(monthIndex + 1) - firstDayOfMonth(monthIndex);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2})$/;
const OFFSET = /^([+-])(\d{2}):(\d{2})$/;
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|[+-]\d{2}:\d{2})$/;

function civilDay(
  year: number,
  month: number,
  day: number,
): number | undefined {
  // Date.UTC rolls 02-30 over into March; round-tripping catches dates that do not exist.
  const ms = Date.UTC(year, month - 1, day);
  const back = new Date(ms);
  if (
    back.getUTCFullYear() !== year ||
    back.getUTCMonth() !== month - 1 ||
    back.getUTCDate() !== day
  ) {
    return undefined;
  }
  return ms / DAY_MS;
}

/** Parses a calendar date `YYYY-MM-DD` to its epoch day; undefined when malformed or nonexistent. */
export function parseDate(text: string): number | undefined {
  const m = DATE.exec(text);
  if (m === null) return undefined;
  return civilDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** Parses `HH:MM` (00:00–23:59) to minutes after midnight. */
export function parseTimeOfDay(text: string): number | undefined {
  const m = TIME.exec(text);
  if (m === null) return undefined;
  const hours = Number(m[1]);
  const minutes = Number(m[2]);
  return hours <= 23 && minutes <= 59 ? hours * 60 + minutes : undefined;
}

/** Parses `±HH:MM` within −14:00…+14:00 (the range AKS and ISO 8601 allow) to minutes east of UTC. */
export function parseUtcOffset(text: string): number | undefined {
  const m = OFFSET.exec(text);
  if (m === null) return undefined;
  const minutes = Number(m[2]) * 60 + Number(m[3]);
  if (Number(m[3]) > 59 || minutes > 14 * 60) return undefined;
  return m[1] === "-" ? -minutes : minutes;
}

/** Parses an RFC 3339 timestamp that names its offset (`Z` or `±HH:MM`) to epoch ms. */
export function parseInstant(text: string): number | undefined {
  const m = INSTANT.exec(text);
  if (m === null) return undefined;
  const day = civilDay(Number(m[1]), Number(m[2]), Number(m[3]));
  const time = parseTimeOfDay(`${m[4] ?? ""}:${m[5] ?? ""}`);
  const seconds = Number(m[6] ?? "0");
  const zone = m[8] ?? "";
  const offset = zone === "Z" || zone === "z" ? 0 : parseUtcOffset(zone);
  if (
    day === undefined ||
    time === undefined ||
    seconds > 59 ||
    offset === undefined
  )
    return undefined;
  // Sub-millisecond digits are truncated: the engine's clock has millisecond resolution.
  const millis = Number(((m[7] ?? "") + "000").slice(0, 3));
  return day * DAY_MS + (time - offset) * MINUTE_MS + seconds * 1000 + millis;
}

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

/** Formats minutes east of UTC as `±HH:MM` (UTC itself is `+00:00`, as AKS writes it). */
export function formatUtcOffset(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
}

/** Formats epoch ms in UTC as compactly as it is exact: `2026-03-07T00:00Z`, adding seconds/ms if set. */
export function formatInstant(ms: number): string {
  const iso = new Date(ms).toISOString();
  if (ms % 1000 !== 0) return iso;
  if (ms % MINUTE_MS !== 0) return `${iso.slice(0, 19)}Z`;
  return `${iso.slice(0, 16)}Z`;
}
