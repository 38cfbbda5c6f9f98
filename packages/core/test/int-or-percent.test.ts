import { describe, expect, it } from "vitest";
import {
  concurrency,
  failureBudget,
  fleetLimit,
  intOrPercentToString,
  parseIntOrPercent,
  type IntOrPercent,
  type IntOrPercentRule,
} from "../src/int-or-percent.js";

const int = (value: number): IntOrPercent => ({ kind: "int", value });
const pct = (value: number): IntOrPercent => ({ kind: "percent", value });

function parsed(
  raw: unknown,
  rule: IntOrPercentRule = "fleetLimit",
): IntOrPercent {
  const result = parseIntOrPercent(raw, "f", rule);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

function rejection(
  raw: unknown,
  rule: IntOrPercentRule = "fleetLimit",
): string {
  const result = parseIntOrPercent(raw, "spec.maxUnavailable", rule);
  if (result.ok) throw new Error(`accepted ${JSON.stringify(raw)}`);
  expect(result.problems).toHaveLength(1);
  expect(result.problems[0]?.path).toBe("spec.maxUnavailable");
  expect(result.problems[0]?.value).toEqual(raw);
  return result.problems[0]?.message ?? "";
}

describe("fleetLimit (docs/semantics.md#int-or-percent rule 1, Rancher Fleet's limit)", () => {
  it.each([
    ["0%", 10, 1],
    ["10%", 5, 1],
    ["25%", 230, 57],
    ["18.4%", 375, 68],
    ["150%", 10, 10],
    ["49%", 10, 4],
    ["12.5%", 230, 28],
    ["10%", 200, 20],
    ["100%", 200, 200],
  ] as const)("%s of %i is %i", (raw, count, expected) => {
    expect(fleetLimit(count, parsed(raw))).toBe(expected);
  });

  it("keeps integer 0 at 0 (no minimum of 1 for integers)", () => {
    expect(fleetLimit(10, parsed(0))).toBe(0);
    expect(fleetLimit(10, parsed("0"))).toBe(0);
  });

  it("clamps an integer larger than the count to the count", () => {
    expect(fleetLimit(10, int(15))).toBe(10);
  });

  it("gives 1 for a count of 0 or less, whatever the value", () => {
    expect(fleetLimit(0, int(0))).toBe(1);
    expect(fleetLimit(0, pct(50))).toBe(1);
    expect(fleetLimit(-3, int(5))).toBe(1);
  });

  it('truncates the float product first: "18.4%" of 375 is 68, not 69', () => {
    // 375 × 18.4 is 6899.999… in float64, as in Go.
    expect(375 * 18.4).toBeLessThan(6900);
    expect(fleetLimit(375, pct(18.4))).toBe(68);
  });

  it('reads a numeric string without "%" as the integer it spells', () => {
    expect(parsed("10")).toEqual(int(10));
    expect(fleetLimit(50, parsed("10"))).toBe(10);
  });
});

describe("concurrency (docs/semantics.md#int-or-percent rule 2: floor, at least 1)", () => {
  it.each([
    [int(3), 10, 3],
    [int(7), 2, 7],
    [pct(50), 5, 2],
    [pct(25), 10, 2],
    [pct(1), 10, 1],
    [pct(100), 7, 7],
    [pct(33), 3, 1],
  ] as const)("%o of %i is %i", (value, count, expected) => {
    expect(concurrency(count, value)).toBe(expected);
  });

  it('rejects 0, "0%" and percentages above 100%', () => {
    expect(rejection(0, "concurrency")).toMatch(/at least 1/);
    expect(rejection("0", "concurrency")).toMatch(/at least 1/);
    expect(rejection("0%", "concurrency")).toMatch(/1% to 100%/);
    expect(rejection("101%", "concurrency")).toMatch(/1% to 100%/);
    expect(rejection("12.5%", "concurrency")).toMatch(/whole percentage/);
  });

  it('accepts "100%" and "1%"', () => {
    expect(parsed("100%", "concurrency")).toEqual(pct(100));
    expect(parsed("1%", "concurrency")).toEqual(pct(1));
  });
});

describe("failureBudget (docs/semantics.md#int-or-percent rule 3: ceil)", () => {
  it.each([
    [5, 2],
    [7, 2],
    [12, 3],
    [19, 5],
    [4, 1],
  ])('"25%%" of %i is %i', (count, expected) => {
    expect(failureBudget(count, parsed("25%", "failureBudget"))).toBe(expected);
  });

  it("takes integers as given, including 0", () => {
    expect(failureBudget(10, parsed(0, "failureBudget"))).toBe(0);
    expect(failureBudget(3, parsed(4, "failureBudget"))).toBe(4);
  });

  it('gives 0 for "0%" and the whole count for "100%"', () => {
    expect(failureBudget(9, pct(0))).toBe(0);
    expect(failureBudget(9, pct(100))).toBe(9);
  });

  it("rejects fractional and above-100 percentages", () => {
    expect(rejection("12.5%", "failureBudget")).toMatch(/whole percentage/);
    expect(rejection("101%", "failureBudget")).toMatch(/0% to 100%/);
  });
});

describe("parseIntOrPercent shapes", () => {
  it.each([
    "abc",
    "%",
    "10.5",
    "05",
    10.5,
    "1e3",
    "",
    null,
    true,
    {},
    "10 %",
    "+5",
  ])("rejects %o for every rule", (raw) => {
    for (const rule of ["fleetLimit", "concurrency", "failureBudget"] as const)
      rejection(raw, rule);
  });

  it("explains the common mistakes", () => {
    expect(rejection("05")).toMatch(/leading zero/);
    expect(rejection("10.5")).toMatch(/needs a "%"/);
    expect(rejection("abc")).toMatch(/integer or a percentage/);
  });

  it("refuses negative values for maxConcurrency and maxAllowedFailures only", () => {
    for (const rule of ["concurrency", "failureBudget"] as const) {
      expect(rejection("-5", rule)).toBe("must not be negative");
      expect(rejection(-5, rule)).toBe("must not be negative");
      expect(rejection("-5%", rule)).toBe("must not be negative");
    }
    expect(parsed(-5)).toEqual(int(-5));
    expect(parsed("-5%")).toEqual(pct(-5));
  });

  it("accepts integers, integer strings and percentages (fractional for fleetLimit)", () => {
    expect(parsed(7)).toEqual(int(7));
    expect(parsed("7")).toEqual(int(7));
    expect(parsed("25%")).toEqual(pct(25));
    expect(parsed("18.4%")).toEqual(pct(18.4));
    expect(parsed("0%")).toEqual(pct(0));
  });

  it("renders values back to their canonical text", () => {
    expect(intOrPercentToString(int(5))).toBe("5");
    expect(intOrPercentToString(pct(12.5))).toBe("12.5%");
  });
});
