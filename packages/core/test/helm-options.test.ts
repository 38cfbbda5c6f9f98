// fleet.yaml `helm:`: parsing every accepted form, refusing Fleet's options that mean nothing
// here with their reason, and merging values in Fleet's order.
import { describe, expect, test } from "vitest";
import {
  helmValuesFor,
  mergeHelmValues,
  parseBundleSpec,
  parseHelmOptions,
  releaseNameOf,
} from "../src/index.js";

describe("parseHelmOptions", () => {
  test("reads the chart, release, values, valuesFiles and valuesFrom with Fleet's default key", () => {
    const parsed = parseHelmOptions(
      {
        chart: "./chart",
        releaseName: "web",
        values: { replicas: 2 },
        valuesFiles: ["values/prod.yaml"],
        valuesFrom: [
          { configMapKeyRef: { name: "cm", namespace: "ops", key: "v.yaml" } },
          { secretKeyRef: { name: "s" } },
        ],
        skipSchemaValidation: true,
      },
      "helm",
    );
    expect(parsed).toEqual({
      ok: true,
      value: {
        chart: "./chart",
        releaseName: "web",
        values: { replicas: 2 },
        valuesFiles: ["values/prod.yaml"],
        valuesFrom: [
          { kind: "ConfigMap", name: "cm", namespace: "ops", key: "v.yaml" },
          { kind: "Secret", name: "s", key: "values.yaml" },
        ],
        skipSchemaValidation: true,
        disableDependencyUpdate: false,
      },
    });
    expect(parseHelmOptions(null, "helm").ok).toBe(true);
  });

  test("refuses Fleet's Helm release options one by one, and unknown keys", () => {
    const parsed = parseHelmOptions(
      { takeOwnership: true, atomic: true, chartt: "x" },
      "helm",
    );
    expect(!parsed.ok && parsed.problems.map((p) => p.path)).toEqual([
      "helm.takeOwnership",
      "helm.atomic",
      "helm.chartt",
    ]);
    expect(!parsed.ok && parsed.problems[0]?.message).toContain(
      "installs no Helm release",
    );
  });

  test("refuses a valuesFrom entry without exactly one reference, and a repo without a chart", () => {
    const both = parseHelmOptions(
      {
        valuesFrom: [
          { configMapKeyRef: { name: "a" }, secretKeyRef: { name: "b" } },
        ],
      },
      "helm",
    );
    expect(!both.ok && both.problems[0]?.message).toContain("exactly one");
    const repo = parseHelmOptions({ repo: "https://charts" }, "helm");
    expect(!repo.ok && repo.problems[0]?.path).toBe("helm.chart");
  });
});

describe("parseBundleSpec with helm", () => {
  test("takes the bundle's helm and each customization's values layers", () => {
    const spec = parseBundleSpec({
      helm: { values: { a: 1 } },
      targetCustomizations: [
        { name: "eu", clusterSelector: {}, helm: { values: { a: 2 } } },
      ],
    });
    expect(spec.ok && spec.value.targetCustomizations[0]?.helm).toEqual({
      values: { a: 2 },
      valuesFiles: [],
      valuesFrom: [],
    });
  });

  test("refuses a customization that changes the chart, and customization helm without a Helm bundle", () => {
    const chart = parseBundleSpec({
      helm: {},
      targetCustomizations: [{ name: "eu", helm: { chart: "./other" } }],
    });
    expect(!chart.ok && chart.problems[0]).toMatchObject({
      path: "targetCustomizations[0].helm.chart",
      message: expect.stringContaining("same chart"),
    });
    const plain = parseBundleSpec({
      targetCustomizations: [{ name: "eu", helm: { values: {} } }],
    });
    expect(!plain.ok && plain.problems[0]?.path).toBe(
      "targetCustomizations[0].helm",
    );
  });
});

describe("merging values", () => {
  test("merges mappings recursively; anything else replaces", () => {
    expect(
      mergeHelmValues(
        { a: { b: 1, c: [1] }, d: { e: 1 }, f: 1 },
        { a: { c: [2] }, d: null, g: { h: 1 } },
      ),
    ).toEqual({ a: { b: 1, c: [2] }, d: null, f: 1, g: { h: 1 } });
  });

  test("values, then valuesFiles in order; the customization's layer over the bundle's; valuesFrom appended once", () => {
    const files: Record<string, Record<string, unknown>> = {
      "one.yaml": { x: 1, y: 1 },
      "two.yaml": { y: 2 },
      "eu.yaml": { z: 3 },
    };
    const from = { kind: "ConfigMap", name: "cm", key: "values.yaml" } as const;
    const merged = helmValuesFor(
      {
        values: { x: 0, y: 0, z: 0, w: 0 },
        valuesFiles: ["one.yaml", "two.yaml"],
        valuesFrom: [from],
      },
      {
        values: { w: 9, z: 9 },
        valuesFiles: ["eu.yaml"],
        valuesFrom: [from, { ...from, kind: "Secret" }],
      },
      (path) => files[path] ?? {},
    );
    expect(merged.values).toEqual({ x: 1, y: 2, z: 3, w: 9 });
    expect(merged.valuesFrom).toEqual([from, { ...from, kind: "Secret" }]);
  });

  test("the release name defaults to the bundle's name within Helm's 53 characters", () => {
    expect(releaseNameOf({}, "web")).toBe("web");
    expect(releaseNameOf({ releaseName: "r" }, "web")).toBe("r");
    expect(releaseNameOf({}, `${"a".repeat(52)}-b`)).toBe("a".repeat(52));
  });
});
