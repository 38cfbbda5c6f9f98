/**
 * fleet.yaml `dependsOn` (docs/semantics.md#dependencies-between-bundles): a bundle's entries name
 * the bundles it waits for, by name or by a selector over bundle labels. Pure: which bundles an
 * entry matches, the dependency graph's cycles (refused at apply time), and, per cluster, whether
 * a new revision of the dependent may be released there (every bundle it depends on Ready on that
 * cluster at its current revision).
 */
import {
  matchesSelector,
  parseSelectorStruct,
  selectorToString,
  type LabelSelector,
  type Labels,
} from "../label-selector.js";
import { boundsProblems } from "../input-bounds.js";
import {
  fail,
  joinPath,
  ok,
  showValue,
  type Problem,
  type Result,
} from "../result.js";
import { isDnsLabel } from "../schema.js";
import type { BundleClusterState } from "./rollout-pass.js";

/** One `dependsOn` entry: exactly one of a bundle name or a selector over bundle labels. */
export type BundleDependency =
  | { readonly name: string; readonly selector?: undefined }
  | { readonly selector: LabelSelector; readonly name?: undefined };

/** A bundle as the dependency graph sees it. */
export interface DependencyNode {
  readonly name: string;
  readonly labels: Labels;
  readonly dependsOn: readonly BundleDependency[];
}

