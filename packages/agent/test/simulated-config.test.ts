import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSimulatedClusters, loadSimulatedFleet } from "@flotilla/agent";
import {
  parseSimulatedCluster,
  parseSimulatedFleet,
} from "@flotilla/agent/testing";
import { createManualClock } from "@flotilla/node/testing";
import { formatProblem, FlotillaError, type Problem } from "@flotilla/core";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";

function problems(raw: unknown): string[] {
  const parsed = parseSimulatedFleet(raw);
  if (parsed.ok) throw new Error("expected problems");
  return parsed.problems.map((p: Problem) => formatProblem(p));
}

const fleet = {
  seed: 7,
  defaults: {
    kubernetesVersion: "1.30.5",
    labels: { provider: "sim" },
    failures: { upgradeRate: 0.1 },
    timeToReady: { uniform: { minSeconds: 2, maxSeconds: 9 } },
  },
  clusters: [
    { name: "canary-1", labels: { env: "canary" }, region: "eastus" },
    {
      namePrefix: "prod-",
      count: 12,
      labels: { env: "prod", provider: "other" },
      region: "westeurope",
      failures: { versions: ["1.31.2"] },
    },
  ],
};

describe("parsing a simulated fleet", () => {
  it("expands count + namePrefix with padded indexes and merges labels and failures over defaults", () => {
    const parsed = parseSimulatedFleet(fleet);
    if (!parsed.ok)
      throw new Error(parsed.problems.map(formatProblem).join("\n"));
    const names = parsed.value.clusters.map((c) => c.name);
    expect(names).toEqual([
      "canary-1",
      ...Array.from(
        { length: 12 },
        (_, i) => `prod-${String(i + 1).padStart(2, "0")}`,
      ),
    ]);
    const prod = parsed.value.clusters[1];
    expect(prod).toMatchObject({
      name: "prod-01",
      labels: { env: "prod", provider: "other" },
      region: "westeurope",
      kubernetesVersion: "1.30.5",
      timeToReady: { type: "Uniform", minSeconds: 2, maxSeconds: 9 },
      upgradeTypes: ["Full", "ControlPlaneOnly", "NodeImageOnly"],
      failures: {
        upgradeRate: 0.1,
        versions: ["1.31.2"],
        applyRate: 0,
        neverReady: false,
      },
    });
    expect(parsed.value.clusters[0]?.labels).toEqual({
      provider: "sim",
      env: "canary",
    });
  });

  it("takes the support plan from the entry or the defaults, and refuses an unknown one with its path", () => {
    const parsed = parseSimulatedFleet({
      defaults: {
        kubernetesVersion: "1.27.9",
        supportPlan: "AKSLongTermSupport",
      },
      clusters: [
        { name: "lts-1" },
        { name: "std-1", supportPlan: "KubernetesOfficial" },
      ],
    });
    if (!parsed.ok)
      throw new Error(parsed.problems.map(formatProblem).join("\n"));
    expect(parsed.value.clusters.map((c) => [c.name, c.supportPlan])).toEqual([
      ["lts-1", "AKSLongTermSupport"],
      ["std-1", "KubernetesOfficial"],
    ]);
    expect(
      problems({
        clusters: [
          { name: "c", kubernetesVersion: "1.30.1", supportPlan: "LTS" },
        ],
      }),
    ).toEqual([
      'clusters[0].supportPlan: must be one of "KubernetesOfficial", "AKSLongTermSupport" (got "LTS")',
    ]);
  });

  it("gives each cluster a seed from the fleet seed and its name, whatever the order", () => {
    const a = parseSimulatedFleet(fleet);
    const b = parseSimulatedFleet({
      ...fleet,
      clusters: [...fleet.clusters].reverse(),
    });
    const c = parseSimulatedFleet({ ...fleet, seed: 8 });
    if (!a.ok || !b.ok || !c.ok) throw new Error("expected valid fleets");
    const seedOf = (f: typeof a.value, name: string) =>
      f.clusters.find((x) => x.name === name)?.seed;
    expect(seedOf(b.value, "prod-03")).toBe(seedOf(a.value, "prod-03"));
    expect(seedOf(a.value, "prod-03")).not.toBe(seedOf(a.value, "prod-04"));
    expect(seedOf(c.value, "prod-03")).not.toBe(seedOf(a.value, "prod-03"));
  });

  it("reports every problem at once with its path", () => {
    expect(
      problems({
        defaults: {
          timeToReady: { uniform: { minSeconds: 5, maxSeconds: 1 } },
        },
        clusters: [
          { name: "Bad_Name", kubernetesVersion: "1.30.1" },
          { namePrefix: "p-", count: 0, kubernetesVersion: "1.30.1" },
          { name: "ok", kubernetesVersion: "1.30.1", failurs: {} },
          {
            name: "ok2",
            kubernetesVersion: "1.30.1",
            failures: { applyRate: 2, neverReady: "yes" },
          },
          {
            name: "ok3",
            kubernetesVersion: "1.30.1",
            maintenance: {
              kubernetes: {
                schedule: { daily: null },
                startTime: "25:00",
                durationHours: 4,
              },
            },
          },
          {
            name: "both",
            namePrefix: "x-",
            count: 2,
            kubernetesVersion: "1.30.1",
          },
        ],
      }),
    ).toEqual([
      expect.stringMatching(
        /^defaults\.timeToReady\.uniform\.maxSeconds: must not be below minSeconds/,
      ),
      expect.stringMatching(
        /^clusters\[0\]\.name: must be a DNS label.*\(got "Bad_Name"\)$/,
      ),
      "clusters[1].count: Too small: expected number to be >=1 (got 0)",
      "clusters[2].failurs: unknown field",
      "clusters[3].failures.applyRate: Too big: expected number to be <=1 (got 2)",
      'clusters[3].failures.neverReady: must be true, false or a list of bundle names (got "yes")',
      'clusters[4].maintenance.kubernetes.startTime: must be HH:MM from 00:00 to 23:59 (got "25:00")',
      'clusters[5].name: set either name, or namePrefix and count (got "both")',
    ]);
  });

  it("reports duplicate names (generated ones too), a missing version, conflicting window forms and bad prefixes", () => {
    expect(
      problems({
        clusters: [
          { namePrefix: "c-", count: 3, kubernetesVersion: "1.30.1" },
          { name: "c-02", kubernetesVersion: "1.30.1" },
          { name: "noversion" },
          {
            name: "files",
            kubernetesVersion: "1.30.1",
            maintenance: {},
            maintenanceFile: "w.yaml",
          },
          { namePrefix: "UPPER-", count: 1, kubernetesVersion: "1.30.1" },
        ],
      }),
    ).toEqual([
      'clusters[1]: duplicate cluster name "c-02"; first defined at clusters[0]',
      "clusters[2].kubernetesVersion: is required (set it on the entry or in defaults)",
      'clusters[3].maintenanceFile: set either maintenance or maintenanceFile, not both (got "w.yaml")',
      'clusters[4].namePrefix: makes "UPPER-01", which is not a DNS label of at most 63 characters (got "UPPER-")',
    ]);
  });

  it("parses one cluster on its own and fills in the defaults", () => {
    const parsed = parseSimulatedCluster({
      name: "solo",
      kubernetesVersion: "v1.30",
    });
    expect(parsed).toMatchObject({
      ok: true,
      value: {
        name: "solo",
        kubernetesVersion: "1.30",
        nodePools: [],
        timeToReady: { type: "Fixed", seconds: 5 },
        applyDuration: { type: "Fixed", seconds: 0 },
        upgradeDuration: { type: "Fixed", seconds: 60 },
      },
    });
    expect(
      parseSimulatedCluster({ kubernetesVersion: "1.30" }, "cluster"),
    ).toMatchObject({
      ok: false,
      problems: [
        {
          path: "cluster.name",
          message: "is required (or namePrefix and count)",
        },
      ],
    });
  });
});

