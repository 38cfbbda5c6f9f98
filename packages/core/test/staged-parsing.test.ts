/**
 * Parsing AKS update strategies (docs/semantics.md#staged-runs, docs/semantics.md#int-or-percent):
 * the AKS JSON shape is accepted as it is, and every invalid value is rejected at submission with
 * its field path.
 */
import { describe, expect, it } from "vitest";
import type { Problem } from "../src/result.js";
import {
  isUpdateStrategyDocument,
  parseUpdateStrategy,
} from "../src/update-strategy.js";

/** The strategy sample of the AKS docs (reference 9.2), field names as the CLI/ARM use them. */
const AKS_SAMPLE = {
  stages: [
    {
      name: "stage-1",
      memberSelector: { byLabel: "env=production" },
      maxConcurrency: "4",
      maxAllowedFailures: "25%",
      afterStageWaitInSeconds: 3600,
      beforeGates: [
        { displayName: "Check staging", type: "Approval" },
        {
          type: "ScheduledStart",
          scheduledStartConfiguration: {
            startDay: "Wednesday",
            startTime: "02:00",
            utcOffset: "+00:00",
          },
        },
      ],
      afterGates: [{ displayName: "Sign off", type: "Approval" }],
      groups: [
        {
          name: "group-1",
          memberSelector: { byLabel: "tier=frontend" },
          maxConcurrency: "3",
          maxAllowedFailures: "1",
          beforeGates: [{ type: "Approval" }],
          afterGates: [],
        },
        { name: "group-2", maxConcurrency: "50%" },
      ],
    },
    { name: "stage-2", groups: [{ name: "group-3" }] },
  ],
};

function problems(raw: unknown): readonly Problem[] {
  const parsed = parseUpdateStrategy(raw);
  if (parsed.ok) throw new Error("expected the strategy to be rejected");
  return parsed.problems;
}

function paths(raw: unknown): string[] {
  return problems(raw).map((p) => p.path);
}

const withGroup = (
  group: Record<string, unknown>,
  stage: Record<string, unknown> = {},
): unknown => ({
  stages: [{ name: "s", groups: [{ name: "g", ...group }], ...stage }],
});

describe("the AKS strategy JSON is accepted as it is", () => {
  it("parses the documented sample with its gates, limits, selectors and wait", () => {
    const parsed = parseUpdateStrategy(AKS_SAMPLE);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const [s1, s2] = parsed.value.stages;
    expect(s1?.maxConcurrency).toEqual({ kind: "int", value: 4 });
    expect(s1?.maxAllowedFailures).toEqual({ kind: "percent", value: 25 });
    expect(s1?.afterStageWaitInSeconds).toBe(3600);
    expect(s1?.memberSelector?.source).toBe("env=production");
    expect(s1?.beforeGates).toEqual([
      { type: "Approval", displayName: "Check staging" },
      {
        type: "ScheduledStart",
        scheduledStartConfiguration: {
          startDay: "Wednesday",
          startMinutes: 120,
          utcOffsetMinutes: 0,
        },
      },
    ]);
    expect(
      s1?.groups?.map((g) => [
        g.name,
        g.maxConcurrency,
        g.memberSelector?.source,
      ]),
    ).toEqual([
      ["group-1", { kind: "int", value: 3 }, "tier=frontend"],
      ["group-2", { kind: "percent", value: 50 }, undefined],
    ]);
    expect(s2?.afterStageWaitInSeconds).toBe(0);
    expect(s2?.groups?.[0]?.beforeGates).toEqual([]);
  });

  it("accepts the run-shaped wrapper {strategy: {stages}} and prefixes problem paths with strategy", () => {
    expect(parseUpdateStrategy({ strategy: AKS_SAMPLE })).toEqual(
      parseUpdateStrategy(AKS_SAMPLE),
    );
    expect(isUpdateStrategyDocument({ strategy: AKS_SAMPLE })).toBe(true);
    expect(
      paths({
        strategy: {
          stages: [
            { name: "s", maxConcurrency: "0%", groups: [{ name: "g" }] },
          ],
        },
      }),
    ).toEqual(["strategy.stages[0].maxConcurrency"]);
  });

  it("reads a numeric string as the integer it spells, and a bare number the same way", () => {
    const a = parseUpdateStrategy(
      withGroup({ maxConcurrency: "10", maxAllowedFailures: 2 }),
    );
    expect(a.ok && a.value.stages[0]?.groups?.[0]).toMatchObject({
      maxConcurrency: { kind: "int", value: 10 },
      maxAllowedFailures: { kind: "int", value: 2 },
    });
  });

  it("parses ScheduledStart startTime and utcOffset into minutes (negative offsets too)", () => {
    const parsed = parseUpdateStrategy(
      withGroup({
        beforeGates: [
          {
            type: "ScheduledStart",
            scheduledStartConfiguration: {
              startDay: "friday",
              startTime: "23:30",
              utcOffset: "-05:30",
            },
          },
        ],
      }),
    );
    expect(
      parsed.ok && parsed.value.stages[0]?.groups?.[0]?.beforeGates,
    ).toEqual([
      {
        type: "ScheduledStart",
        scheduledStartConfiguration: {
          startDay: "Friday",
          startMinutes: 23 * 60 + 30,
          utcOffsetMinutes: -330,
        },
      },
    ]);
  });
});

