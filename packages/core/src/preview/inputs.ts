/**
 * Parsing the offline-preview inputs (clusters, cluster groups, strategy) and telling the two
 * strategy dialects apart; every problem is tagged with the input it came from.
 */
import {
  parseClusterGroups,
  parseClusters,
  type Cluster,
  type ClusterGroup,
} from "../cluster.js";
import {
  detectFleetStrategy,
  parseRolloutStrategy,
  type FleetRolloutStrategy,
} from "../fleet/strategy.js";
import type { InputProblem, InputSource } from "../preview-types.js";
import type { Problem, Result } from "../result.js";
import {
  isUpdateStrategyDocument,
  parseUpdateStrategy,
  type UpdateStrategy,
} from "../update-strategy.js";

/** The raw documents given to `plan` / `simulate` (already parsed from YAML or JSON). */
export interface PreviewInputs {
  readonly clusters: unknown;
  readonly strategy: unknown;
  readonly clusterGroups?: unknown;
}

/** A strategy in one of the two dialects. */
export type ParsedStrategy =
  | { readonly dialect: "fleet"; readonly strategy: FleetRolloutStrategy }
  | { readonly dialect: "staged"; readonly strategy: UpdateStrategy };

/** Parsed preview inputs. */
export interface ParsedInputs extends ParsedFleet {
  readonly strategy: ParsedStrategy;
}

/** Tags problems with their input. */
export function tag(
  source: InputSource,
  problems: readonly Problem[],
): InputProblem[] {
  return problems.map((p) => ({ source, ...p }));
}

/**
 * Parses the strategy document, detecting its dialect from its keys
 * (docs/semantics.md#offline-planning).
 */
export function parseStrategyDocument(raw: unknown): Result<ParsedStrategy> {
  if (isUpdateStrategyDocument(raw)) {
    const parsed = parseUpdateStrategy(raw);
    return parsed.ok
      ? { ok: true, value: { dialect: "staged", strategy: parsed.value } }
      : { ok: false, problems: [...parsed.problems] };
  }
  const fleet = detectFleetStrategy(raw);
  if (fleet !== undefined) {
    const parsed = parseRolloutStrategy(fleet.raw ?? {}, fleet.path);
    return parsed.ok
      ? { ok: true, value: { dialect: "fleet", strategy: parsed.value } }
      : { ok: false, problems: [...parsed.problems] };
  }
  return {
    ok: false,
    problems: [
      {
        path: "",
        message:
          "cannot tell the strategy dialect: expected a fleet.yaml with rolloutStrategy, a bare rolloutStrategy, or an update strategy with stages",
        value: raw,
      },
    ],
  };
}

/** The clusters and (optional) cluster groups of a preview's inputs. */
export interface ParsedFleet {
  readonly clusters: readonly Cluster[];
  readonly clusterGroups: readonly ClusterGroup[];
}

/**
 * Parses the clusters and cluster groups (absent: none), adding every problem to `problems`
 * tagged with its input; undefined when either has a problem.
 */
export function parseFleetInputs(
  inputs: { readonly clusters: unknown; readonly clusterGroups?: unknown },
  problems: InputProblem[],
): ParsedFleet | undefined {
  const clusters = parseClusters(inputs.clusters);
  if (!clusters.ok) problems.push(...tag("clusters", clusters.problems));
  const groups =
    inputs.clusterGroups === undefined
      ? undefined
      : parseClusterGroups(inputs.clusterGroups);
  if (groups !== undefined && !groups.ok)
    problems.push(...tag("clusterGroups", groups.problems));
  if (!clusters.ok || (groups !== undefined && !groups.ok)) return undefined;
  return { clusters: clusters.value, clusterGroups: groups?.value ?? [] };
}

/** Parses all inputs; returns every problem of every input at once. */
export function parseInputs(
  inputs: PreviewInputs,
): Result<ParsedInputs, InputProblem> {
  const problems: InputProblem[] = [];
  const fleet = parseFleetInputs(inputs, problems);
  const strategy = parseStrategyDocument(inputs.strategy);
  if (!strategy.ok) problems.push(...tag("strategy", strategy.problems));
  if (fleet === undefined || !strategy.ok) return { ok: false, problems };
  return { ok: true, value: { ...fleet, strategy: strategy.value } };
}
