import { describe, expect, it } from "vitest";
import {
  isOpenAt,
  nextChangeAfter,
  nextOpening,
  type Maintenance,
  type WindowScope,
} from "../src/maintenance/windows.js";
import { at, maintenance, openOnes } from "./maintenance-helpers.js";

const k8s = (window: unknown): Maintenance =>
  maintenance({ kubernetes: window });
const open =
  (m: Maintenance, scope: WindowScope = "kubernetes") =>
  (t: number) =>
    isOpenAt(m, scope, t);
const opening = (m: Maintenance, iso: string): string | undefined => {
  const next = nextOpening(m, "kubernetes", at(iso));
  return next === undefined ? undefined : new Date(next).toISOString();
};

describe("daily windows", () => {
  it("are open on [startTime, startTime + durationHours) every day, across midnight", () => {
    const m = k8s({
      schedule: { daily: {} },
      startTime: "22:00",
      durationHours: 4,
    });
    const probes = [
      "2026-03-02T21:59:59.999Z",
      "2026-03-02T22:00:00Z",
      "2026-03-03T01:59:59.999Z",
      "2026-03-03T02:00:00Z",
      "2026-03-03T12:00:00Z",
    ];
    expect(openOnes(open(m), probes)).toEqual([
      "2026-03-02T22:00:00Z",
      "2026-03-03T01:59:59.999Z",
    ]);
  });

  it("with intervalDays count from startDate and never run before it", () => {
    const m = k8s({
      schedule: { daily: { intervalDays: 3 } },
      startTime: "10:00",
      durationHours: 4,
      startDate: "2026-03-02",
    });
    const probes = [
      "2026-02-27",
      "2026-03-01",
      "2026-03-02",
      "2026-03-03",
      "2026-03-04",
      "2026-03-05",
      "2026-03-08",
    ];
    expect(
      openOnes(
        open(m),
        probes.map((d) => `${d}T11:00:00Z`),
      ),
    ).toEqual([
      "2026-03-02T11:00:00Z",
      "2026-03-05T11:00:00Z",
      "2026-03-08T11:00:00Z",
    ]);
    expect(opening(m, "2026-03-03T00:00:00Z")).toBe("2026-03-05T10:00:00.000Z");
    expect(opening(m, "2026-01-01T00:00:00Z")).toBe("2026-03-02T10:00:00.000Z");
  });

  it("of 24 hours are open at every instant and never change", () => {
    const m = k8s({
      schedule: { daily: {} },
      startTime: "06:30",
      durationHours: 24,
    });
    expect(
      openOnes(open(m), [
        "2026-03-02T06:29:59.999Z",
        "2026-03-02T06:30:00Z",
        "2026-07-01T00:00:00Z",
      ]),
    ).toHaveLength(3);
    expect(
      nextChangeAfter(m, "kubernetes", at("2026-03-02T00:00:00Z")),
    ).toBeUndefined();
  });
});

describe("weekly windows", () => {
  it("open only on their dayOfWeek, in local time at utcOffset", () => {
    // Saturday 22:00 +02:00 is Saturday 20:00–24:00 UTC.
    const m = k8s({
      schedule: { weekly: { dayOfWeek: "Saturday" } },
      startTime: "22:00",
      utcOffset: "+02:00",
      durationHours: 4,
    });
    const probes = [
      "2026-03-06T20:30:00Z", // Friday
      "2026-03-07T19:59:59.999Z",
      "2026-03-07T20:00:00Z",
      "2026-03-07T23:59:59.999Z",
      "2026-03-08T00:00:00Z",
      "2026-03-14T21:00:00Z", // next Saturday
    ];
    expect(openOnes(open(m), probes)).toEqual([
      "2026-03-07T20:00:00Z",
      "2026-03-07T23:59:59.999Z",
      "2026-03-14T21:00:00Z",
    ]);
  });

  it("with intervalWeeks count Monday-based weeks from the week containing startDate", () => {
    // startDate is Wednesday 2026-03-04, so its week (Mon 03-02 … Sun 03-08) is week 0.
    const sunday = k8s({
      schedule: { weekly: { intervalWeeks: 2, dayOfWeek: "Sunday" } },
      startTime: "09:00",
      durationHours: 4,
      startDate: "2026-03-04",
    });
    const sundays = [
      "2026-03-01",
      "2026-03-08",
      "2026-03-15",
      "2026-03-22",
      "2026-03-29",
      "2026-04-05",
    ];
    expect(
      openOnes(
        open(sunday),
        sundays.map((d) => `${d}T10:00:00Z`),
      ),
    ).toEqual([
      "2026-03-08T10:00:00Z",
      "2026-03-22T10:00:00Z",
      "2026-04-05T10:00:00Z",
    ]);
    // Week 0's Monday is before startDate, so the first Monday occurrence is in week 2.
    const monday = k8s({
      schedule: { weekly: { intervalWeeks: 2, dayOfWeek: "Monday" } },
      startTime: "09:00",
      durationHours: 4,
      startDate: "2026-03-04",
    });
    expect(opening(monday, "2026-03-01T00:00:00Z")).toBe(
      "2026-03-16T09:00:00.000Z",
    );
    expect(opening(monday, "2026-03-16T13:00:00Z")).toBe(
      "2026-03-30T09:00:00.000Z",
    );
  });

  it("follow the local weekday when utcOffset moves it to another UTC day", () => {
    // Monday 02:00 +05:30 is Sunday 20:30 UTC; Saturday 20:00 -08:00 is Sunday 04:00 UTC.
    const east = k8s({
      schedule: { weekly: { dayOfWeek: "Monday" } },
      startTime: "02:00",
      utcOffset: "+05:30",
      durationHours: 2,
    });
    expect(
      openOnes(open(east), [
        "2026-03-08T20:29:59Z",
        "2026-03-08T20:30:00Z",
        "2026-03-08T22:29:59Z",
        "2026-03-09T02:00:00Z",
      ]),
    ).toEqual(["2026-03-08T20:30:00Z", "2026-03-08T22:29:59Z"]);
    const west = k8s({
      schedule: { weekly: { dayOfWeek: "Saturday" } },
      startTime: "20:00",
      utcOffset: "-08:00",
      durationHours: 6,
    });
    expect(
      openOnes(open(west), [
        "2026-03-07T20:00:00Z",
        "2026-03-08T04:00:00Z",
        "2026-03-08T09:59:59Z",
        "2026-03-08T10:00:00Z",
      ]),
    ).toEqual(["2026-03-08T04:00:00Z", "2026-03-08T09:59:59Z"]);
  });
});

