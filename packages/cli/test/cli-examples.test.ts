/**
 * The examples in examples/ (they drive the README demo) through `run`, with the real engine and
 * the real file system. These need @flotilla/core's plan/simulate.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCliOnDisk } from "./support/run-cli.js";

const examples = fileURLToPath(new URL("../../../examples/", import.meta.url));

const cli = (argv: string[]) => runCliOnDisk(argv);

const staged = (file: string): string => `${examples}staged-upgrade/${file}`;
const fleet = (file: string): string => `${examples}fleet-partitions/${file}`;

describe("examples/staged-upgrade", () => {
  it("plans three stages over 60 clusters and lists the two lab clusters as unassigned", async () => {
    const { code, out, err } = await cli([
      "plan",
      "--clusters",
      staged("clusters.yaml"),
      "--strategy",
      staged("strategy.json"),
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toMatch(
      /^Plan: staged update run, 3 stages, 5 groups, 60 clusters\n/,
    );
    expect(out).toContain(
      "stage staging  16 clusters · maxConcurrency 4 · maxAllowedFailures 2",
    );
    expect(out).toContain(
      "group prod-eu  20 clusters · maxConcurrency 5 · maxAllowedFailures 5",
    );
    expect(out).toContain("Unassigned (2): lab-01, lab-02");
  });

  it("simulates the upgrade to completion with the staging failure inside its budget", async () => {
    const { code, out, err } = await cli([
      "simulate",
      "--clusters",
      staged("clusters.yaml"),
      "--strategy",
      staged("strategy.json"),
      "--scenario",
      staged("scenario.yaml"),
      "-o",
      "json",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const sim = JSON.parse(out) as {
      finalState: string;
      failureCount: number;
      truncated: boolean;
      waves: {
        name: string;
        groups: {
          members: { name: string; state: string; reason?: string }[];
        }[];
      }[];
    };
    expect(sim.finalState).toBe("Completed");
    expect(sim.failureCount).toBe(1);
    expect(sim.truncated).toBe(false);
    const members = new Map(
      sim.waves
        .flatMap((w) => w.groups.flatMap((g) => g.members))
        .map((m) => [m.name, m]),
    );
    expect(members.get("staging-07")?.state).toBe("Failed");
    expect(members.get("staging-12")).toMatchObject({
      state: "Skipped",
      reason: "AlreadyAtTarget",
    });
    expect(members.get("prod-us-20")).toMatchObject({
      state: "Skipped",
      reason: "MinorVersionSkew",
    });
  });

  it("renders the simulation for people with the total duration", async () => {
    const { code, out } = await cli([
      "simulate",
      "--clusters",
      staged("clusters.yaml"),
      "--strategy",
      staged("strategy.json"),
      "--scenario",
      staged("scenario.yaml"),
    ]);
    expect(code).toBe(0);
    expect(out).toContain("Final state: Completed · 1 failure");
    expect(out).toMatch(/\nTotal: \d+d \d+h( \d+m)? \(simulated\)/);
  });
});

describe("examples/fleet-partitions", () => {
  it("plans the canary and prod partitions with 10% maxUnavailable and reports the lab cluster", async () => {
    const { code, out, err } = await cli([
      "plan",
      "--clusters",
      fleet("clusters.yaml"),
      "--strategy",
      fleet("fleet.yaml"),
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toMatch(/^Plan: Fleet rollout, 2 partitions, 48 clusters\n/);
    expect(out).toContain("├─ partition canary  4 clusters · maxUnavailable 1");
    expect(out).toContain("└─ partition prod  44 clusters · maxUnavailable 4");
    expect(out).toContain("Unassigned (1): lab-01");
  });

  it("simulates the update and ends NotReady because one store never becomes Ready", async () => {
    const { code, out, err } = await cli([
      "simulate",
      "--clusters",
      fleet("clusters.yaml"),
      "--strategy",
      fleet("fleet.yaml"),
      "--scenario",
      fleet("scenario.yaml"),
      "-o",
      "json",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const sim = JSON.parse(out) as {
      dialect: string;
      finalState: string;
      timeline: { type: string }[];
    };
    expect(sim.dialect).toBe("fleet");
    expect(sim.finalState).toBe("NotReady");
    expect(sim.timeline.some((e) => e.type === "released")).toBe(true);
  });
});

const ordered = (file: string): string => `${examples}ordered-stores/${file}`;

describe("examples/ordered-stores", () => {
  it("plans the stores by the integer value of their wave label and warns about the store without one", async () => {
    const { code, out, err } = await cli([
      "plan",
      "--clusters",
      ordered("clusters.yaml"),
      "--strategy",
      ordered("strategy.json"),
      "-o",
      "json",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const plan = JSON.parse(out) as {
      waves: {
        name: string;
        sortingLabelKey?: string;
        groups: { clusters: string[] }[];
      }[];
      warnings: { code: string; message: string }[];
    };
    expect(plan.waves[1]).toMatchObject({
      name: "stores",
      sortingLabelKey: "fleet.example.com/wave",
    });
    expect(plan.waves[1]?.groups[0]?.clusters).toEqual([
      "store-02",
      "store-07",
      "store-01",
      "store-09",
      "store-03",
      "store-08",
      "store-05",
      "store-10",
      "store-12",
    ]);
    expect(plan.warnings.map((w) => w.code)).toEqual(["SortingLabelMissing"]);
    expect(plan.warnings[0]?.message).toContain("store-12");
  });

  it("simulates the stores with open windows first, then by wave, and the store whose window is closed when it opens", async () => {
    const { code, out, err } = await cli([
      "simulate",
      "--clusters",
      ordered("clusters.yaml"),
      "--strategy",
      ordered("strategy.json"),
      "--scenario",
      ordered("scenario.yaml"),
      "-o",
      "json",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const sim = JSON.parse(out) as {
      finalState: string;
      timeline: {
        at: string;
        type: string;
        cluster?: string;
        group?: string;
      }[];
    };
    expect(sim.finalState).toBe("Completed");
    const started = sim.timeline.filter(
      (e) => e.type === "started" && e.group === "stores",
    );
    expect(started.map((e) => e.cluster)).toEqual([
      "store-05",
      "store-02",
      "store-07",
      "store-01",
      "store-09",
      "store-03",
      "store-10",
      "store-12",
      "store-08",
    ]);
    expect(started.at(-1)?.at).toBe("2026-03-02T20:00:00Z");
  });
});
