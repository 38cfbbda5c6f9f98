import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseClusters } from "../src/cluster.js";
import {
  maintenanceField,
  parseMaintenance,
} from "../src/maintenance/windows.js";
import { formatProblem, type Problem } from "../src/result.js";
import { parseWith } from "../src/schema.js";
import { at } from "./maintenance-helpers.js";

function problems(raw: unknown): Problem[] {
  const parsed = parseMaintenance(raw);
  if (parsed.ok) throw new Error("expected problems");
  return [...parsed.problems];
}
const lines = (raw: unknown): string[] => problems(raw).map(formatProblem);
const weekly = {
  schedule: { weekly: { dayOfWeek: "Saturday" } },
  startTime: "22:00",
  durationHours: 4,
};

describe("parsing maintenance", () => {
  it("normalises every window kind and freeze into plain JSON data with defaults filled in", () => {
    const parsed = parseMaintenance({
      kubernetes: {
        schedule: { weekly: { dayOfWeek: "saturday" } },
        startTime: "22:00",
        utcOffset: "+02:00",
        durationHours: 4,
      },
      nodeImage: [
        {
          schedule: { daily: null },
          startTime: "03:00",
          utcOffset: "-00:00",
          durationHours: 6,
          notAllowedDates: [{ start: "2026-12-24", end: "2026-12-26" }],
        },
        {
          schedule: {
            relativeMonthly: {
              intervalMonths: 2,
              weekIndex: "LAST",
              dayOfWeek: "Monday",
            },
          },
          startTime: "00:00",
          durationHours: 24,
          startDate: "2026-01-05",
        },
      ],
      workloads: {
        start: "2026-03-07T00:00:00Z",
        end: "2026-03-08T12:00:00+02:00",
      },
      freezes: [
        {
          start: "2026-12-20",
          end: "2027-01-02",
          scopes: ["kubernetes", "nodeImage"],
          reason: "holidays",
          utcOffset: "+01:00",
        },
        { start: "2026-06-01T00:00:00Z", end: "2026-06-02T00:00:00Z" },
      ],
    });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value).toEqual({
      windows: {
        kubernetes: [
          {
            type: "Recurring",
            schedule: {
              type: "Weekly",
              intervalWeeks: 1,
              dayOfWeek: "Saturday",
            },
            startTime: "22:00",
            utcOffset: "+02:00",
            durationHours: 4,
            notAllowedDates: [],
          },
        ],
        nodeImage: [
          {
            type: "Recurring",
            schedule: { type: "Daily", intervalDays: 1 },
            startTime: "03:00",
            utcOffset: "+00:00",
            durationHours: 6,
            notAllowedDates: [{ start: "2026-12-24", end: "2026-12-26" }],
          },
          {
            type: "Recurring",
            schedule: {
              type: "RelativeMonthly",
              intervalMonths: 2,
              weekIndex: "Last",
              dayOfWeek: "Monday",
            },
            startTime: "00:00",
            utcOffset: "+00:00",
            durationHours: 24,
            startDate: "2026-01-05",
            notAllowedDates: [],
          },
        ],
        workloads: [
          {
            type: "OneOff",
            startMs: at("2026-03-07T00:00:00Z"),
            endMs: at("2026-03-08T10:00:00Z"),
          },
        ],
      },
      freezes: [
        {
          startMs: at("2026-12-19T23:00:00Z"),
          endMs: at("2027-01-02T23:00:00Z"),
          scopes: ["kubernetes", "nodeImage"],
          reason: "holidays",
        },
        {
          startMs: at("2026-06-01T00:00:00Z"),
          endMs: at("2026-06-02T00:00:00Z"),
          scopes: ["kubernetes", "nodeImage", "workloads"],
        },
      ],
    });
    expect(JSON.parse(JSON.stringify(parsed.value))).toEqual(parsed.value);
  });

  it("gives every scope an empty list when the block is empty", () => {
    expect(parseMaintenance({})).toEqual({
      ok: true,
      value: {
        windows: { kubernetes: [], nodeImage: [], workloads: [] },
        freezes: [],
      },
    });
  });

  it("reports a bad startTime with its path and value", () => {
    expect(lines({ kubernetes: { ...weekly, startTime: "25:00" } })).toEqual([
      'maintenance.kubernetes.startTime: must be HH:MM from 00:00 to 23:59 (got "25:00")',
    ]);
  });

  it("reports unknown fields with a suggestion, at every level", () => {
    expect(
      lines({ kubernetes: { ...weekly, durationHour: 4 }, nodeimage: weekly }),
    ).toEqual([
      'maintenance.kubernetes.durationHour: unknown field; did you mean "durationHours"?',
      'maintenance.nodeimage: unknown field; did you mean "nodeImage"?',
    ]);
    expect(
      lines({
        kubernetes: {
          ...weekly,
          schedule: { weekly: { dayOfWeek: "Monday", intervalWeek: 2 } },
        },
      })[0],
    ).toBe(
      'maintenance.kubernetes.schedule.weekly.intervalWeek: unknown field; did you mean "intervalWeeks"?',
    );
  });

  it("rejects a schedule that sets two kinds, or none", () => {
    const two = problems({
      kubernetes: {
        ...weekly,
        schedule: { daily: {}, weekly: { dayOfWeek: "Monday" } },
      },
    });
    expect(two.map((p) => [p.path, p.message])).toEqual([
      [
        "maintenance.kubernetes.schedule",
        "must set exactly one of daily, weekly, absoluteMonthly, relativeMonthly, not daily and weekly",
      ],
    ]);
    expect(lines({ kubernetes: { ...weekly, schedule: {} } })[0]).toMatch(
      /^maintenance\.kubernetes\.schedule: must set one of daily/,
    );
  });

  it("requires startDate when an interval is above 1, because it anchors the interval", () => {
    expect(
      lines({
        kubernetes: {
          ...weekly,
          schedule: { weekly: { intervalWeeks: 2, dayOfWeek: "Monday" } },
        },
      }),
    ).toEqual([
      "maintenance.kubernetes.startDate: is required when schedule.weekly.intervalWeeks is more than 1: it anchors the interval",
    ]);
  });

  it("rejects offsets outside -14:00..+14:00 or not written ±HH:MM", () => {
    const bad = ["+15:00", "0200", "+2:00", "+02:60", "UTC"];
    for (const utcOffset of bad) {
      expect(problems({ kubernetes: { ...weekly, utcOffset } })).toEqual([
        {
          path: "maintenance.kubernetes.utcOffset",
          message: 'must be ±HH:MM from -14:00 to +14:00, e.g. "+02:00"',
          value: utcOffset,
        },
      ]);
    }
    expect(
      parseMaintenance({ kubernetes: { ...weekly, utcOffset: "-14:00" } }).ok,
    ).toBe(true);
  });

  it("rejects out-of-range numbers, unknown day names and nonexistent dates", () => {
    expect(
      lines({
        kubernetes: [
          { ...weekly, durationHours: 25 },
          {
            ...weekly,
            schedule: {
              absoluteMonthly: { dayOfMonth: 32, intervalMonths: 0 },
            },
            startDate: "2026-02-30",
          },
          {
            ...weekly,
            schedule: {
              relativeMonthly: { weekIndex: "Fifth", dayOfWeek: "Funday" },
            },
          },
        ],
      }),
    ).toEqual([
      "maintenance.kubernetes[0].durationHours: must be a whole number from 1 to 24 (got 25)",
      "maintenance.kubernetes[1].schedule.absoluteMonthly.intervalMonths: must be a whole number of at least 1 (got 0)",
      "maintenance.kubernetes[1].schedule.absoluteMonthly.dayOfMonth: must be a whole number from 1 to 31 (got 32)",
      'maintenance.kubernetes[1].startDate: must be a date YYYY-MM-DD (got "2026-02-30")',
      'maintenance.kubernetes[2].schedule.relativeMonthly.weekIndex: must be one of "First", "Second", "Third", "Fourth", "Last" (got "Fifth")',
      'maintenance.kubernetes[2].schedule.relativeMonthly.dayOfWeek: must be a day name from "Monday" to "Sunday" (got "Funday")',
    ]);
  });

  it("reports missing required fields of a recurring window", () => {
    expect(lines({ workloads: { schedule: { weekly: {} } } })).toEqual([
      "maintenance.workloads.schedule.weekly.dayOfWeek: is required",
      "maintenance.workloads.startTime: is required",
      "maintenance.workloads.durationHours: is required",
    ]);
  });

  it("rejects one-off windows that end before they start or lack an offset", () => {
    expect(
      lines({
        workloads: [
          weekly,
          { start: "2026-03-08T00:00:00Z", end: "2026-03-07T00:00:00Z" },
          { start: "2026-03-07T00:00:00", end: "2026-03-08T00:00:00Z" },
        ],
      }),
    ).toEqual([
      'maintenance.workloads[1].end: must be after start 2026-03-08T00:00:00Z (got "2026-03-07T00:00:00Z")',
      'maintenance.workloads[2].start: must be an RFC 3339 timestamp with Z or an offset, e.g. "2026-03-07T00:00:00Z" (got "2026-03-07T00:00:00")',
    ]);
  });

  it("rejects a window that mixes one-off and recurring fields", () => {
    expect(
      problems({ workloads: { ...weekly, start: "2026-03-07T00:00:00Z" } }).map(
        (p) => [p.path, p.message],
      ),
    ).toEqual([
      [
        "maintenance.workloads",
        "must be either a one-off window {start, end} or a recurring one, not both (remove start/end or schedule, startTime, durationHours)",
      ],
    ]);
  });

  it("rejects freezes that end before they start, name unknown scopes, or list none", () => {
    expect(
      lines({
        freezes: [
          { start: "2026-12-20", end: "2026-12-19" },
          {
            start: "2026-12-20",
            end: "2026-12-21",
            scopes: ["kubernetes", "nodeimages"],
          },
          { start: "2026-12-20", end: "2026-12-21", scopes: [] },
        ],
      }),
    ).toEqual([
      'maintenance.freezes[0].end: must not be before start 2026-12-20 (got "2026-12-19")',
      'maintenance.freezes[1].scopes[1]: must be one of "kubernetes", "nodeImage", "workloads" (got "nodeimages")',
      "maintenance.freezes[2].scopes: must list at least one scope (leave it out to freeze all) (got [])",
    ]);
  });

  it("accepts a one-day freeze whose start and end are the same date", () => {
    const parsed = parseMaintenance({
      freezes: [{ start: "2026-12-25", end: "2026-12-25" }],
    });
    expect(parsed.ok && parsed.value.freezes[0]).toMatchObject({
      startMs: at("2026-12-25T00:00:00Z"),
      endMs: at("2026-12-26T00:00:00Z"),
    });
  });

  it("returns every problem of a block at once", () => {
    const found = problems({
      kubernetes: { ...weekly, startTime: "7pm", utcOffset: "+25:00" },
      nodeImage: { start: "soon", end: "later" },
      freezes: [{ start: "2026-12-20" }],
    });
    expect(found.map((p) => p.path)).toEqual([
      "maintenance.kubernetes.startTime",
      "maintenance.kubernetes.utcOffset",
      "maintenance.nodeImage.start",
      "maintenance.nodeImage.end",
      "maintenance.freezes[0].end",
    ]);
  });

  it("composes into a larger zod schema and into the clusters file with full paths", () => {
    const wrapped = parseWith(z.object({ maintenance: maintenanceField }), {
      maintenance: { kubernetes: { ...weekly, startTime: "25:00" } },
    });
    expect(wrapped).toEqual({
      ok: false,
      problems: [
        {
          path: "maintenance.kubernetes.startTime",
          message: "must be HH:MM from 00:00 to 23:59",
          value: "25:00",
        },
      ],
    });
    const clusters = parseClusters([
      {
        name: "c-1",
        maintenance: { workloads: { ...weekly, durationHours: 0 } },
      },
    ]);
    expect(clusters.ok ? [] : clusters.problems.map(formatProblem)).toEqual([
      "[0].maintenance.workloads.durationHours: must be a whole number from 1 to 24 (got 0)",
    ]);
    const good = parseClusters([
      { name: "c-1", maintenance: { workloads: weekly } },
    ]);
    expect(
      good.ok && good.value[0]?.maintenance?.windows.workloads,
    ).toHaveLength(1);
  });
});