describe("monthly windows", () => {
  it("with dayOfMonth 31 skip months that have no 31st", () => {
    const m = k8s({
      schedule: { absoluteMonthly: { dayOfMonth: 31 } },
      startTime: "00:00",
      durationHours: 4,
    });
    expect(opening(m, "2026-02-01T00:00:00Z")).toBe("2026-03-31T00:00:00.000Z");
    expect(opening(m, "2026-04-01T00:00:00Z")).toBe("2026-05-31T00:00:00.000Z");
    expect(isOpenAt(m, "kubernetes", at("2026-04-30T01:00:00Z"))).toBe(false);
  });

  it("stay open into the next month when an occurrence crosses the month end", () => {
    const m = k8s({
      schedule: { absoluteMonthly: { dayOfMonth: 31 } },
      startTime: "22:00",
      durationHours: 6,
    });
    expect(
      openOnes(open(m), [
        "2026-03-31T21:59:59Z",
        "2026-04-01T03:59:59Z",
        "2026-04-01T04:00:00Z",
      ]),
    ).toEqual(["2026-04-01T03:59:59Z"]);
  });

  it("with intervalMonths count months from startDate's month", () => {
    const m = k8s({
      schedule: { absoluteMonthly: { intervalMonths: 2, dayOfMonth: 15 } },
      startTime: "12:00",
      durationHours: 4,
      startDate: "2026-01-20",
    });
    const fifteenths = [
      "2026-01-15",
      "2026-02-15",
      "2026-03-15",
      "2026-04-15",
      "2026-05-15",
    ];
    // January counts as month 0 but its 15th is before startDate.
    expect(
      openOnes(
        open(m),
        fifteenths.map((d) => `${d}T13:00:00Z`),
      ),
    ).toEqual(["2026-03-15T13:00:00Z", "2026-05-15T13:00:00Z"]);
  });

  it("relative to weekIndex First pick the first such weekday of the month", () => {
    const m = k8s({
      schedule: {
        relativeMonthly: { weekIndex: "First", dayOfWeek: "Monday" },
      },
      startTime: "08:00",
      durationHours: 4,
    });
    expect(opening(m, "2026-03-01T00:00:00Z")).toBe("2026-03-02T08:00:00.000Z");
    expect(opening(m, "2026-03-03T00:00:00Z")).toBe("2026-04-06T08:00:00.000Z");
  });

  it("relative to weekIndex Last pick the last such weekday, in short and long months", () => {
    const m = k8s({
      schedule: { relativeMonthly: { weekIndex: "Last", dayOfWeek: "Friday" } },
      startTime: "08:00",
      durationHours: 4,
    });
    expect(opening(m, "2026-02-01T00:00:00Z")).toBe("2026-02-27T08:00:00.000Z");
    expect(opening(m, "2026-02-28T00:00:00Z")).toBe("2026-03-27T08:00:00.000Z");
    expect(isOpenAt(m, "kubernetes", at("2026-03-20T09:00:00Z"))).toBe(false);
  });

  it("relative with intervalMonths skip the months in between", () => {
    const m = k8s({
      schedule: {
        relativeMonthly: {
          intervalMonths: 3,
          weekIndex: "Second",
          dayOfWeek: "Tuesday",
        },
      },
      startTime: "08:00",
      durationHours: 4,
      startDate: "2026-01-01",
    });
    // Second Tuesdays: 2026-01-13, 2026-04-14, 2026-07-14.
    expect(opening(m, "2026-01-14T00:00:00Z")).toBe("2026-04-14T08:00:00.000Z");
    expect(opening(m, "2026-04-15T00:00:00Z")).toBe("2026-07-14T08:00:00.000Z");
  });
});

