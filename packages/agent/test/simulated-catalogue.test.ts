/**
 * A simulated cluster's version catalogue (docs/agent.md#the-version-catalogue): from inline
 * settings or a file re-read while running, reported with the facts per node pool (each pool gets
 * its family's images); invalid content keeps the last valid catalogue; an upgrade moves the pool
 * to its target image, so the facts change afterwards.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSimulatedCluster } from "@flotilla/agent";
import {
  mulberry32,
  parseSimulatedCluster,
  parseSimulatedFleet,
} from "@flotilla/agent/testing";
import { createManualClock } from "@flotilla/node/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";

const parseText = (text: string): unknown => parseYaml(text) as unknown;

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "flotilla-catalogue-"));
  file = join(dir, "catalogue.yaml");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const POOLS = [
  { name: "system", imageFamily: "ubuntu-22.04", imageVersion: "202601.01.0" },
  { name: "win", imageFamily: "windows-2022", imageVersion: "20348.1.1" },
];

function cluster(settings: Record<string, unknown>) {
  const parsed = parseSimulatedCluster({
    name: "sim-1",
    kubernetesVersion: "1.30.5",
    nodePools: POOLS,
    upgradeDuration: { fixedSeconds: 0 },
    ...settings,
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return createSimulatedCluster(parsed.value, {
    clock: createManualClock(Date.parse("2026-01-01T12:00:00Z")),
    random: mulberry32(1),
    parseText,
  });
}

describe("a simulated cluster's catalogue", () => {
  it("reports an inline catalogue per node pool, with marks", async () => {
    const sim = cluster({
      catalogue: {
        kubernetes: ["v1.30.7", { version: "1.31.2", lts: true }],
        nodeImages: { "ubuntu-22.04": ["202602.01.0"] },
      },
    });
    await sim.start();
    expect((await sim.facts()).catalogue).toEqual({
      kubernetes: [{ version: "1.30.7" }, { version: "1.31.2", lts: true }],
      nodePools: [
        { pool: "system", imageVersions: ["202602.01.0"] },
        { pool: "win", imageVersions: [] },
      ],
    });
  });

  it("reports none when none is configured", async () => {
    const sim = cluster({});
    await sim.start();
    expect((await sim.facts()).catalogue).toBeUndefined();
  });

  it("follows its file: a release appears, an invalid file keeps the last valid catalogue", async () => {
    await writeFile(
      file,
      'catalogue:\n  nodeImages:\n    ubuntu-22.04: ["202602.01.0"]\n',
    );
    const sim = cluster({ catalogueFile: file });
    let changes = 0;
    sim.catalogue.watch(() => {
      changes += 1;
    });
    await sim.start();
    expect(changes).toBe(1);
    await writeFile(
      file,
      'catalogue:\n  nodeImages:\n    ubuntu-22.04: ["202602.01.0", "202603.01.0"]\n',
    );
    await sim.catalogue.reload();
    expect(changes).toBe(2);
    expect((await sim.facts()).catalogue?.nodePools[0]).toEqual({
      pool: "system",
      imageVersions: ["202602.01.0", "202603.01.0"],
    });
    await writeFile(file, 'catalogue:\n  kubernetes: ["latest"]\n');
    await sim.catalogue.reload();
    expect(changes).toBe(2);
    expect(sim.catalogue.error()).toContain("catalogue.kubernetes[0]");
    expect(sim.catalogue.error()).toContain("the last valid catalogue stays");
    expect(
      (await sim.facts()).catalogue?.nodePools[0]?.imageVersions,
    ).toHaveLength(2);
    await sim.catalogue.reload();
    expect(changes).toBe(2);
  });

  it("refuses catalogue and catalogueFile together, and malformed versions, with paths", () => {
    const parsed = parseSimulatedFleet({
      defaults: { kubernetesVersion: "1.30.5" },
      clusters: [
        { name: "a", catalogue: { kubernetes: [] }, catalogueFile: "c.yaml" },
        { name: "b", catalogue: { nodeImages: { u: ["2026 01"] } } },
      ],
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map((p) => p.path)).toEqual([
      "clusters[1].catalogue.nodeImages.u[0]",
    ]);
    const both = parseSimulatedFleet({
      defaults: { kubernetesVersion: "1.30.5" },
      clusters: [
        { name: "a", catalogue: { kubernetes: [] }, catalogueFile: "c.yaml" },
      ],
    });
    expect(both.ok ? [] : both.problems.map((p) => p.path)).toEqual([
      "clusters[0].catalogueFile",
    ]);
  });

  it("moves a pool to its target image: the facts say so afterwards", async () => {
    const sim = cluster({
      catalogue: { nodeImages: { "ubuntu-22.04": ["202602.01.0"] } },
    });
    await sim.start();
    const outcome = await sim.upgrades.start({
      run: "images",
      type: "NodeImageOnly",
      target: {
        nodeImages: [
          { pool: "system", from: "202601.01.0", to: "202602.01.0" },
        ],
      },
    });
    expect(outcome.type).toBe("Succeeded");
    expect((await sim.facts()).nodePools).toEqual([
      { ...POOLS[0], imageVersion: "202602.01.0" },
      POOLS[1],
    ]);
  });
});
