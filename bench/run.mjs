// `pnpm bench [--quick]`: runs the benchmarks and writes bench/results/latest.json and latest.md.
// Every figure that depends on machine speed is a ratio against a baseline measured in the same
// run (these machines are noisy); absolute times are reported for reference.
// @ts-check
import { mkdirSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import { measure } from "./core.mjs";
import { runEndToEnd } from "./e2e.mjs";
import { round } from "./e2e-measure.mjs";
import { measureIntents } from "./intents.mjs";
import { runReportFlood, runReportFloodReplicas } from "./report-flood.mjs";

const quick = process.argv.includes("--quick");
const startedAt = new Date().toISOString();
const sizes = [1_000, 10_000, 100_000];
/**
 * One benchmark figure against its target.
 * @typedef {{
 *   value: unknown,
 *   unit: string,
 *   baseline?: number | null,
 *   ratio?: number | null,
 *   target: string,
 *   met: boolean,
 * }} Metric
 */
/** @type {Record<string, Metric>} */
const metrics = {};
/** @type {ReturnType<typeof measure>[]} */
const rows = [];

// Warm-up so the 1,000-cluster baseline is not paying for JIT compilation.
measure(1_000, 2);
/** @type {Map<number, ReturnType<typeof measure>>} */
const results = new Map();
for (const size of sizes) {
  const repeats = size >= 100_000 ? 1 : quick ? 3 : 5;
  process.stderr.write(
    `bench: core engine at ${size.toLocaleString("en")} clusters ...`,
  );
  const r = measure(size, repeats);
  results.set(size, r);
  process.stderr.write(
    ` plan ${r.planMs.toFixed(1)} ms, simulated run ${r.simMs.toFixed(0)} ms (${r.finalState})\n`,
  );
  rows.push(r);
}
/** @param {number} size */
const resultAt = (size) => {
  const r = results.get(size);
  if (r === undefined) throw new Error(`no result at ${String(size)}`);
  return r;
};
const small = resultAt(1_000);
const large = resultAt(100_000);
const mid = resultAt(10_000);
const ratio = large.perTransitionUs / small.perTransitionUs;
metrics["core.transition_cost_100k_vs_1k"] = {
  value: Number(large.perTransitionUs.toFixed(3)),
  unit: "µs/transition",
  baseline: Number(small.perTransitionUs.toFixed(3)),
  ratio: Number(ratio.toFixed(3)),
  target: "ratio ≤ 2",
  met: ratio <= 2,
};
metrics["core.simulated_run_10k"] = {
  value: Number(mid.simMs.toFixed(1)),
  unit: "ms",
  target: "< 2000 ms",
  met: mid.simMs < 2000,
};
for (const r of rows) {
  metrics[`core.plan_${String(r.count)}`] = {
    value: Number(r.planMs.toFixed(2)),
    unit: "ms",
    target: "report",
    met: true,
  };
}

// Intents over NATS: a real nats-server, the hub's publisher, one watcher per cluster.
const intentCount = quick ? 2_000 : 10_000;
process.stderr.write(
  `bench: intents at ${intentCount.toLocaleString("en")} clusters ...\n`,
);
const intents = await measureIntents({ count: intentCount });
metrics[`intents.publish_vs_raw_kv_${String(intentCount)}`] = {
  value: Number(intents.publishPerSec.toFixed(0)),
  unit: "intents/s",
  baseline: Number(intents.baselinePutsPerSec.toFixed(0)),
  ratio: Number(intents.ratio.toFixed(3)),
  target: "ratio ≥ 0.7 (compare-and-set intents vs raw KV puts)",
  met: intents.ratio >= 0.7,
};
metrics[`intents.jetstream_consumers_${String(intentCount)}`] = {
  value: intents.server.consumers,
  unit: "consumers",
  target: "0 (no consumer per agent)",
  met: intents.server.consumers === 0,
};
metrics[`intents.all_seen_${String(intentCount)}`] = {
  value: Number(intents.allSeenMs.toFixed(0)),
  unit: "ms",
  target: "report",
  met: true,
};

// Status reports: the hub's AgentService against a minimal gRPC server, same client, same run.
process.stderr.write("bench: status reports vs raw gRPC stream messages ...\n");
const flood = await runReportFlood({ quick, rounds: quick ? 3 : 5 });
metrics["grpc.reports_vs_raw_stream"] = {
  value: Number(flood.hubReportsPerSec.toFixed(0)),
  unit: "reports/s",
  baseline: Number(flood.rawMessagesPerSec.toFixed(0)),
  ratio: Number(flood.ratio.toFixed(3)),
  target: "ratio ≥ 0.5 (counted status reports vs raw stream messages)",
  met: flood.ratio >= 0.5,
};

// The same flood with two hub replicas: at the owner of the bundle rollouts and at the other one.
process.stderr.write(
  "bench: status reports at the non-owner of two hub replicas ...\n",
);
const floodHa = await runReportFloodReplicas({
  quick,
  rounds: quick ? 3 : 5,
});
// Noise: the owner-side ratio's spread over its rounds, at least 10%.
const ownerRatios = floodHa.owner.runs.map(
  (h) => h.countedPerSec / floodHa.rawMessagesPerSec,
);
const noise = Math.max(
  0.1 * floodHa.owner.ratio,
  Math.max(...ownerRatios) - Math.min(...ownerRatios),
);
metrics["grpc.reports_vs_raw_stream_non_owner"] = {
  value: Number(floodHa.nonOwner.reportsPerSec.toFixed(0)),
  unit: "reports/s",
  baseline: Number(floodHa.rawMessagesPerSec.toFixed(0)),
  ratio: Number(floodHa.nonOwner.ratio.toFixed(3)),
  target: `ratio not below the owner's (${floodHa.owner.ratio.toFixed(3)}, ${floodHa.owner.reportsPerSec.toFixed(0)} reports/s) by more than noise (${noise.toFixed(3)}); NATS messages per report in/out: non-owner ${floodHa.nonOwner.natsInPerReport.toFixed(2)}/${floodHa.nonOwner.natsOutPerReport.toFixed(2)}, owner ${floodHa.owner.natsInPerReport.toFixed(2)}/${floodHa.owner.natsOutPerReport.toFixed(2)}`,
  met:
    floodHa.ownerUnchanged &&
    floodHa.nonOwner.ratio >= floodHa.owner.ratio - noise,
};
metrics["grpc.reports_vs_raw_stream_owner_of_two"] = {
  value: Number(floodHa.owner.reportsPerSec.toFixed(0)),
  unit: "reports/s",
  baseline: Number(floodHa.rawMessagesPerSec.toFixed(0)),
  ratio: Number(floodHa.owner.ratio.toFixed(3)),
  target: "report (the same flood at the owner, two replicas running)",
  met: true,
};

// End to end: nats-server, the hub and 10,000 simulated agents in four processes.
const e2eOptions = quick
  ? {
      stagedMembers: 500,
      upgradeSeconds: 1,
      applySeconds: 0.5,
      finishRestartRun: false,
    }
  : { stagedMembers: 10_000, upgradeSeconds: 2, applySeconds: 1 };
process.stderr.write(
  `bench: end to end at 10,000 clusters (staged run over ${e2eOptions.stagedMembers.toLocaleString("en")}) ...\n`,
);
const e2e = await runEndToEnd({
  clusters: 10_000,
  agentProcesses: 4,
  ...e2eOptions,
});
/**
 * Records an end-to-end figure; `met` judges its rounded value (a missing figure is not met).
 * @param {string} name
 * @param {Omit<Metric, "met" | "value"> & {
 *   value: unknown,
 *   met: (value: number) => boolean,
 * }} fields
 */
const e2eMetric = (name, fields) => {
  const value = round(fields.value);
  metrics[name] = {
    ...fields,
    value,
    met: value !== null && fields.met(value),
  };
};
e2eMetric("e2e.staged_makespan_vs_ideal", {
  value: e2e.stagedMakespanSeconds,
  unit: "s",
  baseline: round(e2e.stagedIdealMakespanSeconds),
  ratio: round(e2e.stagedMakespanRatio, 3),
  target:
    "ratio ≤ 1.10 (ideal: the strategy's limits × the simulated upgrade time)",
  met: () => Number(e2e.stagedMakespanRatio) <= 1.1,
});
e2eMetric("e2e.report_to_intent_p90", {
  value: e2e.stagedReportToIntentP90Ms,
  unit: "ms",
  target:
    "≤ 50 ms (a member's Ready report to the next members' intents published)",
  met: (v) => v <= 50,
});
e2eMetric("e2e.hub_rss_per_cluster", {
  value: e2e.hubRssPerClusterKiB,
  unit: "KiB",
  target: "≤ 50 KB per connected cluster",
  met: (v) => v * 1.024 <= 50,
});
e2eMetric("e2e.agent_process_rss_one_cluster", {
  value: e2e.singleAgentProcessRssMiB,
  unit: "MiB",
  target: "≤ 60 MB (one agent process, simulated backend)",
  met: (v) => v * 1.048576 <= 60,
});
e2eMetric("e2e.restart_all_resumed", {
  value: e2e.restartSeconds,
  unit: "s",
  target:
    "≤ 30 s (hub restarted with 10,000 connected: every agent back, every run moving)",
  met: (v) => v <= 30,
});
e2eMetric("e2e.failover_progress", {
  value: e2e.failoverProgressSeconds,
  unit: "s",
  target: `≤ 15 s (the owner of a run SIGKILLed, two replicas, 10,000 connected: the run moving again on the other; lease TTL ${String(e2e.failoverLeaseTtlSeconds)} s)`,
  met: (v) => v <= 15,
});
e2eMetric("e2e.failover_lease_taken", {
  value: e2e.failoverLeaseSeconds,
  unit: "s",
  target: `report (kill → the other replica holds the run's lease; TTL ${String(e2e.failoverLeaseTtlSeconds)} s)`,
  met: () => true,
});
e2eMetric("e2e.failover_agents_back", {
  value: e2e.failoverReconnectSeconds,
  unit: "s",
  target: `report (kill → the killed replica's ${String(e2e.failoverAgentsOnKilled)} agents connected to the other)`,
  met: () => true,
});
const rssEndSingle = round(e2e.hubRssEndPerClusterKiB);
const rssEndSurvivor = round(e2e.failoverSurvivorRssEndPerClusterKiB);
e2eMetric("e2e.hub_rss_per_cluster_end", {
  value:
    rssEndSingle === null
      ? null
      : Math.max(rssEndSingle, rssEndSurvivor ?? rssEndSingle),
  unit: "KiB",
  target: `≤ 50 KB per connected cluster after the whole scenario (the higher of: the hub after run, restart and bundle, ${String(rssEndSingle)} KiB; the replica alive after the failover, ${String(rssEndSurvivor ?? "not measured")} KiB)`,
  met: (v) => v * 1.024 <= 50,
});
e2eMetric("e2e.connect_all", {
  value: e2e.allConnectedSeconds,
  unit: "s",
  target: "report (10,000 agents started at once)",
  met: () => true,
});
e2eMetric("e2e.bundle_rollout_makespan", {
  value: e2e.bundleMakespanSeconds,
  unit: "s",
  target: "report (partitioned bundle rollout to 10,000 clusters)",
  met: () => true,
});
e2eMetric("e2e.bundle_intents_per_second", {
  value: e2e.bundleIntentsPerSecond,
  unit: "intents/s",
  target: "report",
  met: () => true,
});
for (const [step, message] of Object.entries(e2e.errors ?? {})) {
  metrics[`e2e.error.${step}`] = {
    value: message,
    unit: "",
    target: "no error",
    met: false,
  };
}

const machine = {
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? "unknown",
  memoryBytes: os.totalmem(),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
};
const out = { machine, startedAt, quick, metrics, endToEnd: e2e };
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(
  new URL("./results/latest.json", import.meta.url),
  JSON.stringify(out, null, 2) + "\n",
);
const md = [
  `# Benchmark results (${startedAt}${quick ? ", quick" : ""})`,
  "",
  `Machine: ${String(machine.cpus)} × ${machine.cpuModel}, Node ${machine.node}`,
  "",
  "| clusters | plan (ms) | simulated staged run (ms) | transitions | µs / transition | final state |",
  "|---:|---:|---:|---:|---:|---|",
  ...rows.map(
    (r) =>
      `| ${r.count.toLocaleString("en")} | ${r.planMs.toFixed(1)} | ${r.simMs.toFixed(0)} | ${r.transitions.toLocaleString("en")} | ${r.perTransitionUs.toFixed(2)} | ${r.finalState} |`,
  ),
  "",
  "| metric | value | baseline | ratio | target | met |",
  "|---|---:|---:|---:|---|---|",
  ...Object.entries(metrics).map(
    ([k, m]) =>
      `| ${k} | ${String(m.value)} ${m.unit} | ${String(m.baseline ?? "")} | ${String(m.ratio ?? "")} | ${m.target} | ${m.met ? "yes" : "**no**"} |`,
  ),
  "",
].join("\n");
writeFileSync(new URL("./results/latest.md", import.meta.url), md);
process.stdout.write(md);
const failed = Object.entries(metrics).filter(([, m]) => !m.met);
if (failed.length > 0) {
  process.stderr.write(
    `bench: targets not met: ${failed.map(([k]) => k).join(", ")}\n`,
  );
  process.exitCode = 1;
}