describe("loading a fleet file", () => {
  it("reads YAML with the injected parser and resolves maintenance files beside it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flotilla-fleet-"));
    try {
      const file = join(dir, "fleet.yaml");
      await writeFile(
        file,
        "clusters:\n  - namePrefix: edge-\n    count: 3\n    kubernetesVersion: '1.30.2'\n    maintenanceFile: windows.yaml\n",
      );
      await writeFile(
        join(dir, "windows.yaml"),
        "maintenance:\n  kubernetes:\n    start: 2025-01-01T00:00:00Z\n    end: 2025-01-02T00:00:00Z\n",
      );
      const loaded = await loadSimulatedFleet(file, {
        parseText: (text) => parseYaml(text) as unknown,
      });
      expect(loaded.clusters.map((c) => c.maintenanceFile)).toEqual(
        Array(3).fill(join(dir, "windows.yaml")),
      );
      const clusters = createSimulatedClusters(loaded, {
        clock: createManualClock(),
        parseText: (text) => parseYaml(text) as unknown,
      });
      await Promise.all(clusters.map((c) => c.start()));
      expect(
        (await clusters[2]!.facts()).maintenance?.windows.kubernetes,
      ).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("throws invalid_argument naming the file and every path", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flotilla-fleet-"));
    try {
      const file = join(dir, "fleet.json");
      await writeFile(
        file,
        JSON.stringify({ clusters: [{ name: "a", kubernetesVersion: "one" }] }),
      );
      const error = await loadSimulatedFleet(file).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FlotillaError);
      expect(error).toMatchObject({
        code: "invalid_argument",
        message: expect.stringContaining(
          `Invalid simulated fleet file "${file}": clusters[0].kubernetesVersion:`,
        ),
        problems: [{ path: "clusters[0].kubernetesVersion", value: "one" }],
      });
      await expect(loadSimulatedFleet(join(dir, "fleet.yaml"))).rejects.toThrow(
        "YAML files need a parseText option",
      );
      await expect(
        loadSimulatedFleet(join(dir, "missing.json")),
      ).rejects.toThrow(/missing\.json": no such file/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
