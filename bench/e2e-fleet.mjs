// Fleet layout, strategy and bundle of the end-to-end bench (bench/e2e.mjs).
//
// Every cluster gets three labels: `env` (canary 1%, staging 9%, prod 90%: the three stages),
// `geo` (eu/us for staging, eu/us/ap/sa for prod: the groups inside a stage) and `staged`
// (yes/no: whether the staged run covers it, spread evenly over the fleet), plus `fleet: main`.
// Clusters are dealt round-robin over the agent processes; each process gets its own fleet file in
// which every (env, geo, staged) combination is one `namePrefix` + `count` entry.
// @ts-check
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** @import { RunView } from "@flotilla/protocol" */

/**
 * The labels the bench gives a cluster.
 * @typedef {{ env: string, geo: string, staged: "yes" | "no" }} BenchLabels
 */
/**
 * One entry of a simulated fleet file: `count` clusters named `namePrefix` + a number.
 * @typedef {{ namePrefix: string, count: number, labels: Record<string, string> }} FleetEntry
 */

/**
 * Kubernetes versions: the fleet starts at FROM, the staged run upgrades to MID, run 2 to TO (the
 * failover step's run, on agent processes started again, to MID).
 */
export const VERSIONS = { from: "1.29.9", mid: "1.30.5", to: "1.31.2" };

const PROD_GEOS = ["eu", "us", "ap", "sa"];
const STAGING_GEOS = ["eu", "us"];
/**
 * The ceiling for a stage's maxConcurrency (docs/semantics.md#order-and-concurrency).
 */
export const STAGE_MAX_CONCURRENCY = 50;
const GROUP_CONCURRENCY = {
  canary: { all: 50 },
  staging: { eu: 25, us: 25 },
  prod: { eu: 12, us: 12, ap: 12, sa: 12 },
};

/**
 * The env and geo labels of cluster `i`: env by `i % 100`, geo rotating so that every agent
 * process gets every geo.
 * @param {number} i
 * @returns {{ env: string, geo: string }}
 */
function placeOf(i) {
  const slot = i % 100;
  const env = slot === 0 ? "canary" : slot < 10 ? "staging" : "prod";
  const round = Math.floor(i / 100);
  const geo =
    env === "canary"
      ? "all"
      : env === "staging"
        ? String(STAGING_GEOS[(round + slot) % STAGING_GEOS.length])
        : String(PROD_GEOS[(round + slot) % PROD_GEOS.length]);
  return { env, geo };
}

/**
 * Labels of every cluster: `staged` is spread evenly inside each (env, geo) group (the `r`-th
 * cluster of a group is staged when ⌊(r+1)·staged/clusters⌋ > ⌊r·staged/clusters⌋), so every
 * group of the strategy gets its share.
 * @param {number} clusters
 * @param {number} staged
 * @returns {BenchLabels[]}
 */
function labelsOfFleet(clusters, staged) {
  /** @type {Map<string, number>} */
  const seen = new Map();
  return Array.from({ length: clusters }, (_, i) => {
    const { env, geo } = placeOf(i);
    const key = `${env}/${geo}`;
    const r = seen.get(key) ?? 0;
    seen.set(key, r + 1);
    const isStaged =
      Math.floor(((r + 1) * staged) / clusters) >
      Math.floor((r * staged) / clusters);
    /** @type {BenchLabels} */
    const labels = { env, geo, staged: isStaged ? "yes" : "no" };
    return labels;
  });
}

/**
 * The simulated-cluster defaults of every bench fleet file.
 * @param {number} upgradeSeconds
 * @param {number} applySeconds
 */
function simulatedDefaults(upgradeSeconds, applySeconds) {
  return {
    kubernetesVersion: VERSIONS.from,
    nodePools: [
      {
        name: "system",
        imageFamily: "ubuntu-22.04",
        imageVersion: "2026.11.20",
      },
    ],
    timeToReady: { fixedSeconds: 0 },
    applyDuration: { fixedSeconds: applySeconds },
    upgradeDuration: { fixedSeconds: upgradeSeconds },
  };
}

/**
 * Writes one fleet file per agent process into `dir`; resolves with their paths. `staged` of the
 * `clusters` are labelled `staged=yes`.
 * @param {string} dir
 * @param {{
 *   clusters: number,
 *   processes: number,
 *   staged: number,
 *   upgradeSeconds: number,
 *   applySeconds: number,
 * }} options
 * @returns {Promise<string[]>}
 */
