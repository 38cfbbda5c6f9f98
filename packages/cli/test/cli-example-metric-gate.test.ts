/**
 * examples/metric-gate through `run` with the real engine and the real file system: `plan` shows the
 * canary stage's metric gate with its query and conditions, the healthy scenario passes the gate at
 * its third measurement and completes, the regression fails the gate and never starts prod
 * (docs/engine.md#metric-gates). The README's quoted output is checked against what the commands
 * print, so the example cannot silently rot.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCliOnDisk } from "./support/run-cli.js";

const dir = fileURLToPath(
  new URL("../../../examples/metric-gate/", import.meta.url),
);
const file = (name: string): string => `${dir}${name}`;

const GATE = "stage:canary:after";
const PROD = [
  "prod-eu-01",
  "prod-eu-02",
  "prod-eu-03",
  "prod-eu-04",
  "prod-us-01",
  "prod-us-02",
  "prod-us-03",
  "prod-us-04",
];

interface Simulation {
  finalState: string;
  timeline: {
    at: string;
    type: string;
    to?: string;
    gate?: string;
    cluster?: string;
    message: string;
  }[];
  waves: {
    name: string;
    groups: { members: { name: string; state: string }[] }[];
  }[];
}

async function simulate(scenario: string): Promise<Simulation> {
  const { code, out, err } = await runCliOnDisk([
    "simulate",
    "--clusters",
    file("clusters.yaml"),
    "--strategy",
    file("strategy.json"),
    "--scenario",
    file(scenario),
    "-o",
    "json",
  ]);
  expect(err).toBe("");
  expect(code).toBe(0);
  return JSON.parse(out) as Simulation;
}

/** The gate's state changes as `[at, to, message]`. */
const gateChanges = (sim: Simulation) =>
  sim.timeline
    .filter((e) => e.type === "gate" && e.gate === GATE)
    .map((e) => [e.at, e.to, e.message]);

/** The regression scenario's three measurements, as the timeline shows them. */
const MEASUREMENTS = [
  "0.004 (Successful: successCondition result[0] < 0.01 is true)",
  "0.006 (Successful: successCondition result[0] < 0.01 is true)",
  "0.072 (Failed: failureCondition result[0] >= 0.05 is true)",
];

const memberStates = (sim: Simulation, wave: string) =>
  Object.fromEntries(
    sim.waves
      .filter((w) => w.name === wave)
      .flatMap((w) => w.groups.flatMap((g) => g.members))
      .map((m) => [m.name, m.state]),
  );

