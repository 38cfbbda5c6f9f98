/**
 * `helm lint --strict` of the project's charts (deploy/helm) with the real helm (helm.ts): each
 * chart with its default values, the agent chart with what an install must give, and every values
 * file shipped beside the charts (examples/, values-ha.yaml). It starts helm: e2e loop.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { helmEnv } from "@flotilla/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./chart-files.js";
import { findHelm } from "./helm.js";

const CHARTS = join(ROOT, "deploy", "helm");

/** helm lint's exit status and output. */
async function lint(
  chart: string,
  args: readonly string[],
  home: string,
): Promise<{ ok: boolean; output: string }> {
  const helm = await findHelm();
  try {
    const { stdout } = await promisify(execFile)(
      helm,
      ["lint", "--strict", join(CHARTS, chart), ...args],
      {
        env: helmEnv(home),
      },
    );
    return { ok: true, output: stdout };
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${stdout ?? ""}${stderr ?? ""}` };
  }
}

/** The values files shipped with `chart` (examples/ and values-*.yaml), relative to it. */
async function valuesFiles(chart: string): Promise<string[]> {
  const dir = join(CHARTS, chart);
  const own = (await readdir(dir)).filter((f) => /^values-.+\.yaml$/.test(f));
  const examples = (await readdir(join(dir, "examples"))).map(
    (f) => `examples/${f}`,
  );
  return [...own, ...examples].sort();
}

/**
 * helm lint keeps a `null` a values file uses to remove a default (helm template and install
 * drop it), so the schema sees both PodDisruptionBudget fields: this example is rendered by
 * hub-chart-render.test.ts instead.
 */
const LINT_KEEPS_NULL = new Set(["flotilla-hub/examples/secured.yaml"]);

describe("helm lint --strict of the project's charts", () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), "flotilla-lint-"));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it("passes both charts with their default values", async () => {
    for (const chart of ["flotilla-hub", "flotilla-agent"]) {
      const result = await lint(chart, [], home);
      expect(result.output).toContain("0 chart(s) failed");
      expect(result.ok).toBe(true);
    }
  });

  it("passes the agent chart with an install's values", async () => {
    const result = await lint(
      "flotilla-agent",
      [
        "--set",
        "clusterName=prod-eu-1",
        "--set",
        "hub.address=hub.example.com:7070",
        "--set",
        "hub.tls.ca.existingConfigMap=flotilla-hub-ca",
        "--set",
        "bootstrapToken.existingSecret=flotilla-agent-token",
      ],
      home,
    );
    expect(result.output).toContain("0 chart(s) failed");
  });

  it("passes every values file shipped with the charts", async () => {
    const linted: string[] = [];
    for (const chart of ["flotilla-hub", "flotilla-agent"]) {
      for (const file of await valuesFiles(chart)) {
        if (LINT_KEEPS_NULL.has(`${chart}/${file}`)) continue;
        const result = await lint(
          chart,
          ["--values", join(CHARTS, chart, file)],
          home,
        );
        expect(result.output, `${chart}/${file}`).toContain(
          "0 chart(s) failed",
        );
        linted.push(`${chart}/${file}`);
      }
    }
    expect(linted).toContain("flotilla-hub/values-ha.yaml");
    expect(linted).toContain("flotilla-agent/examples/least-privilege.yaml");
  });

  it("fails a chart whose values break its schema, naming the value", async () => {
    const result = await lint(
      "flotilla-hub",
      ["--set", "jetstream.replicas=7"],
      home,
    );
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/jetstream\.replicas/);
  });
});