describe("names", () => {
  it.each([
    ["Upper", "must match"],
    ["-lead", "must match"],
    ["trail-", "must match"],
    ["under_score", "must match"],
    ["", "must not be empty"],
    ["a".repeat(51), "at most 50 characters"],
  ])("rejects stage and group name %j with the field path", (name, message) => {
    const found = problems({ stages: [{ name, groups: [{ name }] }] });
    expect(found.map((p) => p.path)).toEqual(
      expect.arrayContaining(["stages[0].name", "stages[0].groups[0].name"]),
    );
    expect(
      found
        .filter((p) => p.message.includes(message))
        .map((p) => p.path)
        .sort(),
    ).toEqual(["stages[0].groups[0].name", "stages[0].name"]);
  });

  it("accepts 1- and 50-character names", () => {
    expect(
      parseUpdateStrategy({
        stages: [{ name: "a", groups: [{ name: "b".repeat(50) }] }],
      }).ok,
    ).toBe(true);
  });

  it("rejects a group name used twice across stages, pointing at both places", () => {
    const found = problems({
      stages: [
        { name: "s1", groups: [{ name: "web" }] },
        { name: "s2", groups: [{ name: "api" }, { name: "web" }] },
      ],
    });
    expect(found).toEqual([
      {
        path: "stages[1].groups[1].name",
        message: expect.stringContaining(
          "first used at stages[0].groups[0].name",
        ),
        value: "web",
      },
    ]);
  });

  it("rejects a group named like a stage without groups, whose implicit group carries the stage's name", () => {
    expect(
      problems({
        stages: [
          { name: "canary", memberSelector: { byLabel: "env=canary" } },
          { name: "prod", groups: [{ name: "canary" }] },
        ],
      }),
    ).toEqual([
      {
        path: "stages[1].groups[0].name",
        message:
          'group name clashes with the implicit group of stage "canary" (stages[0].name), which has no groups',
        value: "canary",
      },
    ]);
  });

  it("reports the cross-field rules together with schema problems, so a file is fixed in one round", () => {
    expect(
      problems({
        stages: [
          {
            name: "s1",
            maxConcurrency: "05",
            groups: [{ name: "g" }, { name: "g" }],
          },
          { name: "s2", maxConcurrency: 51, groups: [{ name: "x" }] },
        ],
      }),
    ).toEqual([
      {
        path: "stages[0].maxConcurrency",
        message: 'must not have a leading zero (write "5", not "05")',
        value: "05",
      },
      {
        path: "stages[0].groups[1].name",
        message:
          "duplicate group name (group names are unique across the strategy); first used at stages[0].groups[0].name",
        value: "g",
      },
      {
        path: "stages[1].maxConcurrency",
        message: "must be at most 50 (the stage limit)",
        value: 51,
      },
    ]);
  });

  it("rejects a stage name used twice", () => {
    expect(
      paths({
        stages: [
          { name: "s", groups: [{ name: "a" }] },
          { name: "s", groups: [{ name: "b" }] },
        ],
      }),
    ).toEqual(["stages[1].name"]);
  });
});

