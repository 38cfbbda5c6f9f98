/**
 * `flotilla plan` and `simulate` on Fleet shapes that Fleet itself accepts: negative numbers (a
 * warning, not a refusal). Through `run`, with the real engine on in-memory files.
 */
import { describe, expect, it } from "vitest";
import { memoryIo } from "./fixtures.js";
import { runCli } from "./support/run-cli.js";

const CLUSTERS = `
- {name: c-1, labels: {env: prod}}
- {name: c-2, labels: {env: prod}}
- {name: c-3, labels: {env: prod}}
`;

const cli = (files: Readonly<Record<string, string>>, argv: string[]) =>
  runCli(argv, memoryIo({ "c.yaml": CLUSTERS, ...files }));

const planJson = async (strategy: unknown) => {
  const { code, out, err } = await cli({ "s.json": JSON.stringify(strategy) }, [
    "plan",
    "--clusters",
    "c.yaml",
    "--strategy",
    "s.json",
    "-o",
    "json",
  ]);
  expect(err).toBe("");
  expect(code).toBe(0);
  return JSON.parse(out) as {
    waves: { name: string; maxUnavailable: number }[];
    limits: { maxUnavailable: number };
    warnings: { code: string; message: string }[];
  };
};

describe("negative Fleet numbers", () => {
  it("plans {maxUnavailable: -3} with limit 0 and a warning instead of exit 2", async () => {
    const plan = await planJson({ rolloutStrategy: { maxUnavailable: -3 } });
    expect(plan.limits.maxUnavailable).toBe(0);
    expect(plan.warnings).toContainEqual({
      code: "NegativeValue",
      message:
        "maxUnavailable -3 is negative: it resolves to 0, as in Fleet (a negative integer counts as 0)",
    });
  });

  it('plans "-10%" as 1 and autoPartitionThreshold -1 as no automatic partitions', async () => {
    const plan = await planJson({
      rolloutStrategy: { maxUnavailable: "-10%", autoPartitionThreshold: -1 },
    });
    expect(plan.waves.map((w) => [w.name, w.maxUnavailable])).toEqual([
      ["All", 1],
    ]);
    expect(
      plan.warnings.filter((w) => w.code === "NegativeValue"),
    ).toHaveLength(2);
  });

  it("prints the warning in the table output too", async () => {
    const { code, out } = await cli(
      {
        "fleet.yaml":
          "rolloutStrategy:\n  maxUnavailable: -3\n  autoPartitionThreshold: -1\n",
      },
      ["plan", "--clusters", "c.yaml", "--strategy", "fleet.yaml"],
    );
    expect(code).toBe(0);
    expect(out).toContain("maxUnavailable -3 is negative");
    expect(out).toContain("(NegativeValue)");
  });

  it("still refuses a negative maxConcurrency with exit 2 and the field path", async () => {
    const { code, out, err } = await cli(
      {
        "s.json": JSON.stringify({
          stages: [{ name: "a", maxConcurrency: -1 }],
        }),
      },
      ["plan", "--clusters", "c.yaml", "--strategy", "s.json"],
    );
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toContain("stages[0].maxConcurrency: must not be negative");
  });
});

describe("unnamed partitions", () => {
  it("plans them as partition-<index> in the table and in JSON", async () => {
    const fleetYaml = [
      "rolloutStrategy:",
      "  maxUnavailable: 0",
      "  partitions:",
      "    - clusterName: c-1",
      "    - name: rest",
      "      clusterSelector: {}",
      "    - clusterName: nobody",
    ].join("\n");
    const table = await cli({ "fleet.yaml": fleetYaml }, [
      "plan",
      "--clusters",
      "c.yaml",
      "--strategy",
      "fleet.yaml",
    ]);
    expect(table.err).toBe("");
    expect(table.code).toBe(0);
    expect(table.out).toContain("├─ partition partition-0  1 cluster");
    expect(table.out).toContain('partition "partition-2" holds no cluster');
    const json = await cli({ "fleet.yaml": fleetYaml }, [
      "plan",
      "--clusters",
      "c.yaml",
      "--strategy",
      "fleet.yaml",
      "-o",
      "json",
    ]);
    const plan = JSON.parse(json.out) as { waves: { name: string }[] };
    expect(plan.waves.map((w) => w.name)).toEqual([
      "partition-0",
      "rest",
      "partition-2",
    ]);
  });
});

describe("undeclared cluster groups", () => {
  it("warns, naming the group, when clusters and partitions name groups the cluster-groups file lacks", async () => {
    const { code, out, err } = await cli(
      {
        "g.yaml": "- {name: canary, selector: {matchLabels: {env: canary}}}\n",
        "cg.yaml": "- {name: c-9, groups: [emea]}\n",
        "fleet.yaml":
          "rolloutStrategy:\n  partitions:\n    - {name: first, clusterGroup: canray}\n",
      },
      [
        "plan",
        "--clusters",
        "cg.yaml",
        "--strategy",
        "fleet.yaml",
        "--cluster-groups",
        "g.yaml",
        "-o",
        "json",
      ],
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    const plan = JSON.parse(out) as {
      warnings: { code: string; message: string }[];
    };
    expect(
      plan.warnings
        .filter((w) => w.code === "UndeclaredClusterGroup")
        .map((w) => w.message),
    ).toEqual([
      'partitions[0] ("first"): clusterGroup "canray" is not a declared cluster group, so the partition matches no cluster; did you mean "canary"?',
      'cluster group "emea" is listed in the groups of 1 cluster(s) (c-9) but is not declared, so it holds none of them',
    ]);
  });
});
