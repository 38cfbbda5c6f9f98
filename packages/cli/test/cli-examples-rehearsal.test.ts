/**
 * examples/operator-rehearsal and examples/fleet-partitions/scenario-churn.yaml through the built
 * binary: operator actions at given times and clusters joining and leaving, as a person runs them.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runBuiltCli } from "./built-cli.js";

const examples = fileURLToPath(new URL("../../../examples/", import.meta.url));

interface Sim {
  finalState: string;
  failureCount: number;
  end: string;
  timeline: {
    at: string;
    type: string;
    cluster?: string;
    to?: string;
    message: string;
  }[];
  waves: {
    groups: { members: { name: string; state: string; reason?: string }[] }[];
  }[];
}

const members = (sim: Sim) =>
  new Map(
    sim.waves
      .flatMap((w) => w.groups.flatMap((g) => g.members))
      .map((m) => [m.name, m]),
  );

describe("examples/operator-rehearsal", () => {
  const args = (...extra: string[]) => [
    "simulate",
    "--clusters",
    `${examples}operator-rehearsal/clusters.yaml`,
    "--strategy",
    `${examples}operator-rehearsal/strategy.json`,
    "--scenario",
    `${examples}operator-rehearsal/scenario.yaml`,
    ...extra,
  ];

  it("retries and restarts the failed canary, opens the weekend gate early, stops and resumes, and ends Completed", async () => {
    const { code, stdout, stderr } = await runBuiltCli(args("-o", "json"));
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const sim = JSON.parse(stdout) as Sim;
    const runStates = sim.timeline
      .filter((e) => e.type === "run" && e.to !== undefined)
      .map((e) => `${e.at.slice(11, 16)} ${String(e.to)}`);
    expect(runStates).toEqual([
      "09:00 Running",
      "09:40 Failed",
      "10:00 Running",
      // Waiting for the canary approval, then for the scheduled start.
      "10:20 Pending",
      "12:00 Running",
      "12:30 Stopping",
      "12:40 Stopped",
      "14:30 Running",
      "14:50 Completed",
    ]);
    const gate = sim.timeline.find(
      (e) =>
        e.type === "gate" &&
        e.to === "Completed" &&
        e.at.startsWith("2026-03-02T12"),
    );
    expect(gate?.message).toBe(
      "Completed by simulation: scenario approval at 2026-03-02T12:00:00Z",
    );
    expect(
      sim.timeline.filter((e) => e.type === "rejected").map((e) => e.message),
    ).toEqual([
      'retry: Cannot retry member "prod-eu-01": it is Succeeded, not Failed',
    ]);
    const byName = members(sim);
    expect(byName.get("canary-02")?.state).toBe("Succeeded");
    expect(byName.get("prod-us-04")).toMatchObject({
      state: "Skipped",
      reason: "SkippedByOperator",
    });
    expect(byName.get("prod-us-05")).toMatchObject({
      state: "Skipped",
      reason: "Left",
    });
    expect(byName.has("prod-us-06")).toBe(false);
    expect(sim).toMatchObject({
      finalState: "Completed",
      failureCount: 1,
      end: "2026-03-02T14:50:00Z",
    });
  });

  it("prints the actions' effects for people", async () => {
    const { code, stdout } = await runBuiltCli(args());
    expect(code).toBe(0);
    expect(stdout).toContain(
      "  +3h10m  left       prod-us  Cluster left the fleet: prod-us-05\n",
    );
    expect(stdout).toContain(
      "Skipped (2): prod-us-04 (SkippedByOperator), prod-us-05 (Left)\n",
    );
    expect(stdout).toContain("Final state: Completed · 1 failure\n");
  });

  it("a scenario action naming a stage the strategy does not have is bad input: exit 2, the file and the field path", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flotilla-actions-"));
    try {
      await writeFile(
        join(dir, "bad.yaml"),
        [
          'start: "2026-03-02T09:00:00Z"',
          "kind: upgrade",
          'upgrade: { type: Full, kubernetesVersion: "1.31.2" }',
          "actions:",
          '  - { at: "+1h", action: skip, targets: ["Stage:prodd"] }',
          "",
        ].join("\n"),
      );
      const { code, stdout, stderr } = await runBuiltCli(
        [...args().slice(0, 5), "--scenario", "bad.yaml"],
        { cwd: dir },
      );
      expect(stdout).toBe("");
      expect(code).toBe(2);
      expect(stderr).toBe(
        'bad.yaml: actions[0].targets[0]: the strategy has no stage with this name (stages: canary, prod) (got "prodd")\n',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("examples/fleet-partitions/scenario-churn.yaml", () => {
  it("a store that leaves drops out and a store that joins gets the revision as a first deployment", async () => {
    const { code, stdout, stderr } = await runBuiltCli([
      "simulate",
      "--clusters",
      `${examples}fleet-partitions/clusters.yaml`,
      "--strategy",
      `${examples}fleet-partitions/fleet.yaml`,
      "--scenario",
      `${examples}fleet-partitions/scenario-churn.yaml`,
      "-o",
      "json",
    ]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const sim = JSON.parse(stdout) as Sim;
    const byName = members(sim);
    expect(byName.has("store-012")).toBe(false);
    expect(byName.get("store-044")?.state).toBe("Ready");
    expect(
      sim.timeline.find(
        (e) => e.type === "released" && e.cluster === "store-044",
      ),
    ).toMatchObject({
      at: "2026-03-02T10:20:00Z",
      message: "Released revision 2 (first deployment)",
    });
    expect(sim.finalState).toBe("Ready");
  });
});