export async function writeFleetFiles(dir, options) {
  const { clusters, processes, staged, upgradeSeconds, applySeconds } = options;
  await mkdir(dir, { recursive: true });
  /** @type {Map<string, FleetEntry>[]} */
  const entries = Array.from({ length: processes }, () => new Map());
  const fleet = labelsOfFleet(clusters, staged);
  for (const [i, labels] of fleet.entries()) {
    const process = i % processes;
    const byKey = /** @type {Map<string, FleetEntry>} */ (entries[process]);
    const key = `${labels.env}-${labels.geo}-${labels.staged === "yes" ? "s" : "n"}-p${String(process)}-`;
    const entry = byKey.get(key);
    if (entry === undefined)
      byKey.set(key, {
        namePrefix: key,
        count: 1,
        labels: { ...labels, fleet: "main" },
      });
    else entry.count += 1;
  }
  const files = [];
  for (const [p, byKey] of entries.entries()) {
    const file = join(dir, `fleet-${String(p)}.json`);
    await writeFile(
      file,
      JSON.stringify({
        seed: 5,
        defaults: simulatedDefaults(upgradeSeconds, applySeconds),
        clusters: [...byKey.values()],
      }),
    );
    files.push(file);
  }
  return files;
}

/**
 * A fleet file with one cluster, outside the main fleet (label `fleet: single`).
 * @param {string} dir
 * @param {number} upgradeSeconds
 * @param {number} applySeconds
 * @returns {Promise<string>}
 */
export async function writeSingleFleetFile(dir, upgradeSeconds, applySeconds) {
  await mkdir(dir, { recursive: true });
  const file = join(dir, "fleet-single.json");
  await writeFile(
    file,
    JSON.stringify({
      seed: 5,
      defaults: simulatedDefaults(upgradeSeconds, applySeconds),
      clusters: [{ name: "single-01", labels: { fleet: "single" } }],
    }),
  );
  return file;
}

/** The 3-stage strategy over the `staged=yes` clusters: no gates, no waits. */
export function stagedStrategy() {
  /**
   * @param {string} env
   * @param {string} geo
   * @param {number} maxConcurrency
   */
  const group = (env, geo, maxConcurrency) => ({
    name: `${env}-${geo}`,
    memberSelector: {
      byLabel:
        geo === "all"
          ? `env=${env},staged=yes`
          : `env=${env},geo=${geo},staged=yes`,
    },
    maxConcurrency,
  });
  return {
    stages: Object.entries(GROUP_CONCURRENCY).map(([env, groups]) => ({
      name: env,
      maxConcurrency: STAGE_MAX_CONCURRENCY,
      groups: Object.entries(groups).map(([geo, limit]) =>
        group(env, geo, limit),
      ),
    })),
  };
}

/**
 * Ideal makespan in seconds of a run view: Σ over stages of max over groups of ceil(members /
 * effective group concurrency) × upgradeSeconds. The effective concurrency is the hub's own
 * (`maxConcurrency` of the group view: min of group, stage and size), capped again by the stage's
 * share when the groups' limits add up to more than the stage's
 * (docs/semantics.md#order-and-concurrency).
 * @param {RunView} run
 * @param {number} upgradeSeconds
 * @returns {number}
 */
export function idealMakespanSeconds(run, upgradeSeconds) {
  let total = 0;
  for (const stage of run.stages) {
    const sum = stage.groups.reduce((s, g) => s + g.maxConcurrency, 0);
    const scale =
      sum > stage.maxConcurrency && sum > 0 ? stage.maxConcurrency / sum : 1;
    let longest = 0;
    for (const g of stage.groups) {
      if (g.members.length === 0) continue;
      const limit = Math.max(1, Math.floor(g.maxConcurrency * scale));
      longest = Math.max(longest, Math.ceil(g.members.length / limit));
    }
    total += longest * upgradeSeconds;
  }
  return total;
}

/**
 * First deployments in flight at once in the bench bundle (Fleet's maxNew, default 50: at that
 * default a first rollout to 10,000 clusters is 200 waves by design, whatever the hub's speed).
 */
export const BUNDLE_MAX_NEW = 500;

/**
 * Ideal makespan of the bench bundle's first rollout. Partitions (25% each) go one after the
 * other; inside one, first deployments go in batches of maxNew, a batch not held back by
 * maxUnavailable (docs/semantics.md#releasing). Each batch takes the simulated apply time.
 * @param {number} clusters
 * @param {number} applySeconds
 * @returns {number}
 */
export function bundleIdealMakespanSeconds(clusters, applySeconds) {
  const partitions = 4;
  let waves = 0;
  for (let p = 0; p < partitions; p++) {
    const size =
      Math.floor(clusters / partitions) + (p < clusters % partitions ? 1 : 0);
    waves += Math.ceil(size / BUNDLE_MAX_NEW);
  }
  return waves * applySeconds;
}

/**
 * Writes a Fleet bundle directory (fleet.yaml + one ConfigMap) targeting the main fleet.
 * @param {string} dir
 * @returns {Promise<string>}
 */
export async function writeBundle(dir) {
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "fleet.yaml"),
    [
      "namespace: bench",
      "targets:",
      "  - clusterSelector: { matchLabels: { fleet: main } }",
      "rolloutStrategy:",
      "  autoPartitionSize: 25%",
      "  maxUnavailable: 10%",
      `  maxNew: ${String(BUNDLE_MAX_NEW)}`,
      "",
    ].join("\n"),
  );
  await writeFile(
    join(dir, "config.yaml"),
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bench\ndata:\n  greeting: hello\n",
  );
  return dir;
}
