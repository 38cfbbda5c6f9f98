/**
 * examples/node-image-rollout through the built binary: a node-image upgrade with the catalogue
 * changing during the run, under Consistent and under Latest selection.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runBuiltCli } from "./built-cli.js";

const dir = fileURLToPath(
  new URL("../../../examples/node-image-rollout/", import.meta.url),
);
const simulate = (scenario: string, ...extra: string[]) =>
  runBuiltCli([
    "simulate",
    "--clusters",
    `${dir}clusters.yaml`,
    "--strategy",
    `${dir}strategy.json`,
    "--scenario",
    `${dir}${scenario}`,
    ...extra,
  ]);

interface Sim {
  finalState: string;
  plan: {
    consistentNodeImages?: Record<string, string>;
    members: { name: string; nodeImages: { pool: string; to: string }[] }[];
  };
  timeline: { at: string; type: string; message: string }[];
  waves: {
    groups: {
      members: {
        name: string;
        target?: { nodeImages?: { pool: string; to: string }[] };
      }[];
    }[];
  }[];
}

const images = (sim: Sim, name: string): string[] | undefined =>
  sim.waves
    .flatMap((w) => w.groups.flatMap((g) => g.members))
    .find((m) => m.name === name)
    ?.target?.nodeImages?.map((c) => `${c.pool} ${c.to}`);

describe("examples/node-image-rollout", () => {
  it("Consistent: the version common to every region is chosen and shown before the start, and kept after the US release", async () => {
    const { code, stdout, stderr } = await simulate("scenario-consistent.yaml");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain(
      "Targets (node-image upgrade, node images Consistent):\n" +
        "  Consistent node images: AKSUbuntu-2204gen2containerd 202603.01.0,\n" +
        "    AzureLinuxV2gen2 202603.02.0\n",
    );
    expect(stdout).toContain(
      "  → system 202603.01.0, user 202603.02.0 (4): us-01, us-02, us-03, us-04\n",
    );
    expect(stdout).not.toContain("where they differ from the plan");
    const json = await simulate("scenario-consistent.yaml", "-o", "json");
    const sim = JSON.parse(json.stdout) as Sim;
    expect(sim.plan.consistentNodeImages).toEqual({
      "AKSUbuntu-2204gen2containerd": "202603.01.0",
      AzureLinuxV2gen2: "202603.02.0",
    });
    expect(images(sim, "us-04")).toEqual([
      "system 202603.01.0",
      "user 202603.02.0",
    ]);
    expect(sim.finalState).toBe("Completed");
  });

  it("Latest: Europe takes the March 8 image at once; US members that start after its US release take it too", async () => {
    const { code, stdout } = await simulate("scenario-latest.yaml");
    expect(code).toBe(0);
    expect(stdout).toContain(
      "  → system 202603.08.0 (5): canary-01, eu-01, eu-02, eu-03, eu-04\n",
    );
    expect(stdout).toContain(
      "Targets taken at each member's start, where they differ from the plan:\n" +
        "  → system 202603.08.0, user 202603.02.0 (2): us-03, us-04\n",
    );
    const sim = JSON.parse(
      (await simulate("scenario-latest.yaml", "-o", "json")).stdout,
    ) as Sim;
    expect(sim.timeline.find((e) => e.type === "offered")?.at).toBe(
      "2026-03-09T09:30:00Z",
    );
    expect(images(sim, "us-02")).toEqual([
      "system 202603.01.0",
      "user 202603.02.0",
    ]);
    expect(images(sim, "us-03")).toEqual([
      "system 202603.08.0",
      "user 202603.02.0",
    ]);
  });
});
