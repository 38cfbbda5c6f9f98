/**
 * The configuration of simulated clusters: one cluster, or a fleet of them in one file
 * so one process can host many agents. A fleet file is
 *
 * ```yaml
 * seed: 7                      # optional; each cluster's randomness derives from it and its name
 * defaults: { kubernetesVersion: "1.30.5", timeToReady: { uniform: { minSeconds: 2, maxSeconds: 9 } } }
 * clusters:
 *   - name: canary-1           # one cluster
 *     labels: { env: canary }
 *   - namePrefix: prod-        # prod-01 … prod-40 (index padded to at least 2 digits)
 *     count: 40
 *     labels: { env: prod }
 *     failures: { versions: ["1.31.2"] }
 * ```
 *
 * An entry's `labels` and `failures` merge key by key over the defaults; every other field
 * replaces the default's (and an entry's `maintenance` or `maintenanceFile` replaces both of the
 * defaults'). Parsing reports every problem at once with its path.
 */
import {
  fail,
  ok,
  type Labels,
  type Maintenance,
  type NodePool,
  type Problem,
  type Result,
  type SupportPlan,
  type UpgradeType,
  compact,
} from "@flotilla/core";
import {
  entrySchema,
  fleetSchema,
  isClusterName,
  type Entry,
  type Settings,
} from "./config-schema.js";
import { fixedSeconds, type Distribution } from "./distribution.js";
import { parseWithSchema } from "./problems.js";
import { seedFrom } from "./random.js";
import type { SimulatedCatalogue } from "./catalogue.js";

/** What goes wrong in a simulated cluster, and when. */
export interface FailureConfig {
  readonly applyRate: number;
  readonly bundles: readonly string[];
  readonly revisions: readonly { bundle: string; revision: string }[];
  readonly neverReady: boolean | readonly string[];
  readonly upgradeRate: number;
  readonly versions: readonly string[];
}

/** One simulated cluster, resolved. Durations are distributions; see distribution.ts. */
export interface SimulatedClusterConfig {
  readonly name: string;
  readonly labels: Labels;
  readonly region?: string;
  readonly supportPlan?: SupportPlan;
  readonly kubernetesVersion: string;
  readonly nodePools: readonly NodePool[];
  /** From Applied until every object is Ready; default 5 s. */
  readonly timeToReady: Distribution;
  /** From Applying until Applied; default 0. */
  readonly applyDuration: Distribution;
  /** A whole upgrade, split evenly over its steps; default 60 s. */
  readonly upgradeDuration: Distribution;
  /** Upgrade types the simulated driver supports; default all three. */
  readonly upgradeTypes: readonly UpgradeType[];
  readonly failures: FailureConfig;
  /** Inline windows and freezes, fixed for the process's life. */
  readonly maintenance?: Maintenance;
  /** A file with `maintenance:`, re-read by `reload()`; relative paths are the loader's business. */
  readonly maintenanceFile?: string;
  /** Inline catalogue (docs/agent.md#the-version-catalogue), fixed for the process's life. */
  readonly catalogue?: SimulatedCatalogue;
  /** A file with `catalogue:`, re-read while the agent runs. */
  readonly catalogueFile?: string;
  /** The cluster's PRNG seed. */
  readonly seed: number;
}

/** Many simulated clusters, for one process hosting many agents. */
export interface SimulatedFleet {
  readonly seed: number;
  readonly clusters: readonly SimulatedClusterConfig[];
}

const DEFAULT_SEED = 1;

function resolve(
  name: string,
  defaults: Settings,
  entry: Settings,
  fleetSeed: number,
): SimulatedClusterConfig | undefined {
  const kubernetesVersion =
    entry.kubernetesVersion ?? defaults.kubernetesVersion;
  if (kubernetesVersion === undefined) return undefined;
  const windows =
    entry.maintenance !== undefined || entry.maintenanceFile !== undefined
      ? entry
      : defaults;
  const region = entry.region ?? defaults.region;
  const supportPlan = entry.supportPlan ?? defaults.supportPlan;
  const catalogueFrom =
    entry.catalogue !== undefined || entry.catalogueFile !== undefined
      ? entry
      : defaults;
  const f = { ...defaults.failures, ...entry.failures };
  return {
    name,
    labels: { ...defaults.labels, ...entry.labels },
    ...compact({ region, supportPlan }),
    kubernetesVersion,
    nodePools: entry.nodePools ?? defaults.nodePools ?? [],
    timeToReady: entry.timeToReady ?? defaults.timeToReady ?? fixedSeconds(5),
    applyDuration:
      entry.applyDuration ?? defaults.applyDuration ?? fixedSeconds(0),
    upgradeDuration:
      entry.upgradeDuration ?? defaults.upgradeDuration ?? fixedSeconds(60),
    upgradeTypes: entry.upgradeTypes ??
      defaults.upgradeTypes ?? ["Full", "ControlPlaneOnly", "NodeImageOnly"],
    failures: {
      applyRate: f.applyRate ?? 0,
      bundles: f.bundles ?? [],
      revisions: f.revisions ?? [],
      neverReady: f.neverReady ?? false,
      upgradeRate: f.upgradeRate ?? 0,
      versions: f.versions ?? [],
    },
    ...compact({
      maintenance: windows.maintenance,
      maintenanceFile: windows.maintenanceFile,
      catalogue: catalogueFrom.catalogue,
      catalogueFile: catalogueFrom.catalogueFile,
    }),
    seed: entry.seed ?? seedFrom(fleetSeed, name),
  };
}

