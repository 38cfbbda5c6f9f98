/**
 * KubeFleet's `sortingLabelKey` on a stage (docs/semantics.md#order-and-concurrency): inside each
 * group of the stage, members are taken by maintenance-window category first, then by the integer
 * value of that label (ascending), then by name; members without an integer value go after those
 * with one, by name, and `plan` warns about them. The key is validated like any label key.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Cluster } from "../src/cluster.js";
import { planStaged } from "../src/plan.js";
import { parseUpdateStrategy } from "../src/update-strategy.js";
import {
  DAY,
  HOUR,
  T0,
  cluster,
  group,
  oneOff,
  resolve,
  started,
  strategy,
} from "./staged-fixtures.js";

const KEY = "fleet.example.com/rollout-order";

/** A cluster of update group `g` with the given value of {@link KEY} (absent: no label). */
function ordered(
  name: string,
  value: string | undefined,
  extra: Partial<Parameters<typeof cluster>[1]> = {},
): Cluster {
  return cluster(name, {
    updateGroup: "g",
    labels: value === undefined ? {} : { [KEY]: value },
    ...extra,
  });
}

const sorted = (groups: Record<string, unknown>[] = [{ name: "g" }]) =>
  strategy({ stages: [{ name: "s", sortingLabelKey: KEY, groups }] });

const names = (run: ReturnType<typeof resolve>, g = "g"): string[] =>
  group(run, g).members.map((m) => m.name);

describe("parsing sortingLabelKey", () => {
  it("is accepted on a stage, where KubeFleet puts it, with or without a prefix", () => {
    for (const key of [KEY, "order", "rollout_order.v2"]) {
      const parsed = parseUpdateStrategy({
        stages: [{ name: "s", sortingLabelKey: key, groups: [{ name: "g" }] }],
      });
      expect(parsed.ok && parsed.value.stages[0]?.sortingLabelKey).toBe(key);
    }
  });

  it.each([
    {
      value: "bad key!",
      message:
        'label key "bad key!" must be at most 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric',
    },
    {
      value: "Example.com/order",
      message: 'label key prefix "Example.com" must be a DNS subdomain',
    },
    { value: "", message: "label key must not be empty" },
    { value: 7, message: "must be string" },
  ])(
    "rejects $value with the field path and the value",
    ({ value, message }) => {
      const parsed = parseUpdateStrategy({
        stages: [
          { name: "s", groups: [{ name: "g" }] },
          { name: "t", sortingLabelKey: value, groups: [{ name: "h" }] },
        ],
      });
      expect(parsed.ok ? [] : parsed.problems).toEqual([
        { path: "stages[1].sortingLabelKey", message, value },
      ]);
    },
  );
});

describe("member order by the sorting label", () => {
  it("integer value ascending, ties by name, then members without an integer value by name", () => {
    const run = resolve(sorted(), [
      ordered("c-1", "10"),
      ordered("c-2", "2"),
      ordered("c-3", undefined),
      ordered("c-4", "abc"),
      ordered("c-5", "2"),
      ordered("c-10", "007"),
      ordered("c-0", "9"),
    ]);
    expect(names(run)).toEqual([
      "c-2",
      "c-5",
      "c-10",
      "c-0",
      "c-1",
      "c-3",
      "c-4",
    ]);
  });

  it("compares integers exactly, however long (no floating-point rounding)", () => {
    const run = resolve(sorted(), [
      ordered("a", "9007199254740993"),
      ordered("b", "9007199254740992"),
      ordered("c", "100000000000000000000000000000"),
      ordered("d", "0"),
    ]);
    expect(names(run)).toEqual(["d", "b", "a", "c"]);
  });

  it("orders every group of the stage, and only that stage", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "s",
            sortingLabelKey: KEY,
            groups: [{ name: "g" }, { name: "h" }],
          },
          { name: "t", groups: [{ name: "u" }] },
        ],
      }),
      [
        ordered("g-a", "2"),
        ordered("g-b", "1"),
        cluster("h-a", { updateGroup: "h", labels: { [KEY]: "5" } }),
        cluster("h-b", { updateGroup: "h", labels: { [KEY]: "4" } }),
        cluster("u-a", { updateGroup: "u", labels: { [KEY]: "5" } }),
        cluster("u-b", { updateGroup: "u", labels: { [KEY]: "4" } }),
      ],
    );
    expect([names(run, "g"), names(run, "h"), names(run, "u")]).toEqual([
      ["g-b", "g-a"],
      ["h-b", "h-a"],
      ["u-a", "u-b"],
    ]);
  });

  it("orders the implicit group of a stage that selects its members itself", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "ring",
            memberSelector: { byLabel: "" },
            sortingLabelKey: KEY,
          },
        ],
      }),
      [ordered("x", "3"), ordered("y", "1"), ordered("z", "2")],
    );
    expect(names(run, "ring")).toEqual(["y", "z", "x"]);
  });

  it("starts members in that order, one slot at a time", () => {
    const run = resolve(sorted([{ name: "g", maxConcurrency: 2 }]), [
      ordered("a", "3"),
      ordered("b", "1"),
      ordered("c", undefined),
      ordered("d", "2"),
    ]);
    const { d, first } = started(run);
    expect(first).toEqual(["b", "d"]);
    expect(d.succeed("b")).toEqual(["a"]);
    expect(d.succeed("d")).toEqual(["c"]);
  });

  it("comes after the maintenance-window category: open windows first, then no window, each by label then name; closed windows last", () => {
    const open = oneOff(T0 - HOUR, T0 + DAY);
    const closed = oneOff(T0 + 2 * DAY, T0 + 3 * DAY);
    const run = resolve(sorted(), [
      ordered("open-late", "9", { maintenance: open }),
      ordered("open-early", "1", { maintenance: open }),
      ordered("open-unlabelled", undefined, { maintenance: open }),
      ordered("none-early", "0"),
      ordered("none-late", "5"),
      ordered("closed-first", "0", { maintenance: closed }),
    ]);
    const { d, first } = started(run);
    const order = [...first, ...d.drain()];
    expect(order).toEqual([
      "open-early",
      "open-late",
      "open-unlabelled",
      "none-early",
      "none-late",
    ]);
    expect(
      group(run, "g").members.find((m) => m.name === "closed-first")?.state,
    ).toBe("Pending");
    expect(d.tick(T0 + 2 * DAY)).toEqual(["closed-first"]);
  });
});