describe("notAllowedDates", () => {
  const m = k8s({
    schedule: { daily: {} },
    startTime: "22:00",
    durationHours: 4,
    notAllowedDates: [{ start: "2026-12-24", end: "2026-12-26" }],
  });

  it("close the window on every instant of those local dates, even mid-occurrence", () => {
    const probes = [
      "2026-12-23T22:30:00Z", // the 23rd's occurrence, before midnight: open
      "2026-12-24T00:30:00Z", // same occurrence after midnight, on a blocked date
      "2026-12-25T23:00:00Z",
      "2026-12-26T22:30:00Z",
      "2026-12-27T00:30:00Z", // tail of the 26th's occurrence, on the 27th: open
      "2026-12-27T22:30:00Z",
    ];
    expect(openOnes(open(m), probes)).toEqual([
      "2026-12-23T22:30:00Z",
      "2026-12-27T00:30:00Z",
      "2026-12-27T22:30:00Z",
    ]);
    expect(opening(m, "2026-12-24T12:00:00Z")).toBe("2026-12-27T00:00:00.000Z");
  });

  it("are local dates at the window's utcOffset", () => {
    const east = k8s({
      schedule: { daily: {} },
      startTime: "00:00",
      utcOffset: "+02:00",
      durationHours: 24,
      notAllowedDates: [{ start: "2026-12-24", end: "2026-12-24" }],
    });
    expect(
      openOnes(open(east), [
        "2026-12-23T21:59:59Z",
        "2026-12-23T22:00:00Z",
        "2026-12-24T21:59:59Z",
        "2026-12-24T22:00:00Z",
      ]),
    ).toEqual(["2026-12-23T21:59:59Z", "2026-12-24T22:00:00Z"]);
  });
});

describe("one-off windows and several windows in a scope", () => {
  it("a one-off window is open on [start, end) and never again", () => {
    const m = k8s({
      start: "2026-03-07T00:00:00Z",
      end: "2026-03-08T12:00:00+00:00",
    });
    expect(
      openOnes(open(m), [
        "2026-03-06T23:59:59Z",
        "2026-03-07T00:00:00Z",
        "2026-03-08T11:59:59Z",
        "2026-03-08T12:00:00Z",
      ]),
    ).toEqual(["2026-03-07T00:00:00Z", "2026-03-08T11:59:59Z"]);
    expect(opening(m, "2026-03-01T00:00:00Z")).toBe("2026-03-07T00:00:00.000Z");
    expect(opening(m, "2026-03-08T12:00:00Z")).toBeUndefined();
  });

  it("a scope with several windows is open when any is, and opens at the earliest", () => {
    const m = k8s([
      {
        schedule: { weekly: { dayOfWeek: "Saturday" } },
        startTime: "22:00",
        durationHours: 4,
      },
      { start: "2026-03-04T09:00:00+01:00", end: "2026-03-04T17:00:00+01:00" },
    ]);
    expect(
      openOnes(open(m), [
        "2026-03-04T08:30:00Z",
        "2026-03-04T15:59:00Z",
        "2026-03-05T08:30:00Z",
        "2026-03-07T23:00:00Z",
      ]),
    ).toEqual([
      "2026-03-04T08:30:00Z",
      "2026-03-04T15:59:00Z",
      "2026-03-07T23:00:00Z",
    ]);
    // 03:00 on Sunday 03-01 is just after the Saturday occurrence that began on 02-28.
    expect(opening(m, "2026-03-01T00:00:00Z")).toBe("2026-03-01T00:00:00.000Z");
    expect(opening(m, "2026-03-01T03:00:00Z")).toBe("2026-03-04T08:00:00.000Z");
    expect(opening(m, "2026-03-04T16:00:00Z")).toBe("2026-03-07T22:00:00.000Z");
  });

  it("windows of one scope do not open another scope", () => {
    const m = maintenance({
      nodeImage: { start: "2026-03-07T00:00:00Z", end: "2026-03-08T00:00:00Z" },
    });
    expect(isOpenAt(m, "nodeImage", at("2026-03-01T00:00:00Z"))).toBe(false);
    expect(isOpenAt(m, "kubernetes", at("2026-03-01T00:00:00Z"))).toBe(true);
    expect(isOpenAt(m, "workloads", at("2026-03-01T00:00:00Z"))).toBe(true);
  });
});
