import { afterEach, describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { startMetricsTarget, type MetricsTarget } from "@flotilla/testkit";

let target: MetricsTarget | undefined;
afterEach(async () => {
  await target?.close();
  target = undefined;
});

async function scrape(address: string): Promise<string> {
  const response = await fetch(`http://${address}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
  return response.text();
}

describe("startMetricsTarget", () => {
  test("serves the gauges the test sets, changes and removes, in the text format", async () => {
    target = await startMetricsTarget();
    expect(target.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(await scrape(target.address)).toBe("");
    target.set("errors_ratio", { cluster: "b", app: 'we"b\\1' }, 0.25);
    target.set("errors_ratio", { cluster: "a" }, Number.NaN);
    target.set("up_gauge", {}, Number.POSITIVE_INFINITY);
    target.set("down_gauge", {}, Number.NEGATIVE_INFINITY);
    expect(await scrape(target.address)).toBe(
      [
        "# HELP errors_ratio A gauge the test sets.",
        "# TYPE errors_ratio gauge",
        'errors_ratio{app="we\\"b\\\\1",cluster="b"} 0.25',
        'errors_ratio{cluster="a"} NaN',
        "# HELP up_gauge A gauge the test sets.",
        "# TYPE up_gauge gauge",
        "up_gauge +Inf",
        "# HELP down_gauge A gauge the test sets.",
        "# TYPE down_gauge gauge",
        "down_gauge -Inf",
        "",
      ].join("\n"),
    );
    target.set("errors_ratio", { cluster: "b", app: 'we"b\\1' }, 0.5);
    target.remove("errors_ratio", { cluster: "a" });
    target.remove("up_gauge");
    expect(await scrape(target.address)).toBe(
      [
        "# HELP errors_ratio A gauge the test sets.",
        "# TYPE errors_ratio gauge",
        'errors_ratio{app="we\\"b\\\\1",cluster="b"} 0.5',
        "# HELP down_gauge A gauge the test sets.",
        "# TYPE down_gauge gauge",
        "down_gauge -Inf",
        "",
      ].join("\n"),
    );
    expect(target.scrapes).toBe(3);
    expect((await fetch(`http://${target.address}/other`)).status).toBe(404);
  });

  test("refuses names Prometheus would not accept", async () => {
    target = await startMetricsTarget();
    const running = target;
    expect(() => {
      running.set("1bad", {}, 1);
    }).toThrow(FlotillaError);
    expect(() => {
      running.set("good", { "bad-label": "x" }, 1);
    }).toThrow(
      'Cannot set metric "good": "bad-label" is not a label name a target may use',
    );
    expect(() => {
      running.set("good", { __name__: "x" }, 1);
    }).toThrow(/"__name__" is not a label name/);
  });
});
