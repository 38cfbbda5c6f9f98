import { describe, expect, test } from "vitest";
import { parseWith } from "../src/schema.js";
import {
  availableVersionsField,
  compareKubernetesVersions,
  compareNodeImageVersions,
  formatKubernetesVersion,
  isOfferedIn,
  kubernetesVersionOf,
  minorDistance,
  minorOf,
  parseKubernetesVersion,
  type KubernetesVersion,
} from "../src/versions/version.js";

function v(text: string): KubernetesVersion {
  const parsed = parseKubernetesVersion(text);
  if (!parsed.ok) throw new Error(`bad test version ${text}`);
  return parsed.value;
}

describe("parseKubernetesVersion", () => {
  test.each([
    ["1.30.5", { major: 1, minor: 30, patch: 5 }],
    ["v1.30.5", { major: 1, minor: 30, patch: 5 }],
    ["1.30", { major: 1, minor: 30 }],
    ["v1.30", { major: 1, minor: 30 }],
    ["1.0.0", { major: 1, minor: 0, patch: 0 }],
    ["1.100.10", { major: 1, minor: 100, patch: 10 }],
  ])("accepts %s", (text, expected) => {
    expect(parseKubernetesVersion(text)).toEqual({ ok: true, value: expected });
  });

  test.each([
    ["", 'must be a version like "1.30" or "1.30.5"'],
    ["1", 'must be a version like "1.30" or "1.30.5"'],
    ["1.30.5.1", 'must be a version like "1.30" or "1.30.5"'],
    ["V1.30.5", 'must be a version like "1.30" or "1.30.5"'],
    [" 1.30.5", 'must be a version like "1.30" or "1.30.5"'],
    ["1.30.5-rc.1", 'must be a version like "1.30" or "1.30.5"'],
    ["1.30.x", 'must be a version like "1.30" or "1.30.5"'],
    [
      "1.030.5",
      'must be a version like "1.30" or "1.30.5" without leading zeros',
    ],
    [
      "1.30.05",
      'must be a version like "1.30" or "1.30.5" without leading zeros',
    ],
  ])("rejects %j with a message and the value", (text, message) => {
    expect(parseKubernetesVersion(text)).toEqual({
      ok: false,
      problems: [{ path: "", message, value: text }],
    });
  });

  test("full form requires the patch, minor form forbids it", () => {
    expect(parseKubernetesVersion("1.30", "full")).toEqual({
      ok: false,
      problems: [
        {
          path: "",
          message:
            'must be a version like "1.30.5": the patch number is required',
          value: "1.30",
        },
      ],
    });
    expect(parseKubernetesVersion("1.30.5", "minor")).toEqual({
      ok: false,
      problems: [
        {
          path: "",
          message:
            'must be a minor version like "1.30": "{major}.{minor}" without a patch',
          value: "1.30.5",
        },
      ],
    });
    expect(parseKubernetesVersion("v1.30", "minor")).toEqual({
      ok: true,
      value: { major: 1, minor: 30 },
    });
  });

  test("kubernetesVersionOf returns undefined for absent or malformed text", () => {
    expect(kubernetesVersionOf(undefined)).toBeUndefined();
    expect(kubernetesVersionOf("latest")).toBeUndefined();
    expect(kubernetesVersionOf("v1.29.2")).toEqual({
      major: 1,
      minor: 29,
      patch: 2,
    });
  });
});

describe("ordering and formatting", () => {
  test("formats without the leading v and with or without the patch", () => {
    expect(formatKubernetesVersion(v("v1.30.5"))).toBe("1.30.5");
    expect(formatKubernetesVersion(v("1.30"))).toBe("1.30");
    expect(minorOf(v("1.30.5"))).toBe("1.30");
  });

  test("compares numerically, not as text (1.9 < 1.10)", () => {
    expect(compareKubernetesVersions(v("1.9.0"), v("1.10.0"))).toBeLessThan(0);
    expect(
      compareKubernetesVersions(v("1.30.10"), v("1.30.9")),
    ).toBeGreaterThan(0);
    expect(compareKubernetesVersions(v("v1.30.5"), v("1.30.5"))).toBe(0);
    expect(compareKubernetesVersions(v("2.0.0"), v("1.99.99"))).toBeGreaterThan(
      0,
    );
  });

  test("a minor-only version sorts before every patch of its minor and after older minors", () => {
    expect(compareKubernetesVersions(v("1.30"), v("1.30.0"))).toBeLessThan(0);
    expect(compareKubernetesVersions(v("1.30"), v("1.29.99"))).toBeGreaterThan(
      0,
    );
    expect(compareKubernetesVersions(v("1.30"), v("1.30"))).toBe(0);
  });

  test("minorDistance counts minors, signed, ignoring patches; across majors it is infinite", () => {
    expect(minorDistance(v("1.28.3"), v("1.30.0"))).toBe(2);
    expect(minorDistance(v("1.29"), v("1.30.5"))).toBe(1);
    expect(minorDistance(v("1.30.9"), v("1.30.0"))).toBe(0);
    expect(minorDistance(v("1.31.0"), v("1.30.0"))).toBe(-1);
    expect(minorDistance(v("1.99.0"), v("2.0.0"))).toBe(Infinity);
    expect(minorDistance(v("2.0.0"), v("1.99.0"))).toBe(-Infinity);
  });
});

