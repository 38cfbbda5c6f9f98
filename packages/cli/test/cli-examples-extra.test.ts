/**
 * The examples added with the engine-fidelity work, through `run` with the real engine and the real
 * file system: per-pool messages of a node-image upgrade (examples/node-image-upgrade) and a paused
 * cluster in a Fleet rollout (examples/fleet-paused-clusters).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCliOnDisk } from "./support/run-cli.js";

const examples = fileURLToPath(new URL("../../../examples/", import.meta.url));

const cli = (argv: string[]) => runCliOnDisk(argv);

interface Simulation {
  finalState: string;
  waves: {
    groups: {
      members: {
        name: string;
        state: string;
        reason?: string;
        message?: string;
      }[];
    }[];
  }[];
}

const members = (sim: Simulation) =>
  sim.waves.flatMap((w) => w.groups.flatMap((g) => g.members));

describe("examples/node-image-upgrade", () => {
  const file = (name: string): string =>
    `${examples}node-image-upgrade/${name}`;

  it("says per member which node pools were upgraded and which skipped, and why", async () => {
    const { code, out, err } = await cli([
      "simulate",
      "--clusters",
      file("clusters.yaml"),
      "--strategy",
      file("strategy.json"),
      "--scenario",
      file("scenario.yaml"),
      "-o",
      "json",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const sim = JSON.parse(out) as Simulation;
    expect(sim.finalState).toBe("Completed");
    expect(
      Object.fromEntries(
        members(sim).map((m) => [m.name, [m.state, m.message]]),
      ),
    ).toEqual({
      "web-01": [
        "Succeeded",
        'Upgraded node pool(s) "system" 202602.10.0 → 202603.01.0; skipped upgrade of node pool(s) "user" (already at 202603.01.0)',
      ],
      "web-02": ["Succeeded", "Succeeded"],
      "batch-01": [
        "Succeeded",
        'Upgraded node pool(s) "system" 202602.10.0 → 202603.01.0; skipped upgrade of node pool(s) "spot" (no AzureLinux3gen2 image is offered in region "eastus")',
      ],
      "batch-02": [
        "Skipped",
        'cluster "batch-02" has no node pool to upgrade: skipped upgrade of node pool(s) "system" (already at 202603.01.0)',
      ],
    });
  });
});

describe("examples/fleet-paused-clusters", () => {
  const file = (name: string): string =>
    `${examples}fleet-paused-clusters/${name}`;
  const argv = [
    "--clusters",
    file("clusters.yaml"),
    "--strategy",
    file("fleet.yaml"),
  ];

  it("plans the paused store in its partition and warns about it", async () => {
    const { code, out, err } = await cli(["plan", ...argv]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain("└─ partition prod  8 clusters · maxUnavailable 1");
    expect(out).toContain("(PausedClusters)");
  });

  it("finishes Ready in 45 minutes without the paused store, which keeps the old revision", async () => {
    const { code, out, err } = await cli([
      "simulate",
      ...argv,
      "--scenario",
      file("scenario.yaml"),
      "-o",
      "json",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const sim = JSON.parse(out) as Simulation & {
      durationSeconds: number;
      truncated: boolean;
      timeline: { type: string; cluster?: string; message: string }[];
    };
    expect(sim).toMatchObject({
      finalState: "Ready",
      truncated: false,
      durationSeconds: 45 * 60,
    });
    expect(members(sim).find((m) => m.name === "store-05")).toEqual({
      name: "store-05",
      state: "OutOfSync",
      reason: "Paused",
    });
    expect(
      sim.timeline.filter(
        (e) => e.cluster === "store-05" && e.type === "released",
      ),
    ).toEqual([]);
    expect(sim.timeline).toContainEqual(
      expect.objectContaining({
        type: "held",
        cluster: "store-05",
        message: "cluster is paused",
      }),
    );
  });
});
