// Core engine benchmark: planning and a full simulated staged run (3 stages, concurrency 500) at
// 1,000, 10,000 and 100,000 clusters. The figure that matters is the cost per member transition
// at 100,000 clusters relative to 1,000, measured in the same run: the engine's per-event work must
// not grow with fleet size.
// @ts-check
import { performance } from "node:perf_hooks";
import { parseUpdateStrategy, planFleet, planStaged } from "@flotilla/core";
import {
  parseRolloutStrategy,
  simulateStagedRun,
} from "@flotilla/core/testing";

/** @import { Cluster, ClusterBehaviour, Scenario } from "@flotilla/core" */

const START_MS = Date.parse("2026-03-02T09:00:00Z");

/**
 * A synthetic fleet: 5% canary, 20% staging, 75% prod, spread over rings.
 * @param {number} count
 * @returns {Cluster[]}
 */
export function makeClusters(count) {
  /** @type {Cluster[]} */
  const clusters = [];
  for (let i = 0; i < count; i++) {
    const fraction = i / count;
    const env =
      fraction < 0.05 ? "canary" : fraction < 0.25 ? "staging" : "prod";
    clusters.push({
      name: `c-${String(i).padStart(6, "0")}`,
      labels: { env, ring: String(i % 10) },
      groups: [],
      nodePools: [],
    });
  }
  return clusters;
}

function strategy() {
  /**
   * @param {string} env
   * @param {number} r
   * @param {number} concurrency
   */
  const ring = (env, r, concurrency) => ({
    name: `${env}-r${String(r)}`,
    memberSelector: { byLabel: `env=${env},ring=${String(r)}` },
    maxConcurrency: concurrency,
    maxAllowedFailures: "5%",
  });
  const parsed = parseUpdateStrategy(
    {
      stages: [
        {
          name: "canary",
          maxConcurrency: 500,
          groups: [
            ring("canary", 0, 500),
            ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((r) => ring("canary", r, 50)),
          ],
        },
        {
          name: "staging",
          maxConcurrency: 500,
          groups: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((r) =>
            ring("staging", r, 50),
          ),
        },
        {
          name: "prod",
          maxConcurrency: 500,
          groups: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((r) =>
            ring("prod", r, 50),
          ),
        },
      ],
    },
    { maxStageConcurrency: 500 },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

/**
 * @param {Cluster[]} clusters
 * @returns {Scenario}
 */
function scenario(clusters) {
  // Every 7th cluster is slower, every 97th fails: the run has real variety but stays in budget.
  /** @type {Record<string, ClusterBehaviour>} */
  const overrides = {};
  for (const [i, c] of clusters.entries()) {
    if (i % 97 === 5)
      overrides[c.name] = {
        readyAfterSeconds: 60,
        fail: true,
        failAfterSeconds: 45,
        neverReady: false,
        offline: [],
      };
    else if (i % 7 === 3)
      overrides[c.name] = {
        readyAfterSeconds: 150,
        fail: false,
        failAfterSeconds: 60,
        neverReady: false,
        offline: [],
      };
  }
  return {
    startMs: START_MS,
    kind: "update",
    defaults: {
      readyAfterSeconds: 60,
      fail: false,
      failAfterSeconds: 60,
      neverReady: false,
      offline: [],
    },
    clusters: overrides,
    approvals: [],
    actions: [],
    releases: [],
    metrics: {},
    autoApprove: true,
    untilMs: START_MS + 30 * 86_400_000,
    passIntervalSeconds: 5,
  };
}

/**
 * @template T
 * @param {() => T} fn
 * @returns {{ ms: number, value: T }}
 */
function time(fn) {
  const t0 = performance.now();
  const value = fn();
  return { ms: performance.now() - t0, value };
}

/**
 * @param {number[]} xs
 * @returns {number}
 */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/**
 * Measures one fleet size; returns plan and simulation timings.
 * @param {number} count
 * @param {number} repeats
 */
export function measure(count, repeats) {
  const clusters = makeClusters(count);
  const staged = strategy();
  const fleet = parseRolloutStrategy(
    { maxUnavailable: "10%", autoPartitionSize: "10%" },
    "",
  );
  if (!fleet.ok) throw new Error("fleet strategy");
  const planMs = [];
  const simMs = [];
  let transitions = 0;
  let finalState = "";
  for (let r = 0; r < repeats; r++) {
    planMs.push(
      time(() => {
        planStaged(staged, clusters);
        planFleet(fleet.value, clusters, []);
      }).ms,
    );
    const sim = time(() =>
      simulateStagedRun({
        clusters,
        strategy: staged,
        scenario: scenario(clusters),
        maxStageConcurrency: 500,
        timeline: false,
      }),
    );
    if (!sim.value.ok) throw new Error(JSON.stringify(sim.value.problems));
    const run = sim.value.value.run;
    finalState = run.state;
    // Each member goes NotStarted → Running → Succeeded/Failed: two transitions.
    transitions = 2 * run.stages.reduce((n, s) => n + s.memberCount, 0);
    simMs.push(sim.ms);
  }
  const sim = median(simMs);
  return {
    count,
    planMs: median(planMs),
    simMs: sim,
    transitions,
    perTransitionUs: (sim * 1000) / transitions,
    finalState,
  };
}