describe("plan with a sorting label", () => {
  it("lists clusters in that order, names the key, and warns about members without an integer value", () => {
    const s = sorted();
    const planned = planStaged(s, [
      ordered("c-1", "2"),
      ordered("c-2", "1"),
      ordered("c-3", undefined),
      ordered("c-4", "v1"),
    ]);
    if (!planned.ok) throw new Error("plan refused");
    const [wave] = planned.value.waves;
    expect(wave).toMatchObject({
      sortingLabelKey: KEY,
      groups: [{ clusters: ["c-2", "c-1", "c-3", "c-4"] }],
    });
    expect(planned.value.warnings).toEqual([
      {
        code: "SortingLabelMissing",
        message: `stage "s": 2 member(s) have no integer value for sortingLabelKey "${KEY}" and go after the others, by name: c-3, c-4`,
      },
    ]);
  });

  it("does not warn when every member has an integer value, and a stage without the key has none on its wave", () => {
    const planned = planStaged(
      strategy({
        stages: [
          { name: "s", sortingLabelKey: KEY, groups: [{ name: "g" }] },
          { name: "t", groups: [{ name: "h" }] },
        ],
      }),
      [ordered("c-1", "2"), cluster("h-1", { updateGroup: "h" })],
    );
    if (!planned.ok) throw new Error("plan refused");
    expect(planned.value.warnings).toEqual([]);
    expect(planned.value.waves[1]).not.toHaveProperty("sortingLabelKey");
  });
});

describe("the sorting label, as a property", () => {
  it("orders by (has an integer value, the value as a number, name) whatever the input order", () => {
    const valueArb = fc.oneof(
      fc.constant(undefined),
      fc.constant("x"),
      fc.bigInt({ min: 0n, max: 10n ** 25n }).map((n) => n.toString()),
      fc.nat(30).map(String),
      fc.nat(30).map((n) => `00${String(n)}`),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,6}[a-z0-9]$/), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.array(valueArb, { minLength: 12, maxLength: 12 }),
        fc.nat(),
        (clusterNames, values, rotate) => {
          const clusters = clusterNames.map((n, i) => ordered(n, values[i]));
          const shift = rotate % clusters.length;
          const rotated = [
            ...clusters.slice(shift),
            ...clusters.slice(0, shift),
          ];
          const order = names(resolve(sorted(), rotated));
          expect(names(resolve(sorted(), clusters))).toEqual(order);
          const key = (name: string): [number, bigint, string] => {
            const value = values[clusterNames.indexOf(name)];
            return value !== undefined && /^\d+$/.test(value)
              ? [0, BigInt(value), name]
              : [1, 0n, name];
          };
          const expected = [...clusterNames].sort((a, b) => {
            const [ha, va, na] = key(a);
            const [hb, vb, nb] = key(b);
            return (
              ha - hb ||
              (va < vb ? -1 : va > vb ? 1 : na < nb ? -1 : na > nb ? 1 : 0)
            );
          });
          expect(order).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