describe("examples/metric-gate", () => {
  it("plans the canary stage's metric gate with its query, conditions, interval, count and limits", async () => {
    const { code, out, err } = await runCliOnDisk([
      "plan",
      "--clusters",
      file("clusters.yaml"),
      "--strategy",
      file("strategy.json"),
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain(
      'gate stage:canary:after  Metric "Canary 5xx error rate"',
    );
    expect(out).toContain(
      'query sum(rate(http_requests_total{code=~"5..",cluster=~"{{clusters}}"}[5m])) / sum(rate(http_requests_total{cluster=~"{{clusters}}"}[5m]))',
    );
    expect(out).toContain(
      "success result[0] < 0.01 · failure result[0] >= 0.05 · every 120s × 3 · failureLimit 0 · inconclusiveLimit 1",
    );
    expect(out).toContain("canary-01, canary-02");
  });

  it("healthy: the gate passes at its third measurement, 2 intervals after the canaries finish, and the run completes", async () => {
    const sim = await simulate("scenario-healthy.yaml");
    expect(sim.finalState).toBe("Completed");
    // Reached when both canaries succeed (09:20); measured at 09:20, 09:22 and 09:24.
    expect(gateChanges(sim)).toEqual([
      [
        "2026-03-02T09:20:00Z",
        "Pending",
        "Measuring Canary 5xx error rate: 0 of 3 measurement(s)",
      ],
      [
        "2026-03-02T09:24:00Z",
        "Completed",
        "Passed: 3 measurements within the limits",
      ],
    ]);
    const firstProdStart = sim.timeline.find(
      (e) => e.type === "started" && PROD.includes(e.cluster ?? ""),
    );
    expect(firstProdStart?.at).toBe("2026-03-02T09:24:00Z");
    expect(memberStates(sim, "prod")).toEqual(
      Object.fromEntries(PROD.map((name) => [name, "Succeeded"])),
    );
  });

  it("regression: the third measurement fails the gate, the run ends Failed and no prod cluster starts", async () => {
    const sim = await simulate("scenario-regression.yaml");
    expect(sim.finalState).toBe("Failed");
    const failed =
      "Metric gate stage:canary:after failed: 1 failed measurement, more than failureLimit 0: failureCondition result[0] >= 0.05 is true";
    expect(gateChanges(sim)).toEqual([
      [
        "2026-03-02T09:20:00Z",
        "Pending",
        "Measuring Canary 5xx error rate: 0 of 3 measurement(s)",
      ],
      ["2026-03-02T09:24:00Z", "Failed", failed],
    ]);
    // Each measurement is in the timeline, before what it caused.
    const measured = sim.timeline
      .filter((e) => e.type === "measured" || e.type === "gate")
      .map((e) => [e.at, e.type, e.message]);
    expect(measured.slice(1)).toEqual([
      ["2026-03-02T09:20:00Z", "measured", MEASUREMENTS[0]],
      ["2026-03-02T09:22:00Z", "measured", MEASUREMENTS[1]],
      ["2026-03-02T09:24:00Z", "measured", MEASUREMENTS[2]],
      ["2026-03-02T09:24:00Z", "gate", failed],
    ]);
    expect(sim.timeline.at(-1)).toMatchObject({
      type: "run",
      to: "Failed",
      message: failed,
    });
    expect(sim.timeline.filter((e) => PROD.includes(e.cluster ?? ""))).toEqual(
      [],
    );
    expect(memberStates(sim, "prod")).toEqual(
      Object.fromEntries(PROD.map((name) => [name, "NotStarted"])),
    );
  });

  describe("README.md", () => {
    const blocks = async (): Promise<{ lang: string; lines: string[] }[]> => {
      const text = await readFile(file("README.md"), "utf8");
      return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
        lang: m[1] ?? "",
        lines: (m[2] ?? "").split("\n").filter((l) => l.trim() !== ""),
      }));
    };

    it("quotes the strategy's gate as it is in strategy.json", async () => {
      const json = (await blocks()).filter((b) => b.lang === "json");
      expect(json).toHaveLength(1);
      const strategy = JSON.parse(
        await readFile(file("strategy.json"), "utf8"),
      ) as { stages: { afterGates?: unknown[] }[] };
      expect(JSON.parse(json[0]?.lines.join("\n") ?? "")).toEqual(
        strategy.stages[0]?.afterGates?.[0],
      );
    });

    it("quotes only lines that plan and simulate print for its commands", async () => {
      const all = await blocks();
      const checked: string[] = [];
      for (const [i, block] of all.entries()) {
        const [command] = block.lines;
        if (
          block.lines.length !== 1 ||
          command === undefined ||
          !/^flotilla (plan|simulate) /.test(command)
        )
          continue;
        const quoted = all[i + 1]?.lines ?? [];
        const argv = command
          .split(" ")
          .slice(1)
          .map((arg) => (/\.(yaml|json)$/.test(arg) ? file(arg) : arg));
        const { code, out, err } = await runCliOnDisk(argv);
        expect(err).toBe("");
        expect(code).toBe(0);
        const printed = new Set(out.split("\n").map((l) => l.trimEnd()));
        expect(
          quoted.filter((line) => !printed.has(line.trimEnd())),
          command,
        ).toEqual([]);
        expect(quoted.length, command).toBeGreaterThan(0);
        checked.push(command);
      }
      expect(checked).toEqual([
        "flotilla plan --clusters clusters.yaml --strategy strategy.json",
        "flotilla simulate --clusters clusters.yaml --strategy strategy.json --scenario scenario-healthy.yaml",
        "flotilla simulate --clusters clusters.yaml --strategy strategy.json --scenario scenario-regression.yaml",
      ]);
    });
  });
});
