// Measuring tools of the end-to-end bench (bench/e2e.mjs): resident memory from /proc, CPU from
// `top`, and Prometheus text scraped from the hub's /metrics (sums, histogram percentiles).
// @ts-check
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/** @typedef {{ name: string, labels: Record<string, string>, value: number }} Sample */

/**
 * `x` to `digits` decimals; null when it is not a number.
 * @param {unknown} x
 * @param {number} [digits]
 * @returns {number | null}
 */
export function round(x, digits = 2) {
  return typeof x === "number" && Number.isFinite(x)
    ? Number(x.toFixed(digits))
    : null;
}

/**
 * VmRSS of a process in KiB (1 KiB = 1024 bytes; /proc reports "kB" meaning KiB).
 * @param {number} pid
 * @returns {Promise<number>}
 */
export async function rssKiB(pid) {
  const status = await readFile(`/proc/${String(pid)}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (match === null)
    throw new Error(`no VmRSS in /proc/${String(pid)}/status`);
  return Number(match[1]);
}

/**
 * %CPU of each pid over 5 s, from the second iteration of `top -b -n 2 -d 5 -p PIDS` (the first
 * iteration's figure is since the process started). 100 = one core.
 * @param {number[]} pids
 * @returns {Promise<(number | null)[]>}
 */
export async function cpuPercent(pids) {
  const { stdout } = await run("top", [
    "-b",
    "-n",
    "2",
    "-d",
    "5",
    "-p",
    pids.join(","),
  ]);
  const iterations = stdout.split(/^top - /m);
  const last = iterations[iterations.length - 1] ?? "";
  const lines = last.split("\n");
  const header = lines.findIndex((l) => /\bPID\b/.test(l));
  const columns = (lines[header] ?? "").trim().split(/\s+/);
  const pidAt = columns.indexOf("PID");
  const cpuAt = columns.indexOf("%CPU");
  /** @type {Record<string, number>} */
  const result = {};
  for (const line of lines.slice(header + 1)) {
    const cells = line.trim().split(/\s+/);
    const pid = cells[pidAt];
    const cpu = cells[cpuAt];
    if (cells.length < columns.length || pid === undefined || cpu === undefined)
      continue;
    result[pid] = Number(cpu.replace(",", "."));
  }
  return pids.map((pid) => result[String(pid)] ?? null);
}

/**
 * Parses Prometheus text: [{name, labels, value}] (comments skipped).
 * @param {string} text
 * @returns {Sample[]}
 */
export function parsePrometheus(text) {
  /** @type {Sample[]} */
  const samples = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (match === null) continue;
    /** @type {Record<string, string>} */
    const labels = {};
    for (const pair of (match[3] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[String(pair[1])] = String(pair[2]);
    samples.push({ name: String(match[1]), labels, value: Number(match[4]) });
  }
  return samples;
}

/**
 * Fetches and parses the hub's /metrics.
 * @param {string} url
 * @returns {Promise<Sample[]>}
 */
export async function scrape(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok)
    throw new Error(`GET ${url} answered ${String(response.status)}`);
  return parsePrometheus(await response.text());
}

/**
 * Sum of every sample named `name` (null when there is none).
 * @param {Sample[]} samples
 * @param {string} name
 * @returns {number | null}
 */
export function total(samples, name) {
  const found = samples.filter((s) => s.name === name);
  return found.length === 0 ? null : found.reduce((s, x) => s + x.value, 0);
}

/**
 * Percentiles (0..1) of a Prometheus histogram summed over its label sets, by linear
 * interpolation inside the bucket holding the rank (the first bucket starts at 0; a rank in the
 * +Inf bucket reports the highest finite bound). Null when the histogram is absent or empty.
 * @param {Sample[]} samples
 * @param {string} name
 * @param {number[]} quantiles
 * @returns {{ count: number } & Record<string, number | null>}
 */
export function histogramPercentiles(samples, name, quantiles) {
  /** @type {Map<number, number>} */
  const byBound = new Map();
  for (const s of samples) {
    if (s.name !== `${name}_bucket`) continue;
    const le = s.labels.le === "+Inf" ? Infinity : Number(s.labels.le);
    byBound.set(le, (byBound.get(le) ?? 0) + s.value);
  }
  const buckets = [...byBound.entries()].sort((a, b) => a[0] - b[0]);
  const count = buckets.at(-1)?.[1] ?? 0;
  /** @type {{ count: number } & Record<string, number | null>} */
  const result = { count };
  for (const q of quantiles) {
    const key = `p${String(Math.round(q * 100))}`;
    if (count === 0) {
      result[key] = null;
      continue;
    }
    const rank = q * count;
    let previousBound = 0;
    let previousCount = 0;
    /** @type {number | null} */
    let value = null;
    for (const [bound, cumulative] of buckets) {
      if (cumulative >= rank) {
        if (bound === Infinity) value = previousBound;
        else {
          const inBucket = cumulative - previousCount;
          const fraction =
            inBucket === 0 ? 1 : (rank - previousCount) / inBucket;
          value = previousBound + (bound - previousBound) * fraction;
        }
        break;
      }
      previousBound = bound;
      previousCount = cumulative;
    }
    result[key] = value;
  }
  return result;
}