describe("limits of a stage", () => {
  it("accepts 50 groups in a stage and rejects 51", () => {
    const groups = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `g-${String(i)}` }));
    expect(
      parseUpdateStrategy({ stages: [{ name: "s", groups: groups(50) }] }).ok,
    ).toBe(true);
    const found = problems({ stages: [{ name: "s", groups: groups(51) }] });
    expect(found).toEqual([
      {
        path: "stages[0].groups",
        message: "a stage may have at most 50 groups",
        value: "51 groups",
      },
    ]);
  });

  it("rejects a stage maxConcurrency above 50, as a number or a numeric string, and accepts 50 and 100%", () => {
    expect(
      paths({
        stages: [{ name: "s", maxConcurrency: 51, groups: [{ name: "g" }] }],
      }),
    ).toEqual(["stages[0].maxConcurrency"]);
    expect(
      problems({
        stages: [{ name: "s", maxConcurrency: "51", groups: [{ name: "g" }] }],
      })[0]?.message,
    ).toContain("at most 50");
    expect(
      parseUpdateStrategy({
        stages: [{ name: "s", maxConcurrency: "50", groups: [{ name: "g" }] }],
      }).ok,
    ).toBe(true);
    expect(
      parseUpdateStrategy({
        stages: [
          { name: "s", maxConcurrency: "100%", groups: [{ name: "g" }] },
        ],
      }).ok,
    ).toBe(true);
  });

  it("accepts a group maxConcurrency above the stage value (clamped at resolution, see staged-concurrency)", () => {
    expect(
      parseUpdateStrategy(
        withGroup({ maxConcurrency: "80" }, { maxConcurrency: "2" }),
      ).ok,
    ).toBe(true);
  });

  it("rejects a stage with neither groups nor a memberSelector, and accepts a memberSelector alone", () => {
    expect(problems({ stages: [{ name: "s" }] })).toEqual([
      {
        path: "stages[0]",
        message:
          "a stage needs groups or a memberSelector (which forms one implicit group)",
      },
    ]);
    expect(paths({ stages: [{ name: "s", groups: [] }] })).toEqual([
      "stages[0]",
    ]);
    const implicit = parseUpdateStrategy({
      stages: [{ name: "s", memberSelector: { byLabel: "env=dev" } }],
    });
    expect(implicit.ok && implicit.value.stages[0]?.groups).toBeUndefined();
  });

  it("rejects an empty stage list", () => {
    expect(paths({ stages: [] })).toEqual(["stages"]);
  });
});

describe("int-or-percent values (docs/semantics.md#int-or-percent)", () => {
  it.each([
    ["0%", "must be a whole percentage from 1% to 100%"],
    ["101%", "must be a whole percentage from 1% to 100%"],
    ["abc", 'must be an integer or a percentage like "25%"'],
    ["05", "leading zero"],
    ["10.5", 'a fraction needs a "%" sign'],
    ["12.5%", "whole percentage"],
    ["%", "must be an integer or a percentage"],
    [0, "must be at least 1"],
    ["0", "must be at least 1"],
    [-1, "must not be negative"],
  ])(
    "rejects maxConcurrency %j at stage and group level with the field path and value",
    (value, message) => {
      const found = problems(
        withGroup({ maxConcurrency: value }, { maxConcurrency: value }),
      );
      expect(found.map((p) => p.path).sort()).toEqual([
        "stages[0].groups[0].maxConcurrency",
        "stages[0].maxConcurrency",
      ]);
      for (const p of found) {
        expect(p.message).toContain(message);
        expect(p.value).toEqual(value);
      }
    },
  );

  it.each([
    ["101%", "from 0% to 100%"],
    ["abc", "must be an integer or a percentage"],
    ["05", "leading zero"],
    [-2, "must not be negative"],
  ])("rejects maxAllowedFailures %j with the field path", (value, message) => {
    const found = problems(withGroup({ maxAllowedFailures: value }));
    expect(found).toEqual([
      {
        path: "stages[0].groups[0].maxAllowedFailures",
        message: expect.stringContaining(message),
        value,
      },
    ]);
  });

  it('accepts maxAllowedFailures "0", 0 and "0%" (fail at the first failure) and "100%"', () => {
    for (const value of ["0", 0, "0%", "100%"])
      expect(
        parseUpdateStrategy(withGroup({ maxAllowedFailures: value })).ok,
      ).toBe(true);
  });
});

