// `pnpm bench [--quick]`: runs the benchmarks and writes bench/results/latest.json and latest.md.
// Every figure that depends on machine speed is a ratio against a baseline measured in the same
// run (these machines are noisy); absolute times are reported for reference.
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { measure } from "./core.mjs";
import { measureIntents } from "./intents.mjs";

const quick = process.argv.includes("--quick");
const startedAt = new Date().toISOString();
const sizes = [1_000, 10_000, 100_000];
const metrics = {};
const rows = [];

// Warm-up so the 1,000-cluster baseline is not paying for JIT compilation.
measure(1_000, 2);
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
const small = results.get(1_000);
const large = results.get(100_000);
const mid = results.get(10_000);
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
  metrics[`core.plan_${r.count}`] = {
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
metrics[`intents.publish_vs_raw_kv_${intentCount}`] = {
  value: Number(intents.publishPerSec.toFixed(0)),
  unit: "intents/s",
  baseline: Number(intents.baselinePutsPerSec.toFixed(0)),
  ratio: Number(intents.ratio.toFixed(3)),
  target: "ratio ≥ 0.7 (compare-and-set intents vs raw KV puts)",
  met: intents.ratio >= 0.7,
};
metrics[`intents.jetstream_consumers_${intentCount}`] = {
  value: intents.server.consumers,
  unit: "consumers",
  target: "0 (no consumer per agent)",
  met: intents.server.consumers === 0,
};
metrics[`intents.all_seen_${intentCount}`] = {
  value: Number(intents.allSeenMs.toFixed(0)),
  unit: "ms",
  target: "report",
  met: true,
};

const machine = {
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? "unknown",
  memoryBytes: os.totalmem(),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
};
const out = { machine, startedAt, quick, metrics };
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(
  new URL("./results/latest.json", import.meta.url),
  JSON.stringify(out, null, 2) + "\n",
);
const md = [
  `# Benchmark results (${startedAt}${quick ? ", quick" : ""})`,
  "",
  `Machine: ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}`,
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
      `| ${k} | ${m.value} ${m.unit} | ${m.baseline ?? ""} | ${m.ratio ?? ""} | ${m.target} | ${m.met ? "yes" : "**no**"} |`,
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
