import { describe, expect, it } from "vitest";
import {
  bundleSpecWarnings,
  parseBundleSpec,
  type FleetBundleSpec,
} from "../src/fleet/bundle-spec.js";
import { FLEET_STRATEGY_DEFAULTS } from "../src/fleet/strategy.js";
import { matchesSelector } from "../src/label-selector.js";

function spec(raw: unknown): FleetBundleSpec {
  const parsed = parseBundleSpec(raw, "bundle");
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

function problems(raw: unknown, path = "bundle") {
  const parsed = parseBundleSpec(raw, path);
  if (parsed.ok) throw new Error("accepted");
  return parsed.problems;
}

describe("parseBundleSpec", () => {
  it("reads a fleet.yaml with targets, customizations, a rolloutStrategy and paused", () => {
    const s = spec({
      name: "web",
      namespace: "web",
      targets: [
        { name: "prod", clusterSelector: { matchLabels: { env: "prod" } } },
        { name: "staging", clusterGroup: "staging" },
      ],
      targetCustomizations: [
        {
          name: "eu",
          clusterSelector: "region in (eu-west,eu-north)",
          namespace: "web-eu",
        },
        {
          name: "legacy",
          clusterGroupSelector: { matchLabels: { tier: "legacy" } },
          doNotDeploy: true,
        },
      ],
      rolloutStrategy: {
        maxUnavailable: "10%",
        partitions: [
          {
            name: "demoRollout",
            maxUnavailable: "10%",
            clusterSelector: { matchLabels: { env: "staging" } },
          },
          {
            name: "stable",
            maxUnavailable: "5%",
            clusterSelector: { matchLabels: { env: "prod" } },
          },
        ],
      },
      paused: true,
    });
    expect(s.name).toBe("web");
    expect(s.targetNamespace).toBe("web");
    expect(s.defaultNamespace).toBe("");
    expect(s.paused).toBe(true);
    expect(
      s.targets.map((t) => [t.name, t.clusterGroup, t.doNotDeploy]),
    ).toEqual([
      ["prod", undefined, false],
      ["staging", "staging", false],
    ]);
    const [eu, legacy] = s.targetCustomizations;
    expect(eu?.targetNamespace).toBe("web-eu");
    expect(eu?.defaultNamespace).toBeUndefined();
    expect(
      eu?.clusterSelector &&
        matchesSelector(eu.clusterSelector, { region: "eu-north" }),
    ).toBe(true);
    expect(legacy?.doNotDeploy).toBe(true);
    expect(s.rolloutStrategy.partitions.map((p) => p.name)).toEqual([
      "demoRollout",
      "stable",
    ]);
    expect(s.rolloutStrategy.maxUnavailable).toEqual({
      kind: "percent",
      value: 10,
    });
  });

  it("fills the defaults: no namespace, no targets, default strategy, not paused", () => {
    for (const raw of [undefined, null, {}]) {
      expect(parseBundleSpec(raw)).toEqual({
        ok: true,
        value: {
          defaultNamespace: "",
          targetNamespace: "",
          targets: [],
          targetCustomizations: [],
          rolloutStrategy: FLEET_STRATEGY_DEFAULTS,
          paused: false,
        },
      });
    }
    // YAML's empty fields are null: unset.
    expect(
      spec({
        namespace: null,
        defaultNamespace: null,
        targets: null,
        rolloutStrategy: null,
      }),
    ).toMatchObject({ defaultNamespace: "", targetNamespace: "", targets: [] });
  });

  it("refuses Helm options given at the top instead of under helm:", () => {
    const found = problems({ chart: "nginx", valuesFiles: ["v.yaml"] });
    expect(found.map((p) => [p.path, p.message])).toEqual([
      ["bundle.chart", "is a Helm option: put it under helm:"],
      ["bundle.valuesFiles", "is a Helm option: put it under helm:"],
    ]);
  });

  it("refuses unknown keys with a suggestion, and unsupported Fleet fields by name", () => {
    const found = problems({
      targets: [{ clusterSelecter: { matchLabels: { env: "prod" } } }],
      pasued: true,
      yaml: { overlays: ["prod"] },
      targetNamespace: "web",
    });
    expect(found).toEqual([
      {
        path: "bundle.targets[0].clusterSelecter",
        message: 'unknown field; did you mean "clusterSelector"?',
      },
      {
        path: "bundle.pasued",
        message: 'unknown field; did you mean "paused"?',
      },
      {
        path: "bundle.yaml",
        message:
          'fleet.yaml field "yaml" is not supported by flotilla: overlay files are not read: change objects per target with targetCustomizations[].patches',
        value: { overlays: ["prod"] },
      },
      {
        path: "bundle.targetNamespace",
        message:
          'is Fleet\'s internal name of the fleet.yaml field "namespace": write "namespace"',
        value: "web",
      },
    ]);
  });

  it("names the field path and value of every bad selector, name and namespace at once", () => {
    const found = problems({
      namespace: "Web_1",
      targets: [
        { clusterSelector: "env in (prod" },
        {
          clusterGroupSelector: {
            matchExpressions: [{ key: "tier", operator: "Among" }],
          },
        },
        { clusterName: "" },
      ],
      targetCustomizations: [{ clusterName: "c-1", namespace: "" }],
      paused: "yes",
    });
    expect(found.map((p) => p.path)).toEqual([
      "bundle.namespace",
      "bundle.targets[0].clusterSelector",
      "bundle.targets[1].clusterGroupSelector.matchExpressions[0].operator",
      "bundle.targets[2].clusterName",
      "bundle.targetCustomizations[0].namespace",
      "bundle.paused",
    ]);
    expect(found[1]).toMatchObject({
      message: expect.stringMatching(/invalid selector at position 13/),
      value: "env in (prod",
    });
    expect(found[2]).toMatchObject({ value: "Among" });
    expect(found[5]).toEqual({
      path: "bundle.paused",
      message: "must be boolean",
      value: "yes",
    });
  });

  it("reports rolloutStrategy problems with its own paths beside the others", () => {
    const found = problems({
      targets: "everything",
      rolloutStrategy: { maxUnavailable: "abc", partitions: [{ name: "" }] },
    });
    expect(found.map((p) => p.path)).toEqual([
      "bundle.targets",
      "bundle.rolloutStrategy.maxUnavailable",
      "bundle.rolloutStrategy.partitions[0].name",
    ]);
  });

  it("refuses a document that is not an object", () => {
    expect(problems(["targets"], "")).toEqual([
      { path: "", message: "must be object", value: ["targets"] },
    ]);
  });
});

describe("bundleSpecWarnings", () => {
  it("warns that no targets means no clusters", () => {
    expect(bundleSpecWarnings(spec({})).map((w) => w.code)).toEqual([
      "NoTargets",
    ]);
  });

  it("warns about entries that set no criterion (they match nothing)", () => {
    const warnings = bundleSpecWarnings(
      spec({
        targets: [{ name: "all" }, { clusterSelector: {} }],
        targetCustomizations: [{ namespace: "x" }],
      }),
    );
    expect(warnings).toEqual([
      {
        code: "TargetMatchesNothing",
        message: expect.stringMatching(/^targets\[0\] \("all"\) sets none/),
      },
      {
        code: "CustomizationMatchesNothing",
        message: expect.stringMatching(/^targetCustomizations\[0\] sets none/),
      },
    ]);
  });
});
