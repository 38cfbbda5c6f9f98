import { describe, expect, test } from "vitest";
import {
  compareLabelSets,
  queryOutcomeOf,
} from "../src/gates/prometheus-result.js";

const at = 1_700_000_000.123;

function vector(...series: [Record<string, string>, string][]): unknown {
  return {
    status: "success",
    data: {
      resultType: "vector",
      result: series.map(([metric, value]) => ({ metric, value: [at, value] })),
    },
  };
}

describe("queryOutcomeOf", () => {
  test("a vector gives one number per series, sorted by label set whatever order it came in", () => {
    const series: [Record<string, string>, string][] = [
      [{ __name__: "errors", cluster: "b" }, "2"],
      [{ __name__: "errors", cluster: "a", zone: "z" }, "3"],
      [{ __name__: "errors", cluster: "a" }, "1"],
    ];
    // cluster "a" alone, then "a" with a zone, then "b".
    expect(queryOutcomeOf(vector(...series))).toEqual({
      ok: true,
      values: [1, 3, 2],
    });
    expect(queryOutcomeOf(vector(...series.slice().reverse()))).toEqual({
      ok: true,
      values: [1, 3, 2],
    });
  });

  test("label sets compare pair by pair, name then value, a shorter prefix first", () => {
    const sets = [
      [["a", "2"]],
      [
        ["a", "1"],
        ["b", "2"],
      ],
      [["a", "1"]],
      [["B", "9"]],
      [],
    ] as const;
    expect(
      [...sets].sort(compareLabelSets).map((set) => JSON.stringify(set)),
    ).toEqual([
      "[]",
      '[["B","9"]]',
      '[["a","1"]]',
      '[["a","1"],["b","2"]]',
      '[["a","2"]]',
    ]);
  });

  test.each([
    ["NaN", Number.NaN],
    ["+Inf", Number.POSITIVE_INFINITY],
    ["-Inf", Number.NEGATIVE_INFINITY],
    ["1e-3", 0.001],
    ["-0.5", -0.5],
  ])("reads the sample %s", (text, value) => {
    expect(queryOutcomeOf(vector([{}, text]))).toEqual({
      ok: true,
      values: [value],
    });
  });

  test("a scalar gives one number, an empty vector none", () => {
    expect(
      queryOutcomeOf({
        status: "success",
        data: { resultType: "scalar", result: [at, "2"] },
      }),
    ).toEqual({ ok: true, values: [2] });
    expect(queryOutcomeOf(vector())).toEqual({ ok: true, values: [] });
  });

  test.each([
    [
      "a range vector",
      { status: "success", data: { resultType: "matrix", result: [] } },
      "the query returned a range vector: use an instant query (no [5m] selector at the top level)",
    ],
    [
      "a string",
      { status: "success", data: { resultType: "string", result: [at, "x"] } },
      "the query returned a string, not a number",
    ],
    [
      "Prometheus's error",
      { status: "error", errorType: "bad_data", error: "parse error" },
      "Prometheus refused the query: bad_data: parse error",
    ],
    [
      "a sample that is not a number",
      vector([{ a: "1" }, "lots"]),
      'the answer is not a Prometheus query result: series 0 of the vector is not {metric, value: [time, "number"]}',
    ],
    [
      "an unknown result type",
      { status: "success", data: { resultType: "histogram", result: [] } },
      'the answer is not a Prometheus query result: "data.resultType" is "histogram"',
    ],
    [
      "an array",
      [1, 2],
      "the answer is not a Prometheus query result: the answer is not a JSON object",
    ],
  ])("refuses %s with a reason", (_name, body, reason) => {
    expect(queryOutcomeOf(body)).toEqual({ ok: false, reason });
  });
});
