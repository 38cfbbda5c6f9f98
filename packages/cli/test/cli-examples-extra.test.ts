/**
 * The examples added with the engine-fidelity work, through `run` with the real engine and the real
 * file system: per-pool messages of a node-image upgrade (examples/node-image-upgrade).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { createProcessIo } from "../src/process-io.js";

const examples = fileURLToPath(new URL("../../../examples/", import.meta.url));

async function cli(
  argv: string[],
): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io = createProcessIo(
    {
      stdout: (t) => ((out += t), undefined),
      stderr: (t) => ((err += t), undefined),
      isTTY: false,
    },
    {},
  );
  const code = await run(argv, io);
  return { code, out, err };
}

interface Simulation {
  finalState: string;
  waves: {
    groups: {
      members: { name: string; state: string; message?: string }[];
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
