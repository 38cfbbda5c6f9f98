import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  promtoolCheckMetrics,
  startMetricsTarget,
  startPrometheus,
} from "@flotilla/testkit";

describe("startPrometheus", () => {
  test("scrapes the targets every scrape interval and answers instant queries; close stops it", async () => {
    await using target = await startMetricsTarget();
    target.set("flotilla_test_error_ratio", { cluster: "a" }, 0.01);
    // What the target serves is valid exposition text, by Prometheus's own checker.
    expect(promtoolCheckMetrics(target.text())).toMatchObject({ ok: true });
    const prometheus = await startPrometheus({
      targets: [target.address],
      scrapeIntervalMs: 500,
    });
    try {
      expect(prometheus.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${prometheus.url}/-/ready`)).status).toBe(200);
      const first = await prometheus.waitForValue(
        "flotilla_test_error_ratio",
        (samples) => samples.length === 1,
      );
      expect(first).toEqual([
        {
          labels: {
            __name__: "flotilla_test_error_ratio",
            cluster: "a",
            instance: target.address,
            job: "testkit",
          },
          value: 0.01,
        },
      ]);
      target.set("flotilla_test_error_ratio", { cluster: "a" }, 0.3);
      await prometheus.waitForValue(
        "flotilla_test_error_ratio",
        (samples) => samples[0]?.value === 0.3,
      );
      expect(await prometheus.query("scalar(up)")).toEqual([
        { labels: {}, value: 1 },
      ]);
      await expect(prometheus.query("sum(")).rejects.toThrow(
        /^Prometheus refused sum\(: .*parse error/,
      );
      await expect(
        prometheus.waitForValue("vector(1)", () => false, 300),
      ).rejects.toThrow(
        'vector(1): the last answer was [{"labels":{},"value":1}]; the predicate never held',
      );
    } finally {
      await prometheus.close();
    }
    await expect(fetch(`${prometheus.url}/-/ready`)).rejects.toThrow();
    await prometheus.close();
  });

  test("without prometheus on PATH it says how to install it", async () => {
    const empty = await mkdtemp(join(tmpdir(), "flotilla-no-prometheus-"));
    const path = process.env["PATH"];
    process.env["PATH"] = empty;
    try {
      await expect(startPrometheus({ targets: [] })).rejects.toThrow(
        'Cannot start Prometheus: "prometheus" is not on PATH; run scripts/setup.sh or `apt-get install prometheus` (Debian/Ubuntu)',
      );
    } finally {
      process.env["PATH"] = path;
      await rm(empty, { recursive: true });
    }
  });
});
