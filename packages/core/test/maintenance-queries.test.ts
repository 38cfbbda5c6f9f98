import { describe, expect, it } from "vitest";
import {
  OPENS_SOON_MS,
  describeWindows,
  hasConstraints,
  isOpenAt,
  nextChangeAfter,
  nextOpening,
  windowCategory,
} from "../src/maintenance/windows.js";
import { at, maintenance, openOnes } from "./maintenance-helpers.js";

const iso = (ms: number | undefined): string | undefined =>
  ms === undefined ? undefined : new Date(ms).toISOString();
const saturdayNight = {
  schedule: { weekly: { dayOfWeek: "Saturday" } },
  startTime: "22:00",
  durationHours: 4,
};

describe("freezes", () => {
  it("with dates cover local midnight of start through the end of the end date", () => {
    const m = maintenance({
      freezes: [
        {
          start: "2026-12-20",
          end: "2027-01-02",
          utcOffset: "+01:00",
          reason: "holidays",
        },
      ],
    });
    const probes = [
      "2026-12-19T22:59:59.999Z",
      "2026-12-19T23:00:00Z",
      "2027-01-02T22:59:59.999Z",
      "2027-01-02T23:00:00Z",
    ];
    expect(openOnes((t) => isOpenAt(m, "kubernetes", t), probes)).toEqual([
      "2026-12-19T22:59:59.999Z",
      "2027-01-02T23:00:00Z",
    ]);
  });

  it("with timestamps cover [start, end)", () => {
    const m = maintenance({
      freezes: [
        { start: "2026-03-02T08:00:00Z", end: "2026-03-02T18:00:00+02:00" },
      ],
    });
    const probes = [
      "2026-03-02T07:59:59Z",
      "2026-03-02T08:00:00Z",
      "2026-03-02T15:59:59Z",
      "2026-03-02T16:00:00Z",
    ];
    expect(openOnes((t) => isOpenAt(m, "workloads", t), probes)).toEqual([
      "2026-03-02T07:59:59Z",
      "2026-03-02T16:00:00Z",
    ]);
  });

  it("apply to all three scopes unless scopes are listed", () => {
    const t = at("2026-03-02T12:00:00Z");
    const all = maintenance({
      freezes: [{ start: "2026-03-02", end: "2026-03-02" }],
    });
    expect([
      isOpenAt(all, "kubernetes", t),
      isOpenAt(all, "nodeImage", t),
      isOpenAt(all, "workloads", t),
    ]).toEqual([false, false, false]);
    const some = maintenance({
      freezes: [
        { start: "2026-03-02", end: "2026-03-02", scopes: ["kubernetes"] },
      ],
    });
    expect([
      isOpenAt(some, "kubernetes", t),
      isOpenAt(some, "nodeImage", t),
      isOpenAt(some, "workloads", t),
    ]).toEqual([false, true, true]);
  });

  it("close a scope even while one of its windows is open", () => {
    const m = maintenance({
      kubernetes: saturdayNight,
      freezes: [{ start: "2026-03-07", end: "2026-03-07" }],
    });
    expect(isOpenAt(m, "kubernetes", at("2026-03-07T23:00:00Z"))).toBe(false);
    // The occurrence's tail on Sunday is no longer frozen.
    expect(isOpenAt(m, "kubernetes", at("2026-03-08T01:00:00Z"))).toBe(true);
  });

  it("push nextOpening past every frozen occurrence", () => {
    // The freeze ends mid-occurrence: the scope opens at the freeze's end.
    const m = maintenance({
      kubernetes: saturdayNight,
      freezes: [{ start: "2026-03-07", end: "2026-03-14" }],
    });
    expect(iso(nextOpening(m, "kubernetes", at("2026-03-02T00:00:00Z")))).toBe(
      "2026-03-15T00:00:00.000Z",
    );
    const longer = maintenance({
      kubernetes: saturdayNight,
      freezes: [{ start: "2026-03-07", end: "2026-03-15" }],
    });
    expect(
      iso(nextOpening(longer, "kubernetes", at("2026-03-02T00:00:00Z"))),
    ).toBe("2026-03-21T22:00:00.000Z");
    const whole = maintenance({
      kubernetes: saturdayNight,
      freezes: [{ start: "2026-03-07", end: "2026-03-08" }],
    });
    expect(
      iso(nextOpening(whole, "kubernetes", at("2026-03-02T00:00:00Z"))),
    ).toBe("2026-03-14T22:00:00.000Z");
  });

  it("that overlap or touch hold the scope closed until the last one ends", () => {
    const m = maintenance({
      freezes: [
        { start: "2026-03-02T00:00:00Z", end: "2026-03-03T00:00:00Z" },
        { start: "2026-03-02T12:00:00Z", end: "2026-03-04T00:00:00Z" },
        { start: "2026-03-04T00:00:00Z", end: "2026-03-05T00:00:00Z" },
      ],
    });
    expect(iso(nextOpening(m, "nodeImage", at("2026-03-02T01:00:00Z")))).toBe(
      "2026-03-05T00:00:00.000Z",
    );
    expect(
      iso(nextChangeAfter(m, "nodeImage", at("2026-03-01T00:00:00Z"))),
    ).toBe("2026-03-02T00:00:00.000Z");
  });
});

