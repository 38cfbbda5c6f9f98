// Processes and follow-loops of the end-to-end bench (bench/e2e.mjs): starting the hub and agent
// processes, waiting on a condition while printing a progress line every second, and following a
// staged run through WatchUpdateRun.
// @ts-check
import { performance } from "node:perf_hooks";
import { callUnary, runFromWire } from "@flotilla/protocol";
import { startProcess } from "@flotilla/testkit";
import { scrape, total } from "./e2e-measure.mjs";
import { LEASE_TTL } from "./hub-replicas.mjs";

/** @import { RunView, wire } from "@flotilla/protocol" */
/** @import { TestProcess } from "@flotilla/testkit" */

/**
 * What one check of `follow` found: done, still waiting (with a progress line), or failed.
 * @typedef {{ done: boolean, line?: string, error?: Error }} FollowState
 */

/**
 * The first line of a caught error's message.
 * @param {unknown} error
 * @returns {string}
 */
export function firstLine(error) {
  return /** @type {Error} */ (error).message.split("\n")[0] ?? "";
}

/**
 * The addresses of one hub process of the scenario, and its replica name when it is one of
 * several (docs/high-availability.md).
 * @typedef {{ grpc: string, http: string, nats: string, replicaId?: string }} HubArgs
 */

/**
 * Starts the hub in plaintext development mode with default heartbeat and pass intervals. The
 * secured mode's extra costs (TLS handshakes, 10,000 registrations and certificates, one NATS
 * connection per cluster with per-cluster credentials) are NOT part of this scenario. With a
 * `replicaId` the process is named so and runs with the lease TTL stated by the bench (the hub's
 * default).
 * @param {HubArgs} addresses
 * @returns {Promise<TestProcess>}
 */
export async function startHub({ grpc, http, nats, replicaId }) {
  const hub = startProcess({
    name: replicaId ?? "hub",
    args: [
      "packages/hub/dist/main.js",
      "--listen",
      grpc,
      "--http-listen",
      http,
      "--nats",
      nats,
      "--insecure-plaintext",
      "--log-level",
      "warn",
      ...(replicaId === undefined
        ? []
        : ["--replica-id", replicaId, "--lease-ttl", LEASE_TTL]),
    ],
  });
  await hub.waitForLine(/serving gRPC/, 60_000);
  return hub;
}

/**
 * Starts one agent process hosting the fleet file's simulated clusters.
 * @param {{ name: string, file: string, hub: string, nats: string }} agents
 * @returns {TestProcess}
 */
export function startAgents({ name, file, hub, nats }) {
  return startProcess({
    name,
    args: [
      "packages/agent/dist/main.js",
      "--simulated-fleet",
      file,
      "--hub",
      hub,
      "--nats",
      nats,
      "--insecure-plaintext",
      "--metrics-listen",
      "off",
      "--log-level",
      "warn",
    ],
  });
}

/**
 * Calls `check()` every `intervalMs` until it returns `{done: true}`; prints its `line` at most
 * once a second. A check that throws is retried (the hub may be restarting); one that returns
 * `{error}` ends the wait with that error. Resolves with the elapsed ms; rejects after `timeoutMs` naming `what`.
 * @param {{
 *   what: string,
 *   check: () => FollowState | Promise<FollowState>,
 *   log: (line: string) => void,
 *   intervalMs: number,
 *   timeoutMs: number,
 * }} options
 * @returns {Promise<number>}
 */