describe("gates", () => {
  it("rejects a ScheduledStart gate in afterGates of a stage or a group", () => {
    const scheduled = {
      type: "ScheduledStart",
      scheduledStartConfiguration: { startDay: "Monday", startTime: "02:00" },
    };
    const found = problems(
      withGroup(
        { afterGates: [{ type: "Approval" }, scheduled] },
        { afterGates: [scheduled] },
      ),
    );
    expect(found.map((p) => [p.path, p.message])).toEqual([
      [
        "stages[0].afterGates[0].type",
        "ScheduledStart gates are allowed in beforeGates only",
      ],
      [
        "stages[0].groups[0].afterGates[1].type",
        "ScheduledStart gates are allowed in beforeGates only",
      ],
    ]);
  });

  it("rejects an unknown gate type, a bad day, time and offset, each with its path", () => {
    expect(paths(withGroup({ beforeGates: [{ type: "Manual" }] }))).toEqual([
      "stages[0].groups[0].beforeGates[0].type",
    ]);
    const found = problems(
      withGroup({
        beforeGates: [
          {
            type: "ScheduledStart",
            scheduledStartConfiguration: {
              startDay: "Funday",
              startTime: "24:00",
              utcOffset: "+15:00",
            },
          },
        ],
      }),
    );
    const at = "stages[0].groups[0].beforeGates[0].scheduledStartConfiguration";
    expect(found.map((p) => p.path)).toEqual([
      `${at}.startDay`,
      `${at}.startTime`,
      `${at}.utcOffset`,
    ]);
  });

  it("requires scheduledStartConfiguration on a ScheduledStart gate", () => {
    expect(
      paths(withGroup({ beforeGates: [{ type: "ScheduledStart" }] })),
    ).toEqual([
      "stages[0].groups[0].beforeGates[0].scheduledStartConfiguration",
    ]);
  });
});

describe("unknown fields", () => {
  it('are rejected with "did you mean" the closest known field, at every level', () => {
    const found = problems({
      stages: [
        {
          name: "s",
          maxConcurency: "2",
          afterStageWaitInSecond: 5,
          groups: [
            {
              name: "g",
              maxAllowedFailure: "1",
              memberSelector: { byLabels: "a=b" },
              beforeGates: [{ type: "Approval", displayNme: "x" }],
            },
          ],
        },
      ],
    });
    expect(found.map((p) => [p.path, p.message]).sort()).toEqual(
      [
        [
          "stages[0].maxConcurency",
          'unknown field; did you mean "maxConcurrency"?',
        ],
        [
          "stages[0].afterStageWaitInSecond",
          'unknown field; did you mean "afterStageWaitInSeconds"?',
        ],
        [
          "stages[0].groups[0].maxAllowedFailure",
          'unknown field; did you mean "maxAllowedFailures"?',
        ],
        [
          "stages[0].groups[0].memberSelector.byLabels",
          'unknown field; did you mean "byLabel"?',
        ],
        ["stages[0].groups[0].memberSelector.byLabel", "is required"],
        [
          "stages[0].groups[0].beforeGates[0].displayNme",
          'unknown field; did you mean "displayName"?',
        ],
      ].sort(),
    );
  });

  it("lists the known fields when nothing is close", () => {
    expect(
      problems({
        stages: [{ name: "s", groups: [{ name: "g" }], zzzzzzzzzz: 1 }],
      })[0]?.message,
    ).toMatch(/^unknown field \(known fields: name, /);
  });
});

describe("selectors and other fields", () => {
  it("rejects a malformed memberSelector.byLabel with the field path", () => {
    expect(
      paths(withGroup({ memberSelector: { byLabel: "env in (a,b" } })),
    ).toEqual(["stages[0].groups[0].memberSelector.byLabel"]);
  });

  it("rejects a memberSelector longer than 512 characters", () => {
    const long = `k=${"v".repeat(30)},`.repeat(20).slice(0, -1);
    expect(long.length).toBeGreaterThan(512);
    expect(paths(withGroup({ memberSelector: { byLabel: long } }))).toEqual([
      "stages[0].groups[0].memberSelector.byLabel",
    ]);
  });

  it("rejects a negative or fractional afterStageWaitInSeconds", () => {
    expect(paths(withGroup({}, { afterStageWaitInSeconds: -1 }))).toEqual([
      "stages[0].afterStageWaitInSeconds",
    ]);
    expect(paths(withGroup({}, { afterStageWaitInSeconds: 1.5 }))).toEqual([
      "stages[0].afterStageWaitInSeconds",
    ]);
  });
});
