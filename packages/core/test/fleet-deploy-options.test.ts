import { describe, expect, it } from "vitest";
import {
  parseBundleSpec,
  type FleetBundleSpec,
} from "../src/fleet/bundle-spec.js";
import {
  driftCorrectionFor,
  namespaceMetadataFor,
} from "../src/fleet/deploy-options.js";
import { changeIntent, emptyIntent, parseIntent } from "../src/intent.js";

function spec(raw: unknown): FleetBundleSpec {
  const parsed = parseBundleSpec(raw, "bundle");
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

function problems(raw: unknown) {
  const parsed = parseBundleSpec(raw, "bundle");
  if (parsed.ok) throw new Error("accepted");
  return parsed.problems;
}

describe("fleet.yaml correctDrift", () => {
  it("reads the mapping at the top and per customization, defaults false", () => {
    const s = spec({
      correctDrift: { enabled: true },
      targetCustomizations: [
        {
          clusterName: "a",
          correctDrift: { enabled: true, force: true, keepFailHistory: true },
        },
      ],
    });
    expect(s.correctDrift).toEqual({
      enabled: true,
      force: false,
      keepFailHistory: false,
    });
    expect(s.targetCustomizations[0]?.correctDrift).toEqual({
      enabled: true,
      force: true,
      keepFailHistory: true,
    });
  });

  it("refuses a boolean, a non-boolean field and an unknown field, with path and value", () => {
    expect(problems({ correctDrift: true })).toEqual([
      {
        path: "bundle.correctDrift",
        message:
          "must be a mapping {enabled, force, keepFailHistory} of booleans",
        value: true,
      },
    ]);
    const found = problems({
      targetCustomizations: [
        { clusterName: "a", correctDrift: { enabled: "yes", forse: true } },
      ],
    });
    expect(found).toHaveLength(2);
    expect(found[0]).toMatchObject({
      path: "bundle.targetCustomizations[0].correctDrift.enabled",
      value: "yes",
    });
    expect(found[1]).toMatchObject({
      path: "bundle.targetCustomizations[0].correctDrift.forse",
      message: 'unknown field; did you mean "force"?',
    });
  });

  it("takes a customization's correctDrift whole over the bundle's; disabled is none", () => {
    const s = spec({
      correctDrift: { enabled: true, force: true },
      targetCustomizations: [
        { clusterName: "a", correctDrift: { enabled: true } },
        { clusterName: "b", correctDrift: { enabled: false, force: true } },
        { clusterName: "c", namespaceLabels: { x: "y" } },
      ],
    });
    const [a, b, c] = s.targetCustomizations;
    expect(driftCorrectionFor(s, a)).toMatchObject({ force: false });
    expect(driftCorrectionFor(s, b)).toBeUndefined();
    expect(driftCorrectionFor(s, c)).toMatchObject({ force: true });
    expect(driftCorrectionFor(s, undefined)).toMatchObject({ force: true });
    expect(driftCorrectionFor(spec({}), undefined)).toBeUndefined();
  });
});

describe("fleet.yaml namespaceLabels and namespaceAnnotations", () => {
  it("merges a customization's entries key by key over the bundle's", () => {
    const s = spec({
      namespaceLabels: { team: "web", tier: "front" },
      namespaceAnnotations: { "example.com/owner": "web team" },
      targetCustomizations: [
        {
          clusterName: "a",
          namespaceLabels: { tier: "edge", "example.com/zone": "eu" },
          namespaceAnnotations: { note: "" },
        },
      ],
    });
    expect(namespaceMetadataFor(s, s.targetCustomizations[0])).toEqual({
      labels: { team: "web", tier: "edge", "example.com/zone": "eu" },
      annotations: { "example.com/owner": "web team", note: "" },
    });
    expect(namespaceMetadataFor(s, undefined)).toEqual({
      labels: { team: "web", tier: "front" },
      annotations: { "example.com/owner": "web team" },
    });
  });

  it("refuses label keys and values, and annotation keys, that Kubernetes refuses", () => {
    const found = problems({
      namespaceLabels: { "bad key": "x", ok: "not ok!" },
      targetCustomizations: [
        {
          clusterName: "a",
          namespaceAnnotations: { "-x": "fine", y: 3 },
        },
      ],
    });
    expect(found.map((p) => p.path).sort()).toEqual([
      "bundle.namespaceLabels.bad key",
      "bundle.namespaceLabels.ok",
      "bundle.targetCustomizations[0].namespaceAnnotations.-x",
      "bundle.targetCustomizations[0].namespaceAnnotations.y",
    ]);
    const at = (path: string) => found.find((p) => p.path === path);
    expect(at("bundle.namespaceLabels.ok")).toMatchObject({
      value: "not ok!",
    });
    expect(
      at("bundle.targetCustomizations[0].namespaceAnnotations.y"),
    ).toMatchObject({ value: 3 });
    expect(problems({ namespaceLabels: ["a"] })).toEqual([
      {
        path: "bundle.namespaceLabels",
        message: "must be a map of label keys to string values",
        value: ["a"],
      },
    ]);
  });

  it("no longer calls the three fields unsupported", () => {
    const s = spec({
      correctDrift: null,
      namespaceLabels: null,
      namespaceAnnotations: {},
    });
    expect(s.correctDrift).toBeUndefined();
    expect(s.namespaceLabels).toBeUndefined();
    expect(s.namespaceAnnotations).toBeUndefined();
  });
});

describe("correctDrift in the intent", () => {
  const base = {
    type: "SetBundle" as const,
    bundle: "web",
    revision: "r1",
    digest: "sha256:x",
  };

  it("changes the intent, not the revision, when only correctDrift changes", () => {
    const first = changeIntent(emptyIntent("c1"), base);
    const enabled = changeIntent(first, {
      ...base,
      correctDrift: { force: false },
    });
    expect(enabled.generation).toBe(first.generation + 1);
    expect(enabled.bundles["web"]).toEqual({
      revision: "r1",
      digest: "sha256:x",
      correctDrift: { force: false },
    });
    expect(
      changeIntent(enabled, { ...base, correctDrift: { force: false } }),
    ).toBe(enabled);
    const forced = changeIntent(enabled, {
      ...base,
      correctDrift: { force: true },
    });
    expect(forced.generation).toBe(enabled.generation + 1);
    const off = changeIntent(forced, base);
    expect(off.bundles["web"]).toEqual({ revision: "r1", digest: "sha256:x" });
  });

  it("is read back by the agent's parser, strictly", () => {
    const intent = changeIntent(emptyIntent("c1"), {
      ...base,
      correctDrift: { force: true },
    });
    expect(parseIntent(JSON.parse(JSON.stringify(intent))).ok).toBe(true);
    const bad = parseIntent({
      ...intent,
      bundles: { web: { ...intent.bundles["web"], correctDrift: true } },
    });
    expect(bad.ok).toBe(false);
  });
});
