// End-to-end scale bench (scenarios 2 and 3): a real nats-server with JetStream, the real
// hub process (plaintext development mode) and `agentProcesses` agent processes hosting
// `clusters` simulated clusters between them, each cluster with its own gRPC stream and intent
// watch. In one fresh set-up it measures:
//   1. hub RSS idle, and one agent process hosting one cluster;
//   2. time until every cluster is connected, hub RSS per connected cluster, each agent process's
//      RSS, and the idle CPU of agents and hub (`top -b -n 2 -d 5`);
//   3. a 3-stage staged upgrade run (stage maxConcurrency 50) over `stagedMembers` clusters:
//      makespan against the ideal computed from the run's effective limits;
//   4. a hub SIGKILL + restart while a second staged run (to the next minor) is in progress: time
//      from the new process's spawn to every agent reconnected and to the run making progress
//      again (a member transition stamped after the spawn); then run 2 is followed to its end;
//   5. a partitioned Fleet bundle rollout to every cluster: makespan and intents published / s
//      (last: in one 10,000-cluster run the hub stopped answering near its end);
//   6. the hub's report→intent latency histogram, status reports and intents published, scraped
//      before the restart (`staged…`: the staged run) and at the end (`afterRestart…`: the rest of
//      run 2 and the bundle), since counters start from zero in the new process; the hub's RSS
//      after all of that (`hubRssEndKiB`);
//   7. failover (bench/e2e-failover.mjs): a second hub replica on the same NATS, the agents
//      started again with both addresses, a third staged run, its owner SIGKILLed: time to the
//      lease taken by the other replica, to every agent back on it, and to the run moving again;
//      the surviving replica's RSS at the end (`failoverSurvivorRssEndKiB`).
//      `failover: false` leaves it out.
// Memory: RSS from /proc/PID/status VmRSS, in KiB (1 KiB = 1024 bytes) and MiB.
// `node bench/e2e.mjs [--clusters N] [--agents K] [--staged N] [--quick] [--no-failover]` prints
// the JSON.
// @ts-check
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { credentials } from "@grpc/grpc-js";
import { callUnary, createAdminServiceClient } from "@flotilla/protocol";
import { freePort, startNatsServer } from "@flotilla/testkit";
import {
  stagedStrategy,
  writeFleetFiles,
  writeSingleFleetFile,
} from "./e2e-fleet.mjs";
import {
  cpuPercent,
  histogramPercentiles,
  round,
  rssKiB,
  scrape,
  total,
} from "./e2e-measure.mjs";
import {
  firstLine,
  startAgents,
  startHub,
  waitConnected,
} from "./e2e-steps.mjs";
import {
  bundleRollout,
  restartDuringRun,
  stagedRun,
} from "./e2e-scenarios.mjs";
import { failoverDuringRun } from "./e2e-failover.mjs";

/** @import { wire } from "@flotilla/protocol" */
/** @import { NatsServer, TestProcess } from "@flotilla/testkit" */

/**
 * What `runEndToEnd` may be told; every field has a default.
 * @typedef {{
 *   clusters?: number,
 *   agentProcesses?: number,
 *   stagedMembers?: number,
 *   upgradeSeconds?: number,
 *   applySeconds?: number,
 *   bundleTimeoutSeconds?: number,
 *   finishRestartRun?: boolean,
 *   failover?: boolean,
 *   onProgress?: (line: string) => void,
 * }} E2eOptions
 */
/** @typedef {ReturnType<typeof settings>} E2eSettings */
/**
 * Every figure of the run, by name, and the first line of each step's error.
 * @typedef {Record<string, unknown> & { errors: Record<string, string> }} E2eResult
 */

/** @param {E2eOptions} options */
function settings(options) {
  const clusters = options.clusters ?? 10_000;
  const agentProcesses = options.agentProcesses ?? 4;
  const stagedMembers = options.stagedMembers ?? clusters;
  for (const [field, value, min] of /** @type {[string, number, number][]} */ ([
    ["clusters", clusters, 1],
    ["agentProcesses", agentProcesses, 1],
    ["stagedMembers", stagedMembers, 1],
  ]))
    if (!Number.isInteger(value) || value < min)
      throw new Error(
        `${field} must be an integer ≥ ${String(min)} (got ${String(value)})`,
      );
  if (stagedMembers > clusters)
    throw new Error(
      `stagedMembers must be at most clusters (${String(clusters)}), got ${String(stagedMembers)}`,
    );
  return {
    clusters,
    agentProcesses,
    stagedMembers,
    upgradeSeconds: options.upgradeSeconds ?? 2,
    applySeconds: options.applySeconds ?? 1,
    bundleTimeoutSeconds: options.bundleTimeoutSeconds ?? 600,
    // Follow the run interrupted by the restart to its end (its makespan is reported).
    finishRestartRun: options.finishRestartRun ?? true,
    // Step 7: two hub replicas, the owner of a run SIGKILLed.
    failover: options.failover ?? true,
    log:
      options.onProgress ??
      /** @param {string} line */
      ((line) => process.stderr.write(`${line}\n`)),
  };
}

