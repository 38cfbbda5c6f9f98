/**
 * Metric gates end to end (docs/engine.md#metric-gates): a real Prometheus (Debian's package)
 * scrapes a metrics target whose error-rate series the test drives, and the hub, started with
 * --prometheus-url, measures the canary stage's after-gate of a staged Kubernetes upgrade run
 * against it, with nats-server, simulated agents and the built CLI. While the canary's errors
 * stay low the gate passes after its measurements and prod is upgraded; when they rise during a
 * second run, the gate fails, the run ends Failed and prod is never touched. `run status`,
 * `gate list` and the audit log show the measurements. A gate whose query finds no series is
 * inconclusive past its limit: it waits for an approval, and `gate approve` lets the run go on.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  startMetricsTarget,
  startPrometheus,
  waitFor,
  type MetricsTarget,
  type PrometheusServer,
} from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;
let target: MetricsTarget;
let prometheus: PrometheusServer;
let work: string;

const ERRORS = "app_error_ratio";

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-metric-gates-"));
  target = await startMetricsTarget();
  prometheus = await startPrometheus({
    targets: [target.address],
    scrapeIntervalMs: 500,
  });
  e2e = await startE2E({
    hubArgs: ["--prometheus-url", prometheus.url, "--prometheus-timeout", "5s"],
  });
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("canary-", 2, { ring: "canary" }),
      clusters("prod-", 3, { ring: "prod" }),
    ]),
  );
  await e2e.connected(5);
});

afterEach(() =>
  Promise.all([
    e2e.stop(),
    prometheus.close(),
    target.close(),
    rm(work, { recursive: true, force: true }),
  ]),
);

/** Sets the canaries' error ratio and waits until Prometheus has scraped it. */
async function canaryErrors(value: number): Promise<void> {
  for (const cluster of ["canary-01", "canary-02"])
    target.set(ERRORS, { cluster }, value);
  await prometheus.waitForValue(
    `max(${ERRORS}{cluster=~"canary-.*"})`,
    (samples) => samples[0]?.value === value,
  );
}

const GATE = "stage:canary:after";

/**
 * Strategy `name`: canary, its error rate measured `count` times a second apart, then prod. The
 * gate queries `series` (the error ratio unless told) and tolerates `inconclusiveLimit` inconclusive
 * measurements.
 */
async function writeStrategy(
  name: string,
  count: number,
  options: { series?: string; inconclusiveLimit?: number } = {},
): Promise<void> {
  await writeFile(
    join(work, `${name}.json`),
    JSON.stringify({
      stages: [
        {
          name: "canary",
          memberSelector: { byLabel: "ring=canary" },
          afterGates: [
            {
              type: "Metric",
              displayName: "canary error rate",
              query: `max(${options.series ?? ERRORS}{cluster=~"{{clusters}}"})`,
              successCondition: "result[0] < 0.01",
              failureCondition: "result[0] >= 0.05",
              interval: "1s",
              count,
              ...(options.inconclusiveLimit === undefined
                ? {}
                : { inconclusiveLimit: options.inconclusiveLimit }),
            },
          ],
        },
        { name: "prod", memberSelector: { byLabel: "ring=prod" } },
      ],
    }),
  );
  await e2e.ok("strategy", "create", name, "-f", join(work, `${name}.json`));
}

function memberStates(run: Awaited<ReturnType<E2E["run"]>>): string[] {
  return run.stages.flatMap((s) =>
    s.groups.flatMap((g) => g.members.map((m) => `${m.name} ${m.state}`)),
  );
}

