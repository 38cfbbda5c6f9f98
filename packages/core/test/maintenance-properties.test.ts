import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAINTENANCE_HORIZON_MS,
  isOpenAt,
  nextChangeAfter,
  nextOpening,
  type Maintenance,
} from "../src/maintenance/windows.js";
import { maintenance } from "./maintenance-helpers.js";
import {
  oracleOpen,
  type RawFreeze,
  type RawMaintenance,
  type RawOneOff,
  type RawRecurring,
} from "./maintenance-oracle.js";
import { compact } from "../src/compact.js";

const DAY = 86_400_000;
const FROM = Date.UTC(2026, 0, 1);
const dayName = fc.constantFrom(
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
  "Sunday",
);
const offset = fc.constantFrom(
  "+00:00",
  "+02:00",
  "+05:30",
  "-08:00",
  "+14:00",
  "-14:00",
  "+09:45",
  "-03:30",
);
const date = (fromMs: number, days: number) =>
  fc
    .integer({ min: 0, max: days })
    .map((d) => new Date(fromMs + d * DAY).toISOString().slice(0, 10));
const two = (n: number) => String(n).padStart(2, "0");

const schedule = fc.oneof(
  fc.record({
    daily: fc.record({ intervalDays: fc.integer({ min: 1, max: 5 }) }),
  }),
  fc.record({
    weekly: fc.record({
      intervalWeeks: fc.integer({ min: 1, max: 4 }),
      dayOfWeek: dayName,
    }),
  }),
  fc.record({
    absoluteMonthly: fc.record({
      intervalMonths: fc.integer({ min: 1, max: 6 }),
      dayOfMonth: fc.integer({ min: 1, max: 31 }),
    }),
  }),
  fc.record({
    relativeMonthly: fc.record({
      intervalMonths: fc.integer({ min: 1, max: 6 }),
      weekIndex: fc.constantFrom("First", "Second", "Third", "Fourth", "Last"),
      dayOfWeek: dayName,
    }),
  }),
);

const dateRange = fc
  .tuple(date(FROM - 30 * DAY, 400), fc.integer({ min: 0, max: 20 }))
  .map(([start, length]) => ({
    start,
    end: new Date(Date.parse(start) + length * DAY).toISOString().slice(0, 10),
  }));

const recurring: fc.Arbitrary<RawRecurring> = fc
  .record({
    schedule,
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.constantFrom(0, 15, 30, 59),
    utcOffset: offset,
    durationHours: fc.integer({ min: 1, max: 24 }),
    startDate: fc.option(date(FROM - 200 * DAY, 400), { nil: undefined }),
    notAllowedDates: fc.array(dateRange, { maxLength: 2 }),
  })
  .map(({ hour, minute, startDate, ...w }) => {
    const body = Object.values(w.schedule)[0] as Record<string, number>;
    const interval =
      body["intervalDays"] ??
      body["intervalWeeks"] ??
      body["intervalMonths"] ??
      1;
    // An interval above 1 needs an anchor; give it one rather than discarding the sample.
    const anchor = startDate ?? (interval > 1 ? "2025-11-19" : undefined);
    return {
      ...w,
      startTime: `${two(hour)}:${two(minute)}`,
      ...compact({ startDate: anchor }),
    };
  });

const oneOff: fc.Arbitrary<RawOneOff> = fc
  .tuple(
    fc.integer({ min: 0, max: 400 * 24 * 60 }),
    fc.integer({ min: 1, max: 10 * 24 * 60 }),
  )
  .map(([start, length]) => ({
    start: new Date(FROM + start * 60_000).toISOString(),
    end: new Date(FROM + (start + length) * 60_000).toISOString(),
  }));

const freeze: fc.Arbitrary<RawFreeze> = fc.oneof(
  fc
    .record({
      start: date(FROM, 400),
      days: fc.integer({ min: 0, max: 30 }),
      utcOffset: offset,
    })
    .map(({ start, days, utcOffset }) => ({
      start,
      end: new Date(Date.parse(start) + days * DAY).toISOString().slice(0, 10),
      utcOffset,
    })),
  oneOff.map((w) => ({
    ...w,
    utcOffset: "+00:00",
    scopes: ["kubernetes", "workloads"],
  })),
  oneOff.map((w) => ({ ...w, utcOffset: "+00:00", scopes: ["nodeImage"] })),
);

const config: fc.Arbitrary<RawMaintenance> = fc.record({
  kubernetes: fc.array(
    fc.oneof(
      { weight: 3, arbitrary: recurring },
      { weight: 1, arbitrary: oneOff },
    ),
    { maxLength: 3 },
  ),
  freezes: fc.array(freeze, { maxLength: 2 }),
});

// Minute-aligned instants sometimes shifted by 1 ms, so window edges (all on whole minutes) get hit.
const instant = fc
  .tuple(
    fc.integer({ min: 0, max: 420 * 24 * 60 }),
    fc.constantFrom(0, 0, 0, -1, 1),
  )
  .map(([minute, nudge]) => FROM + minute * 60_000 + nudge);
const fractions = fc.array(
  fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
  { minLength: 5, maxLength: 20 },
);

const samplesIn = (
  fromMs: number,
  toMs: number,
  fs: readonly number[],
): number[] => [
  fromMs,
  toMs - 1,
  ...fs.map((f) => fromMs + Math.floor(f * (toMs - fromMs))),
];
const open = (m: Maintenance, t: number): boolean =>
  isOpenAt(m, "kubernetes", t);

describe("maintenance window properties", () => {
  it("isOpenAt agrees with a naive reference implementation, also just around every change", () => {
    fc.assert(
      fc.property(config, instant, (raw, t) => {
        const m = maintenance(raw);
        expect(open(m, t)).toBe(oracleOpen(raw, t));
        const change = nextChangeAfter(m, "kubernetes", t);
        if (change !== undefined) {
          expect(open(m, change)).toBe(oracleOpen(raw, change));
          expect(open(m, change - 1)).toBe(oracleOpen(raw, change - 1));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("nextOpening is open, not before t, and nothing between t and it is open", () => {
    fc.assert(
      fc.property(config, instant, fractions, (raw, t, fs) => {
        const m = maintenance(raw);
        const next = nextOpening(m, "kubernetes", t);
        if (next === undefined) {
          for (const s of samplesIn(t, t + MAINTENANCE_HORIZON_MS, fs))
            expect(oracleOpen(raw, s)).toBe(false);
          return;
        }
        expect(next).toBeGreaterThanOrEqual(t);
        expect(open(m, next)).toBe(true);
        if (next > t)
          for (const s of samplesIn(t, next, fs))
            expect(oracleOpen(raw, s)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it("isOpenAt is constant on [t, nextChangeAfter(t)) and differs at the change", () => {
    fc.assert(
      fc.property(config, instant, fractions, (raw, t, fs) => {
        const m = maintenance(raw);
        const before = open(m, t);
        const change = nextChangeAfter(m, "kubernetes", t);
        const until = change ?? t + MAINTENANCE_HORIZON_MS;
        for (const s of samplesIn(t, until, fs))
          expect(oracleOpen(raw, s)).toBe(before);
        if (change !== undefined) {
          expect(change).toBeGreaterThan(t);
          expect(open(m, change)).toBe(!before);
        }
      }),
      { numRuns: 200 },
    );
  });
});