/** A bundle some dependent may wait for: its labels and its state on each cluster it targets. */
export interface DependencyState {
  readonly name: string;
  readonly labels: Labels;
  /** State (docs/semantics.md#cluster-states) at its current revision, by target cluster. */
  readonly states: ReadonlyMap<string, BundleClusterState>;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Parses fleet.yaml `dependsOn` (a list of `{name}` or `{selector}`); problems at their paths
 * (`bundle.dependsOn[1].selector.matchLabels`). Absent or null: no dependencies.
 */
export function parseDependsOn(
  raw: unknown,
  path: string,
): Result<readonly BundleDependency[]> {
  if (raw === undefined || raw === null) return ok([]);
  if (!Array.isArray(raw))
    return fail([
      {
        path,
        message: "must be a list of {name} or {selector} entries",
        value: raw,
      },
    ]);
  const refused = boundsProblems(raw, path);
  if (refused.length > 0) return fail(refused);
  const problems: Problem[] = [];
  const out: BundleDependency[] = [];
  raw.forEach((entry: unknown, i) => {
    const parsed = parseEntry(entry, joinPath(path, i));
    if (parsed.ok) out.push(parsed.value);
    else problems.push(...parsed.problems);
  });
  return problems.length > 0 ? fail(problems) : ok(out);
}

function parseEntry(raw: unknown, at: string): Result<BundleDependency> {
  if (!isRecord(raw))
    return fail([
      {
        path: at,
        message: "must be a mapping: {name} or {selector}",
        value: raw,
      },
    ]);
  const problems: Problem[] = Object.keys(raw)
    .filter((k) => k !== "name" && k !== "selector")
    .map((k) => ({
      path: joinPath(at, k),
      message: 'unknown field: a dependsOn entry has "name" or "selector"',
    }));
  const name = raw["name"] ?? undefined;
  const selector = raw["selector"] ?? undefined;
  if ((name === undefined) === (selector === undefined))
    problems.push({
      path: at,
      message:
        name === undefined
          ? "must set name or selector"
          : "must set name or selector, not both",
    });
  if (problems.length > 0) return fail(problems);
  if (name !== undefined) {
    if (typeof name !== "string" || !isDnsLabel(name))
      return fail([
        {
          path: joinPath(at, "name"),
          message: "must be a bundle name (a DNS label)",
          value: name,
        },
      ]);
    return ok({ name });
  }
  const parsed = parseSelectorStruct(selector, joinPath(at, "selector"));
  return parsed.ok ? ok({ selector: parsed.value }) : parsed;
}

/** Whether entry `dep` matches bundle `b` (a selector matches the bundle's labels). */
export function dependencyMatches(
  dep: BundleDependency,
  b: { readonly name: string; readonly labels: Labels },
): boolean {
  return dep.name !== undefined
    ? dep.name === b.name
    : matchesSelector(dep.selector, b.labels);
}

/** How an entry reads in messages: `bundle "db"` or `selector "tier=db"`. */
export function dependencyLabel(dep: BundleDependency): string {
  return dep.name !== undefined
    ? `bundle ${showValue(dep.name)}`
    : `selector ${showValue(selectorToString(dep.selector))}`;
}

/** The names of the bundles among `bundles` that `node` depends on, sorted. */
export function dependenciesOf(
  node: Pick<DependencyNode, "dependsOn">,
  bundles: readonly { readonly name: string; readonly labels: Labels }[],
): string[] {
  return bundles
    .filter((b) => node.dependsOn.some((d) => dependencyMatches(d, b)))
    .map((b) => b.name)
    .sort();
}

/** The names of the bundles among `bundles` that depend on `bundle`, sorted. */
export function dependentsOf(
  bundle: { readonly name: string; readonly labels: Labels },
  bundles: readonly DependencyNode[],
): string[] {
  return bundles
    .filter((n) => dependenciesOf(n, [bundle]).length > 0)
    .map((n) => n.name)
    .sort();
}

/**
 * A cycle of the dependency graph over `nodes` that passes through `start`, as the names along
 * it (`["a", "b", "a"]`), or undefined when there is none. Deterministic: neighbours are visited
 * in name order, so the same graph always names the same cycle.
 */
export function findDependencyCycle(
  nodes: readonly DependencyNode[],
  start: string,
): string[] | undefined {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const edges = (name: string): string[] => {
    const node = byName.get(name);
    return node === undefined ? [] : dependenciesOf(node, nodes);
  };
  // Depth-first from `start`: a path back to `start` is the cycle.
  const seen = new Set<string>();
  const path: string[] = [start];
  const walk = (name: string): boolean => {
    for (const next of edges(name)) {
      if (next === start) {
        path.push(start);
        return true;
      }
      if (seen.has(next)) continue;
      seen.add(next);
      path.push(next);
      if (walk(next)) return true;
      path.pop();
    }
    return false;
  };
  return walk(start) ? path : undefined;
}

/** A cycle as people read it: `a → b → a`. */
export function cycleText(cycle: readonly string[]): string {
  return cycle.join(" → ");
}

/**
 * For each of `clusters`, why a new revision of a bundle with `dependsOn` may not be released
 * there yet (docs/semantics.md#dependencies-between-bundles); a cluster that may be released is
 * absent. `bundles` are the bundles the entries may match (others are ignored). On a cluster:
 * a name entry needs that bundle to exist and target the cluster; a selector entry needs at least
 * one matching bundle that targets the cluster; every matched bundle that targets the cluster must
 * be Ready there.
 */
export function dependencyHolds(
  dependsOn: readonly BundleDependency[],
  bundles: readonly DependencyState[],
  clusters: readonly string[],
): Map<string, string> {
  const holds = new Map<string, string>();
  if (dependsOn.length === 0) return holds;
  const matched = dependsOn.map((dep) => ({
    dep,
    bundles: bundles
      .filter((b) => dependencyMatches(dep, b))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  }));
  for (const cluster of clusters) {
    const waits: string[] = [];
    for (const { dep, bundles: found } of matched) {
      if (found.length === 0) {
        waits.push(
          dep.name !== undefined
            ? `${dependencyLabel(dep)} does not exist`
            : `no bundle matches ${dependencyLabel(dep)}`,
        );
        continue;
      }
      const here = found.filter((b) => b.states.has(cluster));
      if (here.length === 0) {
        waits.push(
          dep.name !== undefined
            ? `${dependencyLabel(dep)} does not target this cluster`
            : `no bundle matching ${dependencyLabel(dep)} targets this cluster`,
        );
        continue;
      }
      for (const b of here) {
        const state = b.states.get(cluster);
        const line = `bundle ${showValue(b.name)} is ${state ?? "Pending"}`;
        if (state !== "Ready" && !waits.includes(line)) waits.push(line);
      }
    }
    if (waits.length > 0)
      holds.set(cluster, `waiting for dependencies: ${waits.join("; ")}`);
  }
  return holds;
}