describe("metric gates measured against a real Prometheus", () => {
  it("passes while the canaries' errors stay low and fails the run when they rise", async () => {
    await canaryErrors(0.002);
    await writeStrategy("gated", 3);
    // Measured until it fails: it cannot pass before the errors rise.
    await writeStrategy("watched", 1_000);
    // plan shows the gate with its query.
    expect(await e2e.ok("preview", "--strategy", "gated")).toContain(
      `query max(${ERRORS}{cluster=~"{{clusters}}"})`,
    );

    await e2e.ok(
      "run",
      "create",
      "healthy",
      "--strategy",
      "gated",
      "--kubernetes-version",
      "1.30.3",
    );
    await e2e.ok("run", "start", "healthy");
    const watched = await e2e.cli("run", "status", "healthy", "--watch");
    expect(watched.code, watched.stderr).toBe(0);
    const healthy = await e2e.run("healthy");
    expect(healthy.state).toBe("Completed");
    const gate = healthy.stages[0]?.afterGates[0];
    expect(gate).toMatchObject({ state: "Completed", completedBy: "metric" });
    expect(gate?.metric?.lastQuery).toBe(
      `max(${ERRORS}{cluster=~"canary-01|canary-02"})`,
    );
    expect(
      gate?.metric?.measurements.map((m) => [m.values, m.verdict]),
    ).toEqual([
      [[0.002], "Successful"],
      [[0.002], "Successful"],
      [[0.002], "Successful"],
    ]);
    expect(memberStates(healthy)).toEqual([
      "canary-01 Succeeded",
      "canary-02 Succeeded",
      "prod-01 Succeeded",
      "prod-02 Succeeded",
      "prod-03 Succeeded",
    ]);

    // A second run: the canaries' errors rise while the gate measures.
    await canaryErrors(0.004);
    await e2e.ok(
      "run",
      "create",
      "regress",
      "--strategy",
      "watched",
      "--kubernetes-version",
      "1.31.1",
    );
    await e2e.ok("run", "start", "regress");
    await waitFor(
      async () =>
        ((await e2e.run("regress")).stages[0]?.afterGates[0]?.metric
          ?.measurements.length ?? 0) >= 1,
      { timeoutMs: 60_000, intervalMs: 100, message: "a first measurement" },
    );
    await canaryErrors(0.2);
    const failed = await waitFor(
      async () => {
        const run = await e2e.run("regress");
        return run.state === "Failed" ? run : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, message: "the run to fail" },
    );
    expect(failed.message).toContain(`Metric gate ${GATE} failed`);
    expect(failed.message).toContain("failureCondition result[0] >= 0.05");
    expect(failed.stages[0]?.afterGates[0]?.state).toBe("Failed");
    expect(memberStates(failed).filter((m) => m.startsWith("prod-"))).toEqual([
      "prod-01 NotStarted",
      "prod-02 NotStarted",
      "prod-03 NotStarted",
    ]);

    const status = await e2e.ok("run", "status", "regress");
    expect(status).toContain(
      "0.2 (Failed: failureCondition result[0] >= 0.05 is true)",
    );
    const gates = await e2e.ok("gate", "list", "--run", "regress");
    expect(gates).toMatch(/stage:canary:after .*Metric .*Failed .*0\.2 Failed/);
    const audit = await e2e.ok("audit", "list", "-o", "json");
    expect(audit).toContain("/flotilla.hub/MeasureGate");
  }, 180_000);

  it("waits for an approval once a gate is inconclusive past its limit, and goes on when approved", async () => {
    // Nothing exports this series: every measurement finds no series, which is inconclusive.
    await writeStrategy("unmeasured", 3, {
      series: "app_latency_missing",
      inconclusiveLimit: 1,
    });
    await e2e.ok(
      "run",
      "create",
      "blind",
      "--strategy",
      "unmeasured",
      "--kubernetes-version",
      "1.30.3",
    );
    await e2e.ok("run", "start", "blind");
    const waiting = await waitFor(
      async () => {
        const run = await e2e.run("blind");
        const gate = run.stages[0]?.afterGates[0];
        return (gate?.metric?.measurements.length ?? 0) >= 2 ? run : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, message: "two measurements" },
    );
    const gate = waiting.stages[0]?.afterGates[0];
    // Inconclusive past the limit: not passed, not failed, waiting for a person.
    expect(gate?.state).toBe("Pending");
    expect(gate?.metric?.measurements.map((m) => m.verdict)).toEqual([
      "Inconclusive",
      "Inconclusive",
    ]);
    // A run waiting on a gate is Pending (docs/semantics.md#operator-actions).
    expect(waiting.state).toBe("Pending");
    expect(memberStates(waiting).filter((m) => m.startsWith("prod-"))).toEqual([
      "prod-01 NotStarted",
      "prod-02 NotStarted",
      "prod-03 NotStarted",
    ]);
    const gates = await e2e.ok("gate", "list", "--run", "blind");
    expect(gates).toMatch(/stage:canary:after .*Metric .*Pending/);

    await e2e.ok(
      "gate",
      "approve",
      GATE,
      "--run",
      "blind",
      "--reason",
      "checked by hand",
    );
    const watched = await e2e.cli("run", "status", "blind", "--watch");
    expect(watched.code, watched.stderr).toBe(0);
    const done = await e2e.run("blind");
    expect(done.state).toBe("Completed");
    // Completed by the person who approved it (the e2e CLI's identity), not by a measurement.
    expect(done.stages[0]?.afterGates[0]).toMatchObject({
      state: "Completed",
      completedBy: "e2e",
    });
    // No more measurements once it asked for an approval: the count stayed at two.
    expect(done.stages[0]?.afterGates[0]?.metric?.measurements).toHaveLength(2);
    expect(memberStates(done).filter((m) => m.startsWith("prod-"))).toEqual([
      "prod-01 Succeeded",
      "prod-02 Succeeded",
      "prod-03 Succeeded",
    ]);
  }, 120_000);
});
