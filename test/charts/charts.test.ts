/**
 * The Helm charts in deploy/helm, checked without helm: each values.schema.json compiles (Ajv in
 * strict mode, draft-07), accepts the chart's values.yaml and every example values file merged
 * over it as Helm merges, and rejects wrong types and unknown keys naming the path; the templates
 * reference only values that exist, leave no value unused, nest their blocks soundly, include
 * only defined helpers, set only environment variables the binaries read, and point file
 * settings at mounted volumes. hub-chart-render.test.ts renders the hub chart with helm;
 * installing needs a cluster: test/e2e-kind/run.sh.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ROOT,
  blockProblems,
  definedNames,
  envNames,
  filesAndMounts,
  hasPath,
  includedNames,
  leafPaths,
  readChart,
  valuesPaths,
  variablesIn,
} from "./chart-files.js";
import {
  compileValuesSchema,
  describeErrors,
  valuesChecker,
} from "./chart-schema.js";

interface ChartUnderTest {
  readonly name: string;
  /** The binary's configuration modules, which name every variable it reads. */
  readonly configs: readonly string[];
  /** Variables the chart may set before the binary reads them. */
  readonly pending: readonly string[];
}

const CHARTS: readonly ChartUnderTest[] = [
  {
    name: "flotilla-agent",
    configs: [
      "packages/agent/src/config/config-options.ts",
      "packages/agent/src/config/config-kubernetes.ts",
      "packages/agent/src/config/config-identity.ts",
    ],
    pending: [],
  },
  {
    name: "flotilla-hub",
    configs: ["packages/hub/src/config/config-options.ts"],
    pending: [],
  },
];

const rootVersion = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    version: string;
  }
).version;
const installDoc = readFileSync(join(ROOT, "docs", "install.md"), "utf8");

describe.each(CHARTS)("chart $name", ({ name, configs, pending }) => {
  const chart = readChart(name);
  const validate = compileValuesSchema(chart.schema);
  const check = valuesChecker(chart);

  it("has a Chart.yaml for Helm 3 named after its directory, versioned like the project", () => {
    expect(chart.chart).toMatchObject({
      apiVersion: "v2",
      name,
      type: "application",
      appVersion: rootVersion,
    });
    expect(chart.chart.version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    expect(typeof chart.chart.description).toBe("string");
  });

  it("declares a draft-07 schema that closes the top level", () => {
    expect(chart.schema.$schema).toBe(
      "http://json-schema.org/draft-07/schema#",
    );
    expect(chart.schema.additionalProperties).toBe(false);
  });

  it("accepts its own values.yaml", () => {
    expect(
      validate(chart.values),
      describeErrors(validate.errors).join("\n"),
    ).toBe(true);
  });

  it("has examples, each valid merged over the defaults", () => {
    expect(chart.examples.size).toBeGreaterThanOrEqual(2);
    for (const [file, example] of chart.examples)
      expect(check(example), file).toEqual([]);
  });

  it("rejects a key it does not know, naming it", () => {
    expect(check({ replicas: 2 })).toContain(
      ': must NOT have additional properties "replicas"',
    );
    expect(check({ image: { registry: "ghcr.io" } })).toContain(
      '/image: must NOT have additional properties "registry"',
    );
  });

  it("rejects wrong types and values with their path", () => {
    expect(check({ image: { pullPolicy: "Sometimes" } })).toContain(
      "/image/pullPolicy: must be equal to one of the allowed values",
    );
    expect(check({ logLevel: 3 })).toContain(
      "/logLevel: must be equal to one of the allowed values",
    );
    expect(check({ podSecurityContext: { runAsNonRoot: false } })).toContain(
      "/podSecurityContext/runAsNonRoot: must be equal to constant",
    );
    expect(check({ nats: { url: "http://nats:4222" } })[0]).toMatch(
      /^\/nats\/url: must match pattern/,
    );
    expect(check({ extraEnv: [{ name: "A B", value: "x" }] })[0]).toMatch(
      /^\/extraEnv\/0\/name: must match pattern/,
    );
  });

  it("runs non-root on a read-only root filesystem with no capabilities by default", () => {
    expect(chart.values.podSecurityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(chart.values.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
  });

  it("references in its templates only values that exist in values.yaml", () => {
    const missing = [...chart.templates].flatMap(([file, text]) =>
      valuesPaths(text)
        .filter((path) => !hasPath(chart.values, path))
        .map((path) => `${file}: .Values.${path}`),
    );
    expect(missing).toEqual([]);
  });

  it("uses every value of values.yaml in some template", () => {
    const used = [...chart.templates.values()].flatMap(valuesPaths);
    const unused = leafPaths(chart.values).filter(
      (leaf) =>
        !used.some((path) => leaf === path || leaf.startsWith(`${path}.`)),
    );
    expect(unused).toEqual([]);
  });

  it("nests if/range/with/define and end soundly in every template", () => {
    for (const [file, text] of chart.templates)
      expect(blockProblems(text), file).toEqual([]);
  });

  it("includes only helpers it defines, all named after the chart", () => {
    const defined = definedNames(chart.templates.values());
    for (const helper of defined)
      expect(helper.startsWith(`${name}.`), helper).toBe(true);
    for (const [file, text] of chart.templates)
      for (const helper of includedNames(text))
        expect(defined.has(helper), `${file} includes "${helper}"`).toBe(true);
  });

  it("sets only environment variables the binary reads, or documented pending ones", () => {
    const known = new Set(configs.flatMap((file) => [...variablesIn(file)]));
    const deployment = chart.templates.get("deployment.yaml") ?? "";
    const unknown = envNames(deployment).filter(
      (variable) => !known.has(variable),
    );
    expect(unknown.filter((variable) => !pending.includes(variable))).toEqual(
      [],
    );
    for (const variable of unknown)
      expect(installDoc, variable).toContain(`\`${variable}\``);
  });

  it("points every file and directory setting at a mounted volume", () => {
    const { files, mounts } = filesAndMounts(
      chart.templates.get("deployment.yaml") ?? "",
    );
    expect(files.length).toBeGreaterThan(0);
    for (const file of files)
      expect(
        mounts.some((mount) => file === mount || file.startsWith(`${mount}/`)),
        file,
      ).toBe(true);
  });

  it("has install notes", () => {
    expect(chart.templates.get("NOTES.txt")).toMatch(/docs\/install\.md/);
  });
});
