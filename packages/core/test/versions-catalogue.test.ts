/**
 * Catalogue releases: a release of a version already offered replaces its offer (a preview turns
 * GA, a version reaches more regions); new versions are added; nothing else changes.
 */
import { describe, expect, it } from "vitest";
import { describeRelease, withRelease } from "../src/versions/catalogue.js";

const F = "AKSUbuntu-2204gen2containerd";

describe("withRelease", () => {
  it("adds new offers and replaces offers of the same version, family included", () => {
    const before = {
      kubernetes: [{ version: "1.31.2" }, { version: "1.32.0", preview: true }],
      nodeImages: [
        { family: F, version: "202603.01.0", regions: ["westeurope"] },
        { family: "Other", version: "202603.01.0" },
      ],
    };
    const after = withRelease(before, {
      kubernetes: [{ version: "1.32.0" }, { version: "1.31.3" }],
      nodeImages: [
        {
          family: F,
          version: "202603.01.0",
          regions: ["westeurope", "eastus"],
        },
      ],
    });
    expect(after).toEqual({
      kubernetes: [
        { version: "1.31.2" },
        { version: "1.32.0" },
        { version: "1.31.3" },
      ],
      nodeImages: [
        {
          family: F,
          version: "202603.01.0",
          regions: ["westeurope", "eastus"],
        },
        { family: "Other", version: "202603.01.0" },
      ],
    });
    // The catalogue it was given is left as it was.
    expect(before.kubernetes[1]).toEqual({ version: "1.32.0", preview: true });
  });

  it("describes a release in one line", () => {
    expect(
      describeRelease({
        kubernetes: [
          { version: "1.33.0", preview: true },
          { version: "1.28.15", lts: true, regions: ["eastus"] },
        ],
        nodeImages: [{ family: F, version: "202603.08.0" }],
      }),
    ).toBe(
      `Kubernetes 1.33.0 (preview); Kubernetes 1.28.15 (LTS) in eastus; node image ${F} 202603.08.0`,
    );
  });
});