function namesOf(entry: Entry): string[] {
  if (entry.name !== undefined) return [entry.name];
  const start = entry.startIndex ?? 1;
  const count = entry.count ?? 0;
  const width = Math.max(2, String(start + count - 1).length);
  return Array.from(
    { length: count },
    (_, i) =>
      `${entry.namePrefix ?? ""}${String(start + i).padStart(width, "0")}`,
  );
}

function bothWindowForms(s: Settings, at: string): Problem[] {
  const problems: Problem[] = [];
  if (s.maintenance !== undefined && s.maintenanceFile !== undefined)
    problems.push({
      path: `${at}maintenanceFile`,
      message: "set either maintenance or maintenanceFile, not both",
      value: s.maintenanceFile,
    });
  if (s.catalogue !== undefined && s.catalogueFile !== undefined)
    problems.push({
      path: `${at}catalogueFile`,
      message: "set either catalogue or catalogueFile, not both",
      value: s.catalogueFile,
    });
  return problems;
}

/** Parses a fleet file's content (`{seed?, defaults?, clusters: [...]}`); problem paths start at `path`. */
export function parseSimulatedFleet(
  raw: unknown,
  path = "",
): Result<SimulatedFleet> {
  const parsed = parseWithSchema(fleetSchema, raw, path);
  if (!parsed.ok) return parsed;
  const at = (suffix: string): string =>
    path === "" || suffix.startsWith("[")
      ? `${path}${suffix}`
      : `${path}.${suffix}`;
  const fleetSeed = parsed.value.seed ?? DEFAULT_SEED;
  const defaults = parsed.value.defaults ?? {};
  const problems = bothWindowForms(defaults, at("defaults."));
  const clusters: SimulatedClusterConfig[] = [];
  const firstSeen = new Map<string, number>();
  parsed.value.clusters.forEach((entry, i) => {
    const here = at(`clusters[${String(i)}]`);
    problems.push(...bothWindowForms(entry, `${here}.`));
    for (const name of namesOf(entry)) {
      if (!isClusterName(name)) {
        problems.push({
          path: `${here}.namePrefix`,
          message: `makes "${name}", which is not a DNS label of at most 63 characters`,
          value: entry.namePrefix,
        });
        return;
      }
      const first = firstSeen.get(name);
      if (first !== undefined) {
        problems.push({
          path: here,
          message: `duplicate cluster name "${name}"; first defined at ${at(`clusters[${String(first)}]`)}`,
        });
        continue;
      }
      firstSeen.set(name, i);
      const cluster = resolve(name, defaults, entry, fleetSeed);
      if (cluster === undefined) {
        problems.push({
          path: `${here}.kubernetesVersion`,
          message: "is required (set it on the entry or in defaults)",
        });
        return;
      }
      clusters.push(cluster);
    }
  });
  return problems.length > 0
    ? fail(problems)
    : ok({ seed: fleetSeed, clusters });
}

/** Parses one cluster's settings (a fleet entry with `name`); problem paths start at `path`. */
export function parseSimulatedCluster(
  raw: unknown,
  path = "",
): Result<SimulatedClusterConfig> {
  const parsed = parseWithSchema(entrySchema, raw, path);
  if (!parsed.ok) return parsed;
  const prefix = path === "" ? "" : `${path}.`;
  if (parsed.value.name === undefined)
    return fail([{ path: `${prefix}name`, message: "is required" }]);
  const problems = bothWindowForms(parsed.value, prefix);
  const cluster = resolve(parsed.value.name, {}, parsed.value, DEFAULT_SEED);
  if (cluster === undefined)
    problems.push({
      path: `${prefix}kubernetesVersion`,
      message: "is required",
    });
  return problems.length > 0 || cluster === undefined
    ? fail(problems)
    : ok(cluster);
}
