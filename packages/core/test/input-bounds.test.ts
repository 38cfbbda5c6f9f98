import { describe, expect, it } from "vitest";
import {
  boundsProblems,
  MAX_NESTING_DEPTH,
  parseJsonText,
} from "../src/input-bounds.js";

/** `depth` arrays, one inside the other, built without recursion. */
function nestedArrays(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("boundsProblems", () => {
  it("accepts MAX_NESTING_DEPTH levels and refuses one more, naming where", () => {
    expect(boundsProblems(nestedArrays(MAX_NESTING_DEPTH), "f")).toEqual([]);
    expect(boundsProblems(nestedArrays(MAX_NESTING_DEPTH + 1), "f")).toEqual([
      {
        path: `f${"[0]".repeat(MAX_NESTING_DEPTH)}`.slice(0, 200) + "…",
        message: `is nested more than ${String(MAX_NESTING_DEPTH)} levels deep (objects and arrays)`,
      },
    ]);
  });

  it("walks a value a million levels deep without overflowing the stack", () => {
    const problems = boundsProblems(nestedArrays(1_000_000), "");
    expect(problems).toHaveLength(1);
    expect(problems[0]?.path.endsWith("…")).toBe(true);
  });

  it("refuses __proto__ keys anywhere, in document order, and nothing else", () => {
    const value = JSON.parse(
      '{"a":[{"__proto__":1}],"constructor":{"prototype":{"__proto__":{}}}}',
    ) as unknown;
    expect(boundsProblems(value, "doc").map((p) => p.path)).toEqual([
      "doc.a[0].__proto__",
      "doc.constructor.prototype.__proto__",
    ]);
  });

  it("reports at most 20 problems", () => {
    const value = Array.from(
      { length: 50 },
      () => JSON.parse('{"__proto__":1}') as unknown,
    );
    expect(boundsProblems(value, "")).toHaveLength(20);
  });

  it("has nothing to say about scalars", () => {
    expect(boundsProblems("__proto__", "x")).toEqual([]);
    expect(boundsProblems(null, "x")).toEqual([]);
  });
});

describe("parseJsonText", () => {
  it("parses JSON within the bounds", () => {
    expect(parseJsonText('{"a":[1,2]}', "f")).toEqual({
      ok: true,
      value: { a: [1, 2] },
    });
  });

  it("names the field of text that is not JSON, with the text shortened", () => {
    const parsed = parseJsonText(`{${"x".repeat(300)}`, "f");
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems[0]).toMatchObject({
      path: "f",
      message: expect.stringMatching(/^is not valid JSON/) as unknown,
    });
    expect(String(parsed.problems[0]?.value)).toHaveLength(200);
  });

  it("refuses JSON nested 10,000 levels deep under the field's path", () => {
    const text = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    const parsed = parseJsonText(text, "strategyJson");
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toHaveLength(1);
    expect(parsed.problems[0]?.path).toMatch(/^strategyJson\.a\.a\.a/);
  });
});