describe("compareNodeImageVersions", () => {
  test.each([
    ["20348.2582.240716", "20348.2582.240916", -1],
    ["202603.01.0", "202602.28.0", 1],
    ["202603.9.0", "202603.10.0", -1], // numeric, not text, order
    ["202603.01.0", "202603.1.0", -1], // numerically equal: byte order keeps the order total
    ["1.2", "1.2.0", -1], // a prefix is older
    ["1.2-beta", "1.2-alpha", 1], // words compare byte-wise
    ["1.2.3", "1.2.beta", -1], // numbers before words
    ["123456789012345678901.1", "123456789012345678902.0", -1], // longer than a double holds exactly
    ["1.0", "1.0", 0],
  ])("%s vs %s → %i", (a, b, sign) => {
    expect(Math.sign(compareNodeImageVersions(a, b))).toBe(sign);
    expect(Math.sign(compareNodeImageVersions(b, a))).toBe(0 - sign || 0);
  });
});

describe("availableVersionsField", () => {
  test("parses the documented example and normalizes a leading v", () => {
    const parsed = parseWith(availableVersionsField, {
      kubernetes: [
        { version: "1.30.5" },
        { version: "1.29.9", lts: true },
        { version: "1.31.0", preview: true },
        { version: "v1.31.2", regions: ["westeurope"] },
      ],
      nodeImages: [
        {
          family: "AKSUbuntu-2204gen2containerd",
          version: "202603.01.0",
          regions: ["westeurope", "eastus"],
        },
        { family: "AKSWindows-2022-containerd", version: "20348.2582.240916" },
      ],
    });
    expect(parsed.ok && parsed.value.kubernetes[3]).toEqual({
      version: "1.31.2",
      regions: ["westeurope"],
    });
    expect(parsed.ok && parsed.value.nodeImages).toHaveLength(2);
  });

  test("both lists default to empty", () => {
    expect(parseWith(availableVersionsField, {})).toEqual({
      ok: true,
      value: { kubernetes: [], nodeImages: [] },
    });
  });

  test("reports every bad field with its path and value", () => {
    const parsed = parseWith(
      availableVersionsField,
      {
        kubernetes: [
          { version: "1.30" },
          { version: "1.29.1", regions: [] },
          { version: "1.28.1", lst: true },
        ],
        nodeImages: [{ family: "", version: "2026 03" }],
      },
      "available",
    );
    expect(parsed).toEqual({
      ok: false,
      problems: [
        {
          path: "available.kubernetes[0].version",
          message:
            'must be a version like "1.30.5": the patch number is required',
          value: "1.30",
        },
        {
          path: "available.kubernetes[1].regions",
          message:
            "must list at least one region (omit the field for everywhere)",
          value: [],
        },
        {
          path: "available.kubernetes[2].lst",
          message: 'unknown field; did you mean "lts"?',
        },
        {
          path: "available.nodeImages[0].family",
          message: "must not be empty",
          value: "",
        },
        {
          path: "available.nodeImages[0].version",
          message: 'must be a version like "202603.01.0"',
          value: "2026 03",
        },
      ],
    });
  });

  test("rejects a version listed twice", () => {
    const parsed = parseWith(availableVersionsField, {
      kubernetes: [
        { version: "1.30.5" },
        { version: "v1.30.5", regions: ["eastus"] },
      ],
      nodeImages: [
        { family: "A", version: "1" },
        { family: "B", version: "1" },
        { family: "A", version: "1" },
      ],
    });
    expect(parsed).toEqual({
      ok: false,
      problems: [
        {
          path: "kubernetes[1].version",
          message: "duplicate version; first listed at kubernetes[0]",
          value: "1.30.5",
        },
        {
          path: "nodeImages[2].version",
          message:
            "duplicate image version for this family; first listed at nodeImages[0]",
          value: "1",
        },
      ],
    });
  });
});

test("isOfferedIn: unrestricted offers reach everyone; restricted ones only listed regions, never an unknown region", () => {
  expect(isOfferedIn({}, undefined)).toBe(true);
  expect(isOfferedIn({}, "eastus")).toBe(true);
  expect(isOfferedIn({ regions: ["westeurope"] }, "westeurope")).toBe(true);
  expect(isOfferedIn({ regions: ["westeurope"] }, "eastus")).toBe(false);
  expect(isOfferedIn({ regions: ["westeurope"] }, undefined)).toBe(false);
});