describe("nextOpening and nextChangeAfter", () => {
  const m = maintenance({ kubernetes: saturdayNight });

  it("nextOpening returns tMs itself when the scope is open then", () => {
    const t = at("2026-03-07T23:15:00.123Z");
    expect(nextOpening(m, "kubernetes", t)).toBe(t);
    expect(nextOpening(undefined, "kubernetes", t)).toBe(t);
    expect(nextOpening(m, "workloads", t)).toBe(t);
  });

  it("nextOpening returns the next occurrence start when closed", () => {
    expect(iso(nextOpening(m, "kubernetes", at("2026-03-08T02:00:00Z")))).toBe(
      "2026-03-14T22:00:00.000Z",
    );
  });

  it("nextOpening is undefined when nothing opens within the three-year horizon", () => {
    // Every 12 months from February on the 30th: February never has one.
    const never = maintenance({
      kubernetes: {
        schedule: { absoluteMonthly: { intervalMonths: 12, dayOfMonth: 30 } },
        startTime: "00:00",
        durationHours: 4,
        startDate: "2026-02-01",
      },
    });
    expect(
      nextOpening(never, "kubernetes", at("2026-03-01T00:00:00Z")),
    ).toBeUndefined();
    const far = maintenance({
      kubernetes: {
        start: "2030-01-01T00:00:00Z",
        end: "2030-01-02T00:00:00Z",
      },
    });
    expect(
      nextOpening(far, "kubernetes", at("2026-03-01T00:00:00Z")),
    ).toBeUndefined();
    expect(
      iso(nextOpening(far, "kubernetes", at("2027-03-01T00:00:00Z"))),
    ).toBe("2030-01-01T00:00:00.000Z");
  });

  it("nextChangeAfter returns the closing when open and the opening when closed", () => {
    expect(
      iso(nextChangeAfter(m, "kubernetes", at("2026-03-07T23:00:00Z"))),
    ).toBe("2026-03-08T02:00:00.000Z");
    expect(
      iso(nextChangeAfter(m, "kubernetes", at("2026-03-08T02:00:00Z"))),
    ).toBe("2026-03-14T22:00:00.000Z");
    // Strictly after tMs, even at a boundary.
    expect(
      iso(nextChangeAfter(m, "kubernetes", at("2026-03-14T22:00:00Z"))),
    ).toBe("2026-03-15T02:00:00.000Z");
  });

  it("nextChangeAfter skips boundaries that do not change the scope's openness", () => {
    const overlapping = maintenance({
      workloads: [
        { start: "2026-03-02T10:00:00Z", end: "2026-03-02T14:00:00Z" },
        { start: "2026-03-02T12:00:00Z", end: "2026-03-02T16:00:00Z" },
        { start: "2026-03-02T16:00:00Z", end: "2026-03-02T18:00:00Z" },
      ],
    });
    expect(
      iso(
        nextChangeAfter(overlapping, "workloads", at("2026-03-02T11:00:00Z")),
      ),
    ).toBe("2026-03-02T18:00:00.000Z");
    expect(
      nextChangeAfter(overlapping, "workloads", at("2026-03-02T18:00:00Z")),
    ).toBeUndefined();
  });

  it("nextChangeAfter is undefined for an unconstrained scope", () => {
    expect(nextChangeAfter(undefined, "kubernetes", 0)).toBeUndefined();
    expect(nextChangeAfter(m, "nodeImage", 0)).toBeUndefined();
  });
});

