import { describe, expect, it } from "vitest";
import {
  EVERYTHING,
  matchesSelector,
  parseLabels,
  parseSelectorString,
  parseSelectorStruct,
  selectorToString,
  type LabelSelector,
  type Labels,
} from "../src/label-selector.js";

function str(text: string): LabelSelector {
  const result = parseSelectorString(text, "sel");
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

function struct(raw: unknown): LabelSelector {
  const result = parseSelectorStruct(raw, "sel");
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

function stringError(text: string): string {
  const result = parseSelectorString(text, "stages[0].memberSelector.byLabel");
  if (result.ok) throw new Error(`accepted ${JSON.stringify(text)}`);
  expect(result.problems).toHaveLength(1);
  expect(result.problems[0]?.path).toBe("stages[0].memberSelector.byLabel");
  return result.problems[0]?.message ?? "";
}

const prod: Labels = { env: "prod", tier: "web" };
const staging: Labels = { env: "staging" };
const bare: Labels = {};

describe("string form: the seven operators", () => {
  it.each([
    ["env=prod", [true, false, false]],
    ["env==prod", [true, false, false]],
    ["env!=prod", [false, true, true]],
    ["env in (prod,staging)", [true, true, false]],
    ["env notin (prod)", [false, true, true]],
    ["tier", [true, false, false]],
    ["!tier", [false, true, true]],
  ] as const)(
    "%s on (prod, staging, no labels) matches %o",
    (text, expected) => {
      const sel = str(text);
      expect([prod, staging, bare].map((l) => matchesSelector(sel, l))).toEqual(
        expected,
      );
    },
  );

  it("matches clusters that lack the key for != and notin (Kubernetes semantics)", () => {
    expect(matchesSelector(str("region!=eu"), bare)).toBe(true);
    expect(matchesSelector(str("region notin (eu,us)"), bare)).toBe(true);
    expect(matchesSelector(str("region in (eu,us)"), bare)).toBe(false);
    expect(matchesSelector(str("region=eu"), bare)).toBe(false);
  });

  it("ANDs comma-separated requirements and tolerates spaces", () => {
    const sel = str(" env = prod , tier in ( web , api ) , !canary ");
    expect(matchesSelector(sel, prod)).toBe(true);
    expect(matchesSelector(sel, { ...prod, canary: "true" })).toBe(false);
    expect(matchesSelector(sel, { env: "prod", tier: "db" })).toBe(false);
  });

  it("accepts prefixed keys and an empty value after =", () => {
    expect(
      matchesSelector(str("example.com/team=a"), { "example.com/team": "a" }),
    ).toBe(true);
    expect(matchesSelector(str("env="), { env: "" })).toBe(true);
    expect(matchesSelector(str("env="), bare)).toBe(false);
  });

  it("treats an empty string as the empty selector, which matches every cluster", () => {
    expect(str("").requirements).toEqual([]);
    expect(str("   ").requirements).toEqual([]);
    for (const labels of [prod, staging, bare])
      expect(matchesSelector(str(""), labels)).toBe(true);
    expect(matchesSelector(EVERYTHING, bare)).toBe(true);
  });
});

describe("string form: malformed selectors are rejected with the 1-based position", () => {
  it('reports the missing ")" at the end of "env in (a,b"', () => {
    expect(stringError("env in (a,b")).toBe(
      'invalid selector at position 12: missing ")"',
    );
  });

  it.each([
    ["env in a,b)", 8, /expected "\("/],
    ["env=prod,", 10, /expected a label key/],
    [",env=prod", 1, /expected a label key/],
    ["env=prod tier=web", 10, /expected ","/],
    ["env >= 3", 5, /expected one of/],
    ["env in (a b)", 11, /expected "," or "\)"/],
    ["!", 2, /expected a label key/],
    ["env=pr@d", 7, /expected ","/],
    ["-env=a", 1, /label key/],
    ["env=-a", 5, /label value/],
    ["bad_prefix!/k=v", 11, /expected one of/],
  ] as const)("%s fails at position %i", (text, position, message) => {
    const error = stringError(text);
    expect(error).toContain(`position ${String(position)}:`);
    expect(error).toMatch(message);
  });

  it("rejects an empty value list", () => {
    expect(stringError("env in ()")).toMatch(/a value list must not be empty/);
  });

  it("rejects keys and values longer than 63 characters", () => {
    expect(stringError(`${"k".repeat(64)}=v`)).toMatch(/at most 63/);
    expect(stringError(`k=${"v".repeat(64)}`)).toMatch(/at most 63/);
    expect(stringError("Bad.Prefix/k=v")).toMatch(/DNS subdomain/);
  });
});

describe("struct form", () => {
  it("ANDs matchLabels and matchExpressions", () => {
    const sel = struct({
      matchLabels: { env: "prod" },
      matchExpressions: [
        { key: "tier", operator: "In", values: ["web", "api"] },
        { key: "canary", operator: "DoesNotExist" },
      ],
    });
    expect(matchesSelector(sel, prod)).toBe(true);
    expect(matchesSelector(sel, { ...prod, canary: "yes" })).toBe(false);
    expect(matchesSelector(sel, staging)).toBe(false);
  });

  it("gives NotIn and DoesNotExist to clusters that lack the key, Exists only to those with it", () => {
    const notIn = struct({
      matchExpressions: [{ key: "region", operator: "NotIn", values: ["eu"] }],
    });
    const exists = struct({
      matchExpressions: [{ key: "region", operator: "Exists" }],
    });
    expect(matchesSelector(notIn, bare)).toBe(true);
    expect(matchesSelector(notIn, { region: "eu" })).toBe(false);
    expect(matchesSelector(exists, bare)).toBe(false);
    expect(matchesSelector(exists, { region: "" })).toBe(true);
  });

  it("matches every cluster with an empty struct {}", () => {
    expect(matchesSelector(struct({}), bare)).toBe(true);
    expect(matchesSelector(struct({ matchLabels: {} }), prod)).toBe(true);
  });

  it("means the same as the equivalent string form", () => {
    const a = struct({
      matchLabels: { env: "prod" },
      matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }],
    });
    expect(selectorToString(a)).toBe("env=prod,tier!=db");
    const b = str(selectorToString(a));
    for (const labels of [prod, staging, bare, { env: "prod", tier: "db" }]) {
      expect(matchesSelector(b, labels)).toBe(matchesSelector(a, labels));
    }
  });

  it("rejects bad shapes with the field path", () => {
    const bad = parseSelectorStruct(
      {
        matchLabel: { env: "prod" },
        matchLabels: { "bad key": "x", ok: 3 },
        matchExpressions: [
          { key: "a", operator: "Equals", values: ["x"] },
          { key: "b", operator: "In" },
          { key: "c", operator: "Exists", values: ["x"] },
        ],
      },
      "partitions[0].clusterSelector",
    );
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    const paths = bad.problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "partitions[0].clusterSelector.matchLabel",
        "partitions[0].clusterSelector.matchLabels.bad key",
        "partitions[0].clusterSelector.matchLabels.ok",
        "partitions[0].clusterSelector.matchExpressions[0].operator",
      ]),
    );
  });

  it("requires values for In/NotIn and forbids them for Exists/DoesNotExist", () => {
    const noValues = parseSelectorStruct(
      { matchExpressions: [{ key: "b", operator: "In" }] },
      "s",
    );
    expect(noValues.ok ? [] : noValues.problems.map((p) => p.message)).toEqual([
      "must not be empty for operator In",
    ]);
    const extra = parseSelectorStruct(
      { matchExpressions: [{ key: "c", operator: "Exists", values: ["x"] }] },
      "s",
    );
    expect(extra.ok ? [] : extra.problems.map((p) => p.message)).toEqual([
      "must be empty for operator Exists",
    ]);
  });

  it("rejects a non-object selector", () => {
    expect(parseSelectorStruct("env=prod", "s").ok).toBe(false);
    expect(parseSelectorStruct([], "s").ok).toBe(false);
    expect(parseSelectorStruct(null, "s").ok).toBe(false);
  });
});

describe("labels", () => {
  it("accepts absent labels as none and rejects invalid keys and values", () => {
    expect(parseLabels(undefined, "labels")).toEqual({ ok: true, value: {} });
    const bad = parseLabels({ "-x": "a", y: "b c" }, "labels");
    expect(bad.ok ? [] : bad.problems.map((p) => p.path)).toEqual([
      "labels.-x",
      "labels.y",
    ]);
  });
});
