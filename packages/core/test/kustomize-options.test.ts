import { describe, expect, it } from "vitest";
import { parseBundleSpec } from "../src/fleet/bundle-spec.js";
import {
  kustomizationFileIn,
  parseKustomizeOptions,
} from "../src/fleet/kustomize-options.js";

describe("fleet.yaml kustomize", () => {
  it("reads the bundle's dir and each customization's, normalized", () => {
    const parsed = parseBundleSpec(
      {
        kustomize: { dir: "./overlays/dev/" },
        targetCustomizations: [
          { clusterSelector: {}, kustomize: { dir: "overlays/prod" } },
          { clusterName: "x", namespace: "web" },
        ],
      },
      "bundle",
    );
    expect(parsed.ok && parsed.value.kustomize).toEqual({
      dir: "overlays/dev",
    });
    expect(
      parsed.ok && parsed.value.targetCustomizations.map((c) => c.kustomize),
    ).toEqual([{ dir: "overlays/prod" }, undefined]);
  });

  it("reads an empty kustomize and dir '.' as the bundle's top", () => {
    expect(parseKustomizeOptions(null, "kustomize")).toEqual({
      ok: true,
      value: { dir: "" },
    });
    expect(parseKustomizeOptions({ dir: "." }, "kustomize")).toEqual({
      ok: true,
      value: { dir: "" },
    });
  });

  it.each([
    ["/etc/kustomize", "not an absolute path"],
    ["overlays/../../secrets", "must stay inside the bundle directory (no ..)"],
    ["..", "must stay inside the bundle directory (no ..)"],
    ["https://github.com/org/repo//base", "not a URL"],
    ["overlays\\dev", "not \\"],
  ])("refuses dir %j naming the field and the value", (dir, message) => {
    const parsed = parseBundleSpec(
      { targetCustomizations: [{ clusterName: "a", kustomize: { dir } }] },
      "bundle",
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toHaveLength(1);
    expect(parsed.problems[0]?.path).toBe(
      "bundle.targetCustomizations[0].kustomize.dir",
    );
    expect(parsed.problems[0]?.value).toBe(dir);
    expect(parsed.problems[0]?.message).toContain(message);
  });

  it("refuses unknown keys, a dir that is not a string, and kustomize beside helm", () => {
    const parsed = parseBundleSpec(
      {
        helm: { chart: "./chart" },
        kustomize: { dir: "a" },
        targetCustomizations: [{ clusterName: "a", kustomize: { dir: "b" } }],
      },
      "bundle",
    );
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problems.map((p) => p.path)).toEqual([
      "bundle.kustomize",
      "bundle.targetCustomizations[0].kustomize",
    ]);
    expect(parseKustomizeOptions({ dri: "a", dir: 3 }, "kustomize")).toEqual({
      ok: false,
      problems: [
        {
          path: "kustomize.dri",
          message: 'unknown field; did you mean "dir"?',
        },
        { path: "kustomize.dir", message: "must be a string", value: 3 },
      ],
    });
    expect(parseKustomizeOptions(["a"], "kustomize").ok).toBe(false);
  });

  it("finds a directory's kustomization file by kustomize's three names", () => {
    const paths = new Set([
      "base/kustomization.yml",
      "overlays/dev/Kustomization",
      "kustomization.yaml",
      "plain/app.yaml",
    ]);
    expect(kustomizationFileIn("", paths)).toBe("kustomization.yaml");
    expect(kustomizationFileIn("base", paths)).toBe("base/kustomization.yml");
    expect(kustomizationFileIn("overlays/dev", paths)).toBe(
      "overlays/dev/Kustomization",
    );
    expect(kustomizationFileIn("plain", paths)).toBeUndefined();
  });
});
