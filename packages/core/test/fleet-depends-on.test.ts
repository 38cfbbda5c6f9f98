/**
 * fleet.yaml `dependsOn` and `labels` (docs/semantics.md#dependencies-between-bundles): parsing,
 * cycles by name and by selector, and the per-cluster hold decision in a pass.
 */
import { describe, expect, it } from "vitest";
import { parseBundleSpec } from "../src/fleet/bundle-spec.js";
import {
  cycleText,
  dependencyHolds,
  dependentsOf,
  findDependencyCycle,
  parseDependsOn,
  type BundleDependency,
  type DependencyNode,
  type DependencyState,
} from "../src/fleet/depends-on.js";
import type { BundleClusterState } from "../src/fleet/rollout-pass.js";
import { rolloutPass } from "../src/fleet/rollout-pass.js";
import {
  FLEET_YAML_KEYS,
  SUPPORTED_BUNDLE_KEYS,
  UNSUPPORTED_FLEET_KEYS,
} from "../src/fleet/fleet-yaml-keys.js";
import { fleetOf, readyAt, strategy } from "./fleet-fixtures.js";

function deps(raw: unknown): readonly BundleDependency[] {
  const parsed = parseDependsOn(raw, "dependsOn");
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

function node(
  name: string,
  dependsOn: unknown = [],
  labels: Record<string, string> = {},
): DependencyNode {
  return { name, labels, dependsOn: deps(dependsOn) };
}

function state(
  name: string,
  states: Record<string, BundleClusterState>,
  labels: Record<string, string> = {},
): DependencyState {
  return { name, labels, states: new Map(Object.entries(states)) };
}

describe("fleet.yaml labels and dependsOn", () => {
  it("are supported keys, no longer refused as unsupported", () => {
    for (const key of ["labels", "dependsOn"]) {
      expect(SUPPORTED_BUNDLE_KEYS).toContain(key);
      expect(Object.keys(UNSUPPORTED_FLEET_KEYS)).not.toContain(key);
      expect(FLEET_YAML_KEYS).toContain(key);
    }
  });

  it("parses labels and both entry forms", () => {
    const parsed = parseBundleSpec(
      {
        labels: { tier: "app", "example.com/team": "web" },
        dependsOn: [
          { name: "db" },
          { selector: { matchLabels: { tier: "infra" } } },
          {
            selector: {
              matchExpressions: [
                { key: "tier", operator: "In", values: ["cache", "queue"] },
              ],
            },
          },
        ],
      },
      "bundle",
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.labels).toEqual({
      tier: "app",
      "example.com/team": "web",
    });
    const [byName, byLabels, byExpression] = parsed.value.dependsOn ?? [];
    expect(byName).toEqual({ name: "db" });
    expect(byLabels?.selector?.source).toBeDefined();
    expect(byExpression?.selector?.requirements).toEqual([
      { key: "tier", operator: "In", values: ["cache", "queue"] },
    ]);
  });

  it("leaves both unset when absent or empty", () => {
    const parsed = parseBundleSpec({ labels: {}, dependsOn: [] }, "bundle");
    expect(parsed.ok && parsed.value.labels).toBeUndefined();
    expect(parsed.ok && parsed.value.dependsOn).toBeUndefined();
  });

  it("refuses bad labels with the path and value", () => {
    const parsed = parseBundleSpec(
      { labels: { "bad key!": "x", tier: "no spaces" } },
      "bundle",
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map((p) => p.path)).toEqual([
      "bundle.labels.bad key!",
      "bundle.labels.tier",
    ]);
    expect(parsed.problems[1]?.value).toBe("no spaces");
  });

  it("refuses entries with both name and selector, or neither, with the path", () => {
    const parsed = parseBundleSpec(
      {
        dependsOn: [
          { name: "db", selector: { matchLabels: { a: "b" } } },
          {},
          { name: "Not_A_Name" },
          { selector: { matchLabels: { "bad key!": "x" } } },
          { nme: "db" },
        ],
      },
      "bundle",
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const byPath = parsed.problems.map((p) => `${p.path}: ${p.message}`);
    expect(byPath).toEqual([
      "bundle.dependsOn[0]: must set name or selector, not both",
      "bundle.dependsOn[1]: must set name or selector",
      "bundle.dependsOn[2].name: must be a bundle name (a DNS label)",
      expect.stringMatching(
        /^bundle\.dependsOn\[3\]\.selector\.matchLabels.*bad key!/,
      ),
      'bundle.dependsOn[4].nme: unknown field: a dependsOn entry has "name" or "selector"',
      "bundle.dependsOn[4]: must set name or selector",
    ]);
  });

  it("refuses a dependsOn that is not a list", () => {
    const parsed = parseDependsOn({ name: "db" }, "bundle.dependsOn");
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problems[0]?.path).toBe("bundle.dependsOn");
  });
});

describe("dependency cycles", () => {
  it("finds none in a chain", () => {
    const nodes = [
      node("app", [{ name: "db" }]),
      node("db", [{ name: "net" }]),
    ];
    expect(findDependencyCycle([...nodes, node("net")], "app")).toBeUndefined();
  });

  it("names a cycle by names, starting at the bundle applied", () => {
    const nodes = [
      node("a", [{ name: "b" }]),
      node("b", [{ name: "c" }]),
      node("c", [{ name: "a" }]),
    ];
    const cycle = findDependencyCycle(nodes, "a");
    expect(cycle).toEqual(["a", "b", "c", "a"]);
    expect(cycleText(cycle ?? [])).toBe("a → b → c → a");
  });

  it("finds a bundle that depends on itself", () => {
    expect(findDependencyCycle([node("a", [{ name: "a" }])], "a")).toEqual([
      "a",
      "a",
    ]);
  });

  it("finds a cycle through selectors over labels", () => {
    const nodes = [
      node("app", [{ selector: { matchLabels: { tier: "data" } } }], {
        tier: "web",
      }),
      node("db", [{ selector: { matchLabels: { tier: "web" } } }], {
        tier: "data",
      }),
    ];
    expect(findDependencyCycle(nodes, "db")).toEqual(["db", "app", "db"]);
  });

  it("finds a selector that matches its own bundle", () => {
    const nodes = [
      node("app", [{ selector: { matchLabels: { tier: "web" } } }], {
        tier: "web",
      }),
    ];
    expect(findDependencyCycle(nodes, "app")).toEqual(["app", "app"]);
  });

  it("ignores cycles the start is not on", () => {
    const nodes = [
      node("x", [{ name: "a" }]),
      node("a", [{ name: "b" }]),
      node("b", [{ name: "a" }]),
    ];
    expect(findDependencyCycle(nodes, "x")).toBeUndefined();
    expect(findDependencyCycle(nodes, "a")).toEqual(["a", "b", "a"]);
  });

  it("lists a bundle's dependents by name and by selector", () => {
    const nodes = [
      node("app", [{ name: "db" }]),
      node("web", [{ selector: { matchLabels: { tier: "data" } } }]),
      node("other", [{ name: "queue" }]),
    ];
    expect(
      dependentsOf({ name: "db", labels: { tier: "data" } }, nodes),
    ).toEqual(["app", "web"]);
    expect(dependentsOf({ name: "db", labels: {} }, nodes)).toEqual(["app"]);
  });
});

describe("the hold decision per cluster", () => {
  const clusters = ["c-1", "c-2", "c-3"];

  it("holds where a dependency is not Ready, releases where it is", () => {
    const holds = dependencyHolds(
      deps([{ name: "db" }]),
      [state("db", { "c-1": "Ready", "c-2": "NotReady", "c-3": "OutOfSync" })],
      clusters,
    );
    expect([...holds]).toEqual([
      ["c-2", 'waiting for dependencies: bundle "db" is NotReady'],
      ["c-3", 'waiting for dependencies: bundle "db" is OutOfSync'],
    ]);
  });

  it("does not take Modified as Ready", () => {
    const holds = dependencyHolds(
      deps([{ name: "db" }]),
      [state("db", { "c-1": "Modified" })],
      ["c-1"],
    );
    expect(holds.get("c-1")).toContain('bundle "db" is Modified');
  });

  it("waits for a bundle that does not exist, or does not target the cluster", () => {
    const holds = dependencyHolds(
      deps([{ name: "db" }, { name: "cache" }]),
      [state("db", { "c-1": "Ready" })],
      ["c-1", "c-2"],
    );
    expect(holds.get("c-1")).toBe(
      'waiting for dependencies: bundle "cache" does not exist',
    );
    expect(holds.get("c-2")).toBe(
      'waiting for dependencies: bundle "db" does not target this cluster; bundle "cache" does not exist',
    );
  });

  it("needs every matching bundle Ready, ignoring those that do not target the cluster", () => {
    const selector = deps([{ selector: { matchLabels: { tier: "data" } } }]);
    const bundles = [
      state("db", { "c-1": "Ready", "c-2": "Ready" }, { tier: "data" }),
      state("queue", { "c-1": "WaitApplied" }, { tier: "data" }),
      state("web", { "c-1": "Pending", "c-3": "Pending" }, { tier: "web" }),
    ];
    const holds = dependencyHolds(selector, bundles, clusters);
    expect(holds.get("c-1")).toBe(
      'waiting for dependencies: bundle "queue" is WaitApplied',
    );
    expect(holds.has("c-2")).toBe(false);
    expect(holds.get("c-3")).toBe(
      'waiting for dependencies: no bundle matching selector "tier=data" targets this cluster',
    );
    expect(
      dependencyHolds(selector, [bundles[2] as DependencyState], ["c-1"]).get(
        "c-1",
      ),
    ).toBe('waiting for dependencies: no bundle matches selector "tier=data"');
  });

  it("holds nothing without dependsOn", () => {
    expect(dependencyHolds([], [], clusters).size).toBe(0);
  });
});

describe("a pass with dependency holds", () => {
  const targets = fleetOf(4);
  const run = (
    holds: ReadonlyMap<string, string>,
    deployments = new Map<string, ReturnType<typeof readyAt>>(),
    raw: unknown = {},
  ) =>
    rolloutPass({
      strategy: strategy(raw),
      targets,
      clusterGroups: [],
      revision: "rev-2",
      deployments,
      nowMs: 0,
      dependencyHolds: holds,
    });

  it("holds those clusters with DependenciesNotReady and the message, and releases the others", () => {
    const result = run(new Map([["c-001", "waiting for dependencies: x"]]));
    expect(result.release.map((r) => r.cluster)).toEqual([
      "c-000",
      "c-002",
      "c-003",
    ]);
    expect(result.held).toEqual([
      {
        cluster: "c-001",
        partition: "All",
        reason: "DependenciesNotReady",
        message: "waiting for dependencies: x",
      },
    ]);
  });

  it("leaves a cluster already at the current revision alone", () => {
    const result = run(
      new Map([["c-000", "waiting"]]),
      new Map([["c-000", readyAt("rev-2")]]),
    );
    expect(result.held).toEqual([]);
  });

  it("counts a held cluster as not yet at the revision: its partition is NotReady and later ones wait", () => {
    const result = run(
      new Map([["c-000", "waiting"]]),
      new Map(targets.map((c) => [c.name, readyAt("rev-1")])),
      {
        partitions: [
          { name: "one", clusterName: "c-000", maxUnavailable: 0 },
          {
            name: "rest",
            clusterSelector: {},
            maxUnavailable: "100%",
          },
        ],
      },
    );
    const one = result.partitions[0];
    expect(one?.notReadyCount).toBe(1);
    expect(one?.notReady).toBe(true);
    expect(result.stoppedAfter).toBe("one");
    expect(result.release).toEqual([]);
    expect(result.held.map((h) => h.reason)).toEqual([
      "DependenciesNotReady",
      "PartitionsNotReady",
      "PartitionsNotReady",
      "PartitionsNotReady",
    ]);
  });
});
