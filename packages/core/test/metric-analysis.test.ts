// How a metric gate judges measurements and decides (docs/engine.md#metric-gates).
import { describe, expect, it } from "vitest";
import {
  analyse,
  judge,
  type Measurement,
  type MetricJudgement,
  type QueryOutcome,
} from "../src/metrics/analysis.js";
import { parseCondition, type Condition } from "../src/metrics/condition.js";

function condition(text: string): Condition {
  const result = parseCondition(text, "c");
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

const BOTH: MetricJudgement = {
  successCondition: condition("result[0] < 0.01"),
  failureCondition: condition("result[0] > 0.05"),
  count: 3,
  failureLimit: 0,
  inconclusiveLimit: 1,
};

const value = (v: number): QueryOutcome => ({ ok: true, values: [v] });

describe("judging one measurement", () => {
  it("applies the failure condition first, then the success condition, and is inconclusive between them", () => {
    expect(judge(BOTH, value(0.001), 1)).toEqual({
      atMs: 1,
      values: [0.001],
      verdict: "Successful",
      message: "successCondition result[0] < 0.01 is true",
    });
    expect(judge(BOTH, value(0.2), 1).verdict).toBe("Failed");
    expect(judge(BOTH, value(0.03), 1)).toMatchObject({
      verdict: "Inconclusive",
      message: "neither successCondition nor failureCondition is true",
    });
  });

  it("with one condition, reads its opposite as the other verdict", () => {
    const onlySuccess = { ...BOTH, failureCondition: undefined };
    expect(judge(onlySuccess, value(0.03), 1)).toMatchObject({
      verdict: "Failed",
      message: "successCondition result[0] < 0.01 is false",
    });
    const onlyFailure = { ...BOTH, successCondition: undefined };
    expect(judge(onlyFailure, value(0.03), 1)).toMatchObject({
      verdict: "Successful",
      message: "failureCondition result[0] > 0.05 is false",
    });
  });

  it("is inconclusive, never a pass, on a query error, no series, or a value it cannot use", () => {
    expect(
      judge(BOTH, { ok: false, reason: "Prometheus timed out after 5s" }, 1),
    ).toEqual({
      atMs: 1,
      verdict: "Inconclusive",
      message: "Prometheus timed out after 5s",
    });
    expect(judge(BOTH, { ok: true, values: [] }, 1)).toMatchObject({
      verdict: "Inconclusive",
      message: "the query returned no series",
    });
    expect(
      judge(
        { ...BOTH, successCondition: undefined, failureCondition: undefined },
        value(0),
        1,
      ),
    ).toMatchObject({
      verdict: "Inconclusive",
      message: "the gate has no condition to judge by",
    });
    expect(judge(BOTH, value(Number.NaN), 1)).toMatchObject({
      verdict: "Inconclusive",
      message: "failureCondition: result[0] is NaN",
    });
  });
});

describe("deciding a gate", () => {
  const m = (verdict: Measurement["verdict"]): Measurement => ({
    atMs: 0,
    verdict,
    message: verdict.toLowerCase(),
  });

  it("passes after count measurements within the limits, and runs until then", () => {
    expect(analyse(BOTH, [m("Successful")]).verdict).toBe("Running");
    expect(
      analyse(BOTH, [m("Successful"), m("Inconclusive"), m("Successful")]),
    ).toEqual({
      verdict: "Passed",
      successful: 2,
      failed: 0,
      inconclusive: 1,
      message: "3 measurements within the limits",
    });
  });

  it("fails as soon as failures exceed failureLimit, and is inconclusive past inconclusiveLimit", () => {
    expect(analyse(BOTH, [m("Successful"), m("Failed")])).toMatchObject({
      verdict: "Failed",
      failed: 1,
      message: "1 failed measurement, more than failureLimit 0: failed",
    });
    expect(
      analyse(BOTH, [m("Inconclusive"), m("Inconclusive"), m("Successful")]),
    ).toMatchObject({
      verdict: "Inconclusive",
      inconclusive: 2,
    });
    // Measurements after the end do not change it.
    expect(
      analyse({ ...BOTH, count: 1 }, [m("Successful"), m("Failed")]).verdict,
    ).toBe("Passed");
    expect(
      analyse({ ...BOTH, failureLimit: 1 }, [
        m("Failed"),
        m("Successful"),
        m("Successful"),
      ]).verdict,
    ).toBe("Passed");
  });
});
