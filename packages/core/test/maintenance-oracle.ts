/**
 * A deliberately naive reference for "is the kubernetes scope open at t", written from the raw
 * input with Date's calendar getters (Sunday = 0, month arithmetic by year*12+month), sharing no
 * code with src/maintenance, so property tests can catch calendar mistakes on both sides.
 */
const DAY = 86_400_000;
const NAMES = [
  "Sunday",
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
];
const INDEXES = ["First", "Second", "Third", "Fourth"];

export interface RawRecurring {
  schedule: Record<string, Record<string, number | string>>;
  startTime: string;
  utcOffset: string;
  durationHours: number;
  startDate?: string;
  notAllowedDates: { start: string; end: string }[];
}
export interface RawOneOff {
  start: string;
  end: string;
}
export interface RawFreeze {
  start: string;
  end: string;
  utcOffset: string;
  scopes?: string[];
}
export interface RawMaintenance {
  kubernetes: (RawRecurring | RawOneOff)[];
  freezes: RawFreeze[];
}

function offsetMinutes(text: string): number {
  const sign = text.startsWith("-") ? -1 : 1;
  const [h, m] = text.slice(1).split(":").map(Number);
  return sign * ((h ?? 0) * 60 + (m ?? 0));
}

function utcMidnight(date: string): Date {
  return new Date(`${date}T00:00:00Z`);
}

function mondayOf(d: Date): number {
  return d.getTime() - ((d.getUTCDay() + 6) % 7) * DAY;
}

function occursOn(w: RawRecurring, day: Date): boolean {
  const start =
    w.startDate === undefined ? undefined : utcMidnight(w.startDate);
  if (start !== undefined && day.getTime() < start.getTime()) return false;
  const [kind, body] = Object.entries(w.schedule)[0] ?? ["", {}];
  const interval = Number(
    body["intervalDays"] ??
      body["intervalWeeks"] ??
      body["intervalMonths"] ??
      1,
  );
  const dowOk =
    body["dayOfWeek"] === undefined ||
    NAMES[day.getUTCDay()] === body["dayOfWeek"];
  const months =
    start === undefined
      ? 0
      : day.getUTCFullYear() * 12 +
        day.getUTCMonth() -
        (start.getUTCFullYear() * 12 + start.getUTCMonth());
  switch (kind) {
    case "daily":
      return (
        start === undefined ||
        Math.round((day.getTime() - start.getTime()) / DAY) % interval === 0
      );
    case "weekly":
      return (
        dowOk &&
        (start === undefined ||
          Math.round((mondayOf(day) - mondayOf(start)) / (7 * DAY)) %
            interval ===
            0)
      );
    case "absoluteMonthly":
      return day.getUTCDate() === body["dayOfMonth"] && months % interval === 0;
    case "relativeMonthly": {
      const index = String(body["weekIndex"]);
      const inWeek =
        index === "Last"
          ? new Date(day.getTime() + 7 * DAY).getUTCMonth() !==
            day.getUTCMonth()
          : Math.ceil(day.getUTCDate() / 7) === INDEXES.indexOf(index) + 1;
      return dowOk && inWeek && months % interval === 0;
    }
    default:
      throw new Error(`oracle: unknown schedule ${kind}`);
  }
}

function recurringOpen(w: RawRecurring, t: number): boolean {
  const offsetMs = offsetMinutes(w.utcOffset) * 60_000;
  const localDate = new Date(t + offsetMs).toISOString().slice(0, 10);
  if (w.notAllowedDates.some((r) => r.start <= localDate && localDate <= r.end))
    return false;
  const [h, m] = w.startTime.split(":").map(Number);
  for (const back of [0, 1]) {
    const day = new Date(utcMidnight(localDate).getTime() - back * DAY);
    const start =
      day.getTime() + ((h ?? 0) * 60 + (m ?? 0)) * 60_000 - offsetMs;
    if (
      start <= t &&
      t < start + w.durationHours * 3_600_000 &&
      occursOn(w, day)
    )
      return true;
  }
  return false;
}

function freezeBound(text: string, offset: string, isEnd: boolean): number {
  if (text.length !== 10) return Date.parse(text);
  return (
    utcMidnight(text).getTime() +
    (isEnd ? DAY : 0) -
    offsetMinutes(offset) * 60_000
  );
}

/**
 * Whether the raw config's kubernetes scope is open at t, per
 * docs/semantics.md#maintenance-windows.
 */
export function oracleOpen(m: RawMaintenance, t: number): boolean {
  const frozen = m.freezes.some(
    (f) =>
      (f.scopes === undefined || f.scopes.includes("kubernetes")) &&
      freezeBound(f.start, f.utcOffset, false) <= t &&
      t < freezeBound(f.end, f.utcOffset, true),
  );
  if (frozen) return false;
  if (m.kubernetes.length === 0) return true;
  return m.kubernetes.some((w) =>
    "start" in w
      ? Date.parse(w.start) <= t && t < Date.parse(w.end)
      : recurringOpen(w, t),
  );
}
