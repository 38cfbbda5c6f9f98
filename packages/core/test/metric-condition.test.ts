// The condition language of metric gates (docs/engine.md#metric-gates): what parses, what
// is refused with a reason, and what an evaluation gives, including every inconclusive case.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  evaluateCondition,
  MAX_CONDITION_LENGTH,
  MAX_DEPTH,
  parseCondition,
  type Condition,
} from "../src/metrics/condition.js";

function parsed(text: string): Condition {
  const result = parseCondition(text, "gate.successCondition");
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

function refusal(text: unknown): string {
  const result = parseCondition(text, "gate.successCondition");
  if (result.ok) throw new Error(`${String(text)} parsed`);
  expect(result.problems).toHaveLength(1);
  expect(result.problems[0]?.path).toBe("gate.successCondition");
  expect(result.problems[0]?.value).toBe(text);
  return result.problems[0]?.message ?? "";
}

const on = (text: string, values: number[]) =>
  evaluateCondition(parsed(text), values);

describe("parsing conditions", () => {
  it("reads comparisons, logic, arithmetic, aggregates and parentheses with the usual precedence", () => {
    expect(on("result[0] < 0.01", [0.005])).toEqual({ ok: true, value: true });
    expect(on("result[0] < 0.01", [0.02])).toEqual({ ok: true, value: false });
    expect(on("result[0] >= 1e-3 && result[1] != 2", [0.001, 3])).toEqual({
      ok: true,
      value: true,
    });
    // && binds tighter than ||; * before +; unary minus.
    expect(on("false && false || true", [])).toEqual({ ok: true, value: true });
    expect(on("1 + 2 * 3 == 7", [])).toEqual({ ok: true, value: true });
    expect(on("(1 + 2) * 3 == 9", [])).toEqual({ ok: true, value: true });
    expect(on("-result[0] > -1", [0.5])).toEqual({ ok: true, value: true });
    expect(on("!(result[0] > 1)", [0.5])).toEqual({ ok: true, value: true });
    expect(
      on("len(result) == 3 && max(result) < 5 && min(result) > 0", [1, 2, 4]),
    ).toEqual({ ok: true, value: true });
    expect(on("sum(result) / len(result) == avg(result)", [1, 2, 6])).toEqual({
      ok: true,
      value: true,
    });
    expect(on(".5 <= result[0]", [0.5])).toEqual({ ok: true, value: true });
  });

  it("refuses what it cannot read, naming where", () => {
    expect(refusal("")).toBe("must not be empty");
    expect(refusal(42)).toBe("must be a string");
    expect(refusal("result[0] <")).toBe("ends too early");
    expect(refusal("result[0] < 0.01 )")).toBe('unexpected ")" at 17');
    expect(refusal("result < 1")).toContain("name one (result[0])");
    expect(refusal("result[-1] < 1")).toContain(
      "result[...] takes a whole number",
    );
    expect(refusal("result[1.5] < 1")).toContain(
      "result[...] takes a whole number",
    );
    expect(refusal("result[0] ~ 1")).toBe('unexpected character "~" at 10');
    expect(refusal("errors < 1")).toContain('unknown name "errors" at 0');
    expect(refusal("max(1) < 1")).toBe('max(...) takes result, not "1" at 4');
    expect(refusal("process.exit() < 1")).toBe('unexpected character "." at 7');
    expect(refusal("constructor < 1")).toContain('unknown name "constructor"');
    expect(refusal("result[0]")).toContain("is a number, not a condition");
    expect(refusal("result[0] < 1 + true")).toBe('"+" takes numbers');
    expect(refusal("result[0] && true")).toContain('"&&" takes true/false');
    expect(refusal("(result[0] < 1) < 2")).toBe('"<" takes numbers');
    expect(refusal("1e999 < 2")).toBe('number "1e999" is too large');
    expect(refusal(`${"(".repeat(40)}true${")".repeat(40)}`)).toBe(
      `nests deeper than ${String(MAX_DEPTH)} levels`,
    );
    expect(refusal(`true${" ".repeat(MAX_CONDITION_LENGTH)}`)).toContain(
      "is longer than",
    );
  });

  it("never throws, whatever the text", () => {
    const alphabet = fc.constantFrom(
      ..."result[]()0123456789.e+-*/<>=!&|lenminmaxsumavg truefalse ".split(""),
    );
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 80 }), (text) => {
        const result = parseCondition(text, "c");
        if (result.ok) {
          const outcome = evaluateCondition(result.value, [0.5, Number.NaN]);
          expect(typeof outcome.ok).toBe("boolean");
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("evaluating conditions", () => {
  it("is inconclusive, with the reason, where a value is missing or not a number", () => {
    expect(on("result[1] < 1", [0.1])).toEqual({
      ok: false,
      reason: "result has 1 value: result[1] does not exist",
    });
    expect(on("result[0] < 1", [Number.NaN])).toEqual({
      ok: false,
      reason: "result[0] is NaN",
    });
    expect(on("result[0] < 1", [Number.POSITIVE_INFINITY])).toEqual({
      ok: false,
      reason: "result[0] is +Inf",
    });
    expect(on("max(result) < 1", [0.1, Number.NaN])).toEqual({
      ok: false,
      reason: "result[1] is NaN",
    });
    expect(on("avg(result) < 1", [])).toEqual({
      ok: false,
      reason: "avg(result) of an empty result",
    });
    expect(on("result[0] / 0 < 1", [1])).toEqual({
      ok: false,
      reason: "division by zero",
    });
    // An error on one side of || is not hidden by the other side being true.
    expect(on("true || result[3] < 1", [1])).toEqual({
      ok: false,
      reason: "result has 1 value: result[3] does not exist",
    });
    expect(on("len(result) == 0", [])).toEqual({ ok: true, value: true });
  });
});
