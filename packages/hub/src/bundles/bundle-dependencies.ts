/**
 * The hub's side of fleet.yaml `dependsOn` (docs/semantics.md#dependencies-between-bundles): the
 * facts core's dependency decisions need (the bundles an entry matches and their state on each of
 * their targets), the cycle check at apply time, and which bundles wait for a given one, so that a
 * dependency's status change runs a pass of its dependents only.
 */
import {
  cycleText,
  dependencyMatches,
  dependentsOf,
  findDependencyCycle,
  type DependencyNode,
  type DependencyState,
  type FleetBundleSpec,
  type Problem,
} from "@flotilla/core";
import {
  observeBundle,
  type PassDeps,
  type PassSubject,
} from "./bundle-passes.js";
import { targetStates } from "./bundle-status.js";

/** A bundle as the dependency graph sees it. */
export function dependencyNode(
  name: string,
  spec: FleetBundleSpec,
): DependencyNode {
  return { name, labels: spec.labels ?? {}, dependsOn: spec.dependsOn ?? [] };
}

/**
 * `subject` with the bundles its `dependsOn` matches among `bundles` (the live ones) and their
 * states at their current revisions; `subject` itself when it depends on none.
 */
export async function withDependencies(
  deps: PassDeps,
  subject: PassSubject,
  bundles: readonly PassSubject[],
): Promise<PassSubject> {
  const dependsOn = subject.spec.dependsOn ?? [];
  if (dependsOn.length === 0) return subject;
  const matched = bundles.filter((b) =>
    dependsOn.some((d) =>
      dependencyMatches(d, dependencyNode(b.record.name, b.spec)),
    ),
  );
  const dependencies: DependencyState[] = [];
  for (const b of matched) {
    const observed = await observeBundle(deps, b);
    dependencies.push({
      name: b.record.name,
      labels: b.spec.labels ?? {},
      states: targetStates(observed, b.record.revision),
    });
  }
  return { ...subject, dependencies };
}

/** The names of the bundles among `bundles` that wait for bundle `name` with `spec`. */
export function dependentNames(
  name: string,
  spec: FleetBundleSpec,
  bundles: readonly PassSubject[],
): string[] {
  return dependentsOf(
    dependencyNode(name, spec),
    bundles.map((b) => dependencyNode(b.record.name, b.spec)),
  );
}

/**
 * The problem of applying bundle `name` with `spec` over the stored `bundles` when that closes a
 * cycle of dependencies (by names or by selectors over labels), naming it; undefined otherwise.
 */
export function cycleProblem(
  name: string,
  spec: FleetBundleSpec,
  bundles: readonly PassSubject[],
): Problem | undefined {
  const nodes = [
    ...bundles
      .filter((b) => b.record.name !== name)
      .map((b) => dependencyNode(b.record.name, b.spec)),
    dependencyNode(name, spec),
  ];
  const cycle = findDependencyCycle(nodes, name);
  if (cycle === undefined) return undefined;
  return {
    path: "bundle.dependsOn",
    message: `forms a dependency cycle: ${cycleText(cycle)}`,
    value: cycleText(cycle),
  };
}