describe("windowCategory", () => {
  const m = maintenance({ kubernetes: saturdayNight });
  const opensAt = at("2026-03-07T22:00:00Z");

  it("is open while a window is open", () => {
    expect(windowCategory(m, "kubernetes", opensAt)).toBe("open");
  });

  it("is opensSoon up to exactly 4 hours before an opening and closed 1 ms earlier", () => {
    expect(OPENS_SOON_MS).toBe(4 * 3600 * 1000);
    expect(windowCategory(m, "kubernetes", opensAt - OPENS_SOON_MS)).toBe(
      "opensSoon",
    );
    expect(windowCategory(m, "kubernetes", opensAt - OPENS_SOON_MS - 1)).toBe(
      "closed",
    );
    expect(windowCategory(m, "kubernetes", opensAt - 1)).toBe("opensSoon");
  });

  it("is none when the scope has no windows and no freeze covers tMs", () => {
    expect(windowCategory(undefined, "kubernetes", opensAt)).toBe("none");
    expect(windowCategory(m, "workloads", opensAt)).toBe("none");
    const later = maintenance({
      freezes: [{ start: "2026-03-08", end: "2026-03-09" }],
    });
    expect(windowCategory(later, "workloads", at("2026-03-07T23:00:00Z"))).toBe(
      "none",
    );
  });

  it("treats a frozen scope without windows as closed, or opensSoon when the freeze ends within 4 hours", () => {
    const frozen = maintenance({
      freezes: [{ start: "2026-03-02T00:00:00Z", end: "2026-03-02T12:00:00Z" }],
    });
    expect(
      windowCategory(frozen, "workloads", at("2026-03-02T07:59:59.999Z")),
    ).toBe("closed");
    expect(
      windowCategory(frozen, "workloads", at("2026-03-02T08:00:00Z")),
    ).toBe("opensSoon");
  });
});

describe("hasConstraints", () => {
  it("is true only for scopes with windows or a freeze touching them", () => {
    const m = maintenance({
      kubernetes: saturdayNight,
      freezes: [
        { start: "2020-01-01", end: "2020-01-02", scopes: ["nodeImage"] },
      ],
    });
    expect(hasConstraints(undefined, "kubernetes")).toBe(false);
    expect(hasConstraints(m, "kubernetes")).toBe(true);
    expect(hasConstraints(m, "nodeImage")).toBe(true);
    expect(hasConstraints(m, "workloads")).toBe(false);
  });
});

describe("describeWindows", () => {
  it("names schedule, local start, offset and duration, one-offs as UTC intervals, and freezes", () => {
    const m = maintenance({
      kubernetes: { ...saturdayNight, utcOffset: "+02:00" },
      nodeImage: [
        { start: "2026-03-07T00:00:00Z", end: "2026-03-08T12:00:00Z" },
        {
          schedule: {
            relativeMonthly: {
              intervalMonths: 2,
              weekIndex: "last",
              dayOfWeek: "friday",
            },
          },
          startTime: "01:30",
          utcOffset: "-08:00",
          durationHours: 6,
          startDate: "2026-01-01",
          notAllowedDates: [{ start: "2026-12-24", end: "2026-12-26" }],
        },
      ],
      freezes: [
        {
          start: "2026-12-20",
          end: "2027-01-02",
          scopes: ["nodeImage"],
          reason: "holidays",
          utcOffset: "+01:00",
        },
      ],
    });
    expect(describeWindows(m, "kubernetes")).toBe(
      "Weekly Saturday 22:00 +02:00 for 4h",
    );
    expect(describeWindows(m, "nodeImage")).toBe(
      "2026-03-07T00:00Z–2026-03-08T12:00Z; Every 2 months on the last Friday 01:30 -08:00 for 6h from 2026-01-01 except 2026-12-24–2026-12-26; frozen 2026-12-19T23:00Z–2027-01-02T23:00Z (holidays)",
    );
    expect(describeWindows(m, "workloads")).toBe("any time");
    expect(describeWindows(undefined, "workloads")).toBe("any time");
  });
});