export async function follow({ what, check, log, intervalMs, timeoutMs }) {
  const t0 = performance.now();
  let lastLine = -Infinity;
  for (;;) {
    /** @type {FollowState} */
    let state;
    try {
      state = await check();
    } catch (error) {
      state = { done: false, line: `(${firstLine(error)})` };
    }
    const now = performance.now();
    if (state.error !== undefined) throw state.error;
    if (state.done) return now - t0;
    if (now - lastLine >= 1000) {
      lastLine = now;
      log(
        `${what}: ${String(state.line)} (${((now - t0) / 1000).toFixed(1)} s)`,
      );
    }
    if (now - t0 > timeoutMs)
      throw new Error(
        `${what}: not done after ${String(timeoutMs)} ms (${String(state.line)})`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Waits until the hub's /metrics counts `count` connected agents; resolves with the elapsed ms.
 * @param {{
 *   metricsUrl: string,
 *   count: number,
 *   log: (line: string) => void,
 *   timeoutMs: number,
 *   what: string,
 * }} options
 * @returns {Promise<number>}
 */
export function waitConnected({ metricsUrl, count, log, timeoutMs, what }) {
  return follow({
    what,
    log,
    intervalMs: 500,
    timeoutMs,
    check: async () => {
      const connected =
        total(await scrape(metricsUrl), "flotilla_hub_agents_connected") ?? 0;
      return {
        done: connected >= count,
        line: `${String(connected)}/${String(count)} connected`,
      };
    },
  });
}

/**
 * The run as the hub reports it (RunView).
 * @param {wire.AdminServiceClient} admin
 * @param {string} name
 * @returns {Promise<RunView>}
 */
export async function getRun(admin, name) {
  const { run } = await callUnary(admin, "getUpdateRun", { name });
  if (run === null) throw new Error(`no run ${name} in the answer`);
  const view = runFromWire(run);
  if (!view.ok)
    throw new Error(`run ${name}: ${JSON.stringify(view.problems)}`);
  return view.value;
}

/** Run states after which nothing moves any more (docs/semantics.md#operator-actions). */
const FINISHED = ["Completed", "Failed", "Stopped", "Skipped"];

/**
 * Stops run `name` unless it has already finished (it may, while the figures were being taken).
 * @param {wire.AdminServiceClient} admin
 * @param {string} name
 * @param {string} reason
 * @returns {Promise<void>}
 */
export async function stopUnlessFinished(admin, name, reason) {
  if (FINISHED.includes((await getRun(admin, name)).state)) return;
  try {
    await callUnary(admin, "stopUpdateRun", { name, reason });
  } catch (error) {
    if (!FINISHED.includes((await getRun(admin, name)).state)) throw error;
  }
}

/**
 * Starts run `name` and follows it through WatchUpdateRun until it completes; prints members
 * succeeded / total each second. Resolves with the observed ms from StartUpdateRun returning to
 * the Completed state arriving.
 * @param {{
 *   admin: wire.AdminServiceClient,
 *   name: string,
 *   log: (line: string) => void,
 *   timeoutMs: number,
 * }} options
 * @returns {Promise<number>}
 */
export async function startAndFollowRun({ admin, name, log, timeoutMs }) {
  const stream = admin.watchUpdateRun({ name });
  let succeeded = 0;
  let totalMembers = 0;
  let state = "";
  /** @type {Error | undefined} */
  let failure;
  /** @type {number} */
  let t0;
  /** @type {number | undefined} */
  let doneAt;
  const consumed = (async () => {
    for await (const event of /** @type {AsyncIterable<wire.WatchUpdateRunResponse__Output>} */ (
      stream
    )) {
      if (event.snapshot != null) {
        state = event.snapshot.state;
        const view = runFromWire(event.snapshot);
        if (view.ok) {
          const members = view.value.stages.flatMap((s) =>
            s.groups.flatMap((g) => g.members),
          );
          totalMembers = members.length;
          succeeded = members.filter((m) => m.state === "Succeeded").length;
        }
      } else if (event.change?.summary != null) {
        state = event.change.summary.state;
        succeeded = event.change.summary.members?.succeeded ?? succeeded;
        totalMembers = event.change.summary.members?.total ?? totalMembers;
      }
      if (state === "RUN_STATE_COMPLETED") {
        doneAt = performance.now();
        break;
      }
      if (["RUN_STATE_FAILED", "RUN_STATE_STOPPED"].includes(state)) {
        failure = new Error(`run ${name} ended ${state}`);
        break;
      }
    }
  })().catch((/** @type {unknown} */ error) => {
    failure = /** @type {Error} */ (error);
  });
  try {
    await callUnary(admin, "startUpdateRun", { name, reason: "bench" });
    t0 = performance.now();
    await follow({
      what: `run ${name}`,
      log,
      intervalMs: 100,
      timeoutMs,
      check: () => {
        return {
          done: doneAt !== undefined || failure !== undefined,
          line: `${String(succeeded)}/${String(totalMembers)} members succeeded, ${state}`,
        };
      },
    });
  } finally {
    stream.cancel();
    await consumed;
  }
  if (failure !== undefined) throw failure;
  return Number(doneAt) - t0;
}