/**
 * Runs the whole scenario; resolves with one object holding every figure.
 * @param {E2eOptions} [options]
 * @returns {Promise<E2eResult>}
 */
export async function runEndToEnd(options = {}) {
  const o = settings(options);
  const { log, clusters } = o;
  const work = await mkdtemp(join(tmpdir(), "flotilla-bench-e2e-"));
  /** @type {E2eResult} */
  const result = {
    clusters,
    agentProcesses: o.agentProcesses,
    stagedMembersRequested: o.stagedMembers,
    upgradeSeconds: o.upgradeSeconds,
    applySeconds: o.applySeconds,
    errors: {},
  };
  /** @type {TestProcess[]} */
  const agents = [];
  /** Hub processes started by the failover step, stopped at the end with the first. */
  /** @type {TestProcess[]} */
  const replicas = [];
  /** @type {NatsServer | undefined} */
  let nats;
  /** @type {TestProcess | undefined} */
  let hub;
  /** @type {wire.AdminServiceClient | undefined} */
  let admin;
  try {
    nats = await startNatsServer();
    const grpc = `127.0.0.1:${String(await freePort())}`;
    const http = `127.0.0.1:${String(await freePort())}`;
    const metricsUrl = `http://${http}/metrics`;
    // Named as a replica, so that the failover step can tell it from the second one; alone it
    // behaves as any single hub (docs/high-availability.md).
    const hubArgs = { grpc, http, nats: nats.url, replicaId: "bench-hub-a" };
    hub = await startHub(hubArgs);
    admin = createAdminServiceClient(grpc, credentials.createInsecure());
    await scrape(metricsUrl);
    const hubRssIdleKiB = await rssKiB(hub.pid);
    result.hubRssIdleKiB = hubRssIdleKiB;
    /**
     * A hub's RSS above the first hub's idle RSS (empty store, nothing connected), per cluster.
     * @param {unknown} kiB
     */
    const perCluster = (kiB) =>
      typeof kiB === "number" ? round((kiB - hubRssIdleKiB) / clusters) : null;
    log(`e2e: hub serving, idle RSS ${String(hubRssIdleKiB)} KiB`);

    // One agent process hosting one cluster (outside the main fleet: label fleet=single).
    const single = startAgents({
      name: "agent single",
      file: await writeSingleFleetFile(work, o.upgradeSeconds, o.applySeconds),
      hub: grpc,
      nats: nats.url,
    });
    await waitConnected({
      metricsUrl,
      count: 1,
      log,
      timeoutMs: 60_000,
      what: "single agent",
    });
    result.singleAgentProcessRssMiB = round((await rssKiB(single.pid)) / 1024);
    await single.stop();

    // The fleet.
    const files = await writeFleetFiles(join(work, "fleet"), {
      clusters,
      processes: o.agentProcesses,
      staged: o.stagedMembers,
      upgradeSeconds: o.upgradeSeconds,
      applySeconds: o.applySeconds,
    });
    // One process after the other: each starts its clusters all at once, and four processes
    // doing so together on two cores (agents, hub and NATS sharing them) starve the hub, so some
    // hellos wait past the agents' 30 s welcome timeout and back off. A real fleet does not start
    // 10,000 agents in the same second; the hub restart below is the storm that does happen.
    const spawnedAt = performance.now();
    let expected = 0;
    for (const [i, file] of files.entries()) {
      agents.push(
        startAgents({
          name: `agents ${String(i)}`,
          file,
          hub: grpc,
          nats: nats.url,
        }),
      );
      expected +=
        Math.floor(clusters / files.length) +
        (i < clusters % files.length ? 1 : 0);
      await waitConnected({
        metricsUrl,
        count: expected,
        log,
        timeoutMs: 600_000,
        what: "fleet",
      });
    }
    const allConnectedSeconds = round((performance.now() - spawnedAt) / 1000);
    result.allConnectedSeconds = allConnectedSeconds;
    const rssConnected = await rssKiB(hub.pid);
    result.hubRssConnectedKiB = rssConnected;
    result.hubRssPerClusterKiB = round(
      (rssConnected - hubRssIdleKiB) / clusters,
    );
    /** @type {(number | null)[]} */
    const agentProcessRssMiB = [];
    result.agentProcessRssMiB = agentProcessRssMiB;
    for (const a of agents)
      agentProcessRssMiB.push(round((await rssKiB(a.pid)) / 1024));
    log(
      `e2e: ${String(clusters)} connected in ${String(allConnectedSeconds)} s; hub RSS ${String(rssConnected)} KiB`,
    );
    const cpu = await cpuPercent([...agents.map((a) => a.pid), hub.pid]);
    result.agentIdleCpuPercent = cpu.slice(0, agents.length);
    result.hubIdleCpuPercent = cpu[agents.length];
    result.hubRssConnectedAfterIdleKiB = await rssKiB(hub.pid);

    // 3. Staged run.
    await callUnary(admin, "createUpdateStrategy", {
      name: "bench-3stage",
      strategyJson: JSON.stringify(stagedStrategy()),
      reason: "bench",
    });
    try {
      await stagedRun(admin, o, result, log);
    } catch (error) {
      result.errors.stagedRun = firstLine(error);
      log(`e2e: staged run failed: ${result.errors.stagedRun}`);
    }

    // 6, first half: the hub's figures so far (staged run only). The restart resets counters.
    Object.assign(result, await hubFigures(metricsUrl, "staged"));

    // 4. Hub restart during a second staged run, before the bundle: at 10,000 clusters the bundle
    // rollout has been seen to stall the hub, which must not spoil the restart figures.
    try {
      await restartDuringRun(
        hub,
        hubArgs,
        metricsUrl,
        admin,
        o,
        result,
        (next) => {
          hub = next;
        },
      );
    } catch (error) {
      result.errors.restart = firstLine(error);
      log(`e2e: restart failed: ${result.errors.restart}`);
    }

    // 5. Partitioned bundle rollout.
    try {
      await bundleRollout(grpc, metricsUrl, admin, o, work, result, log);
    } catch (error) {
      result.errors.bundle = firstLine(error);
      log(`e2e: bundle rollout failed: ${result.errors.bundle}`);
    }

    // 6, second half: the restarted hub's figures (the rest of run 2, and the bundle rollout).
    try {
      Object.assign(result, await hubFigures(metricsUrl, "afterRestart"));
    } catch (error) {
      result.errors.metrics = firstLine(error);
    }
    result.hubRssEndKiB = await rssKiB(hub.pid).catch(() => null);
    result.hubRssEndPerClusterKiB = perCluster(result.hubRssEndKiB);

    // 7. Failover between two hub replicas, last: it replaces the agent processes.
    if (o.failover)
      try {
        await failoverDuringRun({
          first: { process: hub, args: hubArgs },
          agents,
          files,
          hubs: replicas,
          o,
          result,
        });
        result.failoverSurvivorRssEndPerClusterKiB = perCluster(
          result.failoverSurvivorRssEndKiB,
        );
      } catch (error) {
        result.errors.failover = firstLine(error);
        log(`e2e: failover failed: ${result.errors.failover}`);
      }
    return result;
  } finally {
    admin?.close();
    await Promise.all(agents.map((a) => a.stop(15_000)));
    await hub?.stop(10_000);
    for (const r of replicas) await r.stop(10_000);
    await nats?.stop();
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The hub's report→intent latency percentiles (ms, linear interpolation inside buckets; null when
 * the histogram is absent) and its status report and intent counters, keys prefixed `prefix`.
 * @param {string} metricsUrl
 * @param {string} prefix
 * @returns {Promise<Record<string, number | null>>}
 */
async function hubFigures(metricsUrl, prefix) {
  const samples = await scrape(metricsUrl);
  const latency = histogramPercentiles(
    samples,
    "flotilla_hub_report_to_intent_seconds",
    [0.5, 0.9, 0.99],
  );
  /** @type {Record<string, number | null>} */
  const figures = { [`${prefix}ReportToIntentCount`]: latency.count };
  for (const key of ["p50", "p90", "p99"]) {
    const seconds = latency[key];
    figures[`${prefix}ReportToIntent${key.toUpperCase()}Ms`] =
      seconds === null || seconds === undefined
        ? null
        : round(seconds * 1000, 1);
  }
  figures[`${prefix}StatusReportsTotal`] = total(
    samples,
    "flotilla_hub_status_reports_total",
  );
  figures[`${prefix}IntentsPublishedTotal`] = total(
    samples,
    "flotilla_hub_intents_published_total",
  );
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const argv = process.argv.slice(2);
  const quick = argv.includes("--quick");
  /** @param {string} flag */
  const number = (flag) => {
    const at = argv.indexOf(flag);
    if (at === -1) return undefined;
    const value = Number(argv[at + 1]);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(
        `${flag} needs a positive integer (got "${String(argv[at + 1])}")`,
      );
    return value;
  };
  const clusters = number("--clusters") ?? (quick ? 1_000 : 10_000);
  const figures = await runEndToEnd({
    clusters,
    agentProcesses: number("--agents") ?? (quick ? 2 : 4),
    stagedMembers: number("--staged") ?? Math.min(clusters, 2_000),
    upgradeSeconds: quick ? 1 : 2,
    applySeconds: quick ? 0.5 : 1,
    failover: !argv.includes("--no-failover"),
  });
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
}
