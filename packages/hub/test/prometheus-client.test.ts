/**
 * The Prometheus client against a real Prometheus (Debian's package, from the testkit) scraping a
 * metrics target whose gauges the test sets: the answers metric gates will judge, and the ones
 * they must refuse, as Prometheus itself sends them.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  startMetricsTarget,
  startPrometheus,
  type MetricsTarget,
  type PrometheusServer,
} from "@flotilla/testkit";
import {
  createPrometheusClient,
  type PrometheusClient,
} from "../src/gates/prometheus-client.js";

let target: MetricsTarget;
let prometheus: PrometheusServer;
let client: PrometheusClient;

beforeAll(async () => {
  target = await startMetricsTarget();
  // Set in the order opposite to the label order: the client sorts, whatever the target says.
  target.set("flotilla_test_error_ratio", { cluster: "b" }, 0.2);
  target.set("flotilla_test_error_ratio", { cluster: "a" }, 0.01);
  target.set("flotilla_test_broken_ratio", {}, Number.NaN);
  prometheus = await startPrometheus({ targets: [target.address] });
  await prometheus.waitForValue(
    '{__name__=~"flotilla_test_.*"}',
    (samples) => samples.length === 3,
    30_000,
  );
  client = createPrometheusClient({ url: prometheus.url });
}, 60_000);

afterAll(async () => {
  await prometheus?.close();
  await target?.close();
});

describe("the Prometheus client against a real Prometheus", () => {
  test("a vector of two series gives two numbers in the order of their label sets", async () => {
    expect(await client.query("flotilla_test_error_ratio")).toEqual({
      ok: true,
      values: [0.01, 0.2],
    });
    // The same order when Prometheus computes the series.
    expect(await client.query("flotilla_test_error_ratio * 100 > 0")).toEqual({
      ok: true,
      values: [1, 20],
    });
  });

  test("a scalar, and a number literal, give one number", async () => {
    const sum = await client.query("scalar(sum(flotilla_test_error_ratio))");
    expect(sum.ok && sum.values.length === 1 && sum.values[0]).toBeCloseTo(
      0.21,
    );
    expect(await client.query("1+1")).toEqual({ ok: true, values: [2] });
  });

  test("a selector that matches nothing gives no numbers", async () => {
    expect(
      await client.query('flotilla_test_error_ratio{cluster="nowhere"}'),
    ).toEqual({ ok: true, values: [] });
  });

  test("NaN and the infinities come back as numbers, for the condition to call inconclusive", async () => {
    expect(await client.query("flotilla_test_broken_ratio")).toEqual({
      ok: true,
      values: [Number.NaN],
    });
    expect(await client.query("1/0")).toEqual({
      ok: true,
      values: [Number.POSITIVE_INFINITY],
    });
    expect(await client.query("-1/0")).toEqual({
      ok: true,
      values: [Number.NEGATIVE_INFINITY],
    });
  });

  test("a range vector and a string are refused with what to do", async () => {
    expect(await client.query("up[1m]")).toEqual({
      ok: false,
      reason:
        "the query returned a range vector: use an instant query (no [5m] selector at the top level)",
    });
    expect(await client.query('"hello"')).toEqual({
      ok: false,
      reason: "the query returned a string, not a number",
    });
  });

  test("a PromQL syntax error shows Prometheus's message", async () => {
    const outcome = await client.query("sum(flotilla_test_error_ratio");
    expect(outcome.ok).toBe(false);
    expect(outcome.ok ? "" : outcome.reason).toMatch(
      /^Prometheus refused the query \(HTTP 400 Bad Request\): bad_data: .*parse error.*unclosed left parenthesis/,
    );
  });

  test("a new value of the target shows in the next answer after a scrape", async () => {
    target.set("flotilla_test_error_ratio", { cluster: "a" }, 0.5);
    await prometheus.waitForValue(
      'flotilla_test_error_ratio{cluster="a"}',
      (samples) => samples[0]?.value === 0.5,
    );
    // Sorted by label set, not by value: cluster "a" first although it is now the larger.
    expect(await client.query("flotilla_test_error_ratio")).toEqual({
      ok: true,
      values: [0.5, 0.2],
    });
  });
});
