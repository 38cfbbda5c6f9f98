// The failover step of the end-to-end bench (bench/e2e.mjs), after the single-hub steps: the hub
// becomes two replicas on the same NATS (docs/high-availability.md), the fleet's agent processes
// are started again with both addresses (each agent draws its own order, so they spread over the
// replicas; their simulated clusters start again from the fleet file, so each reports changed
// facts and applies the bundle again), a staged run is started, and once it is moving the replica that owns it (its lease
// in the `flotilla-leases` bucket) is SIGKILLed. From the kill it measures (see measureFailover):
//   (a) the lease: another replica holds the run's lease (the lease TTL, stated, is part of it);
//   (b) the reconnect: every agent has a session on the surviving replica again (its /healthz);
//   (c) the run making progress again: the first member state change stamped after the kill, as
//       the surviving replica reports the run (it follows the owner's journal).
// Then it stops the run and takes the surviving replica's RSS.
// @ts-check
import { performance } from "node:perf_hooks";
import { credentials } from "@grpc/grpc-js";
import { callUnary, createAdminServiceClient } from "@flotilla/protocol";
import { freePort } from "@flotilla/testkit";
import { VERSIONS } from "./e2e-fleet.mjs";
import { round, rssKiB } from "./e2e-measure.mjs";
import {
  follow,
  getRun,
  startAgents,
  startHub,
  stopUnlessFinished,
} from "./e2e-steps.mjs";
import { agentsOn, LEASE_TTL_SECONDS, openLeases } from "./hub-replicas.mjs";

/** @import { wire } from "@flotilla/protocol" */
/** @import { TestProcess } from "@flotilla/testkit" */
/** @import { E2eResult, E2eSettings } from "./e2e.mjs" */
/** @import { HubArgs } from "./e2e-steps.mjs" */

const RUN = "bench-failover";

/**
 * One hub replica of the step: its process and addresses.
 * @typedef {{ process: TestProcess, args: HubArgs & { replicaId: string } }} Replica
 */

/**
 * Runs the failover step. `first` is the hub of the single-hub steps (started with `replicaId`);
 * `agents` the fleet's agent processes, stopped here and replaced by new ones pushed onto the same
 * list; every hub process started is pushed onto `hubs`, for the caller to stop.
 * @param {{
 *   first: Replica,
 *   agents: TestProcess[],
 *   files: string[],
 *   hubs: TestProcess[],
 *   o: E2eSettings,
 *   result: E2eResult,
 * }} step
 * @returns {Promise<void>}
 */
export async function failoverDuringRun({
  first,
  agents,
  files,
  hubs,
  o,
  result,
}) {
  const { log, clusters } = o;
  const nats = first.args.nats;
  result.failoverLeaseTtlSeconds = LEASE_TTL_SECONDS;
  for (const a of agents.splice(0)) await a.stop(15_000);

  const secondArgs = {
    grpc: `127.0.0.1:${String(await freePort())}`,
    http: `127.0.0.1:${String(await freePort())}`,
    nats,
    replicaId: "bench-hub-b",
  };
  /** @type {Replica} */
  const second = { process: await startHub(secondArgs), args: secondArgs };
  hubs.push(second.process);
  const replicas = [first, second];
  log(`e2e: second hub replica serving; starting the agents with both`);

  const hubList = replicas.map((r) => r.args.grpc).join(",");
  const spawnedAt = performance.now();
  let expected = 0;
  for (const [i, file] of files.entries()) {
    agents.push(
      startAgents({
        name: `agents ${String(i)} (HA)`,
        file,
        hub: hubList,
        nats,
      }),
    );
    expected +=
      Math.floor(clusters / files.length) +
      (i < clusters % files.length ? 1 : 0);
    await waitConnectedOn(replicas, expected, o);
  }
  result.failoverConnectSeconds = round((performance.now() - spawnedAt) / 1000);

  const admin = createAdminServiceClient(
    first.args.grpc,
    credentials.createInsecure(),
  );
  const leases = await openLeases(nats);
  /** @type {wire.AdminServiceClient | undefined} */
  let survivorAdmin;
  try {
    await startMovingRun(admin, o);
    const owned = await leases.holder(`run/${RUN}`);
    const killed = replicas.find((r) => r.args.replicaId === owned?.holder);
    const survivor = replicas.find((r) => r !== killed);
    if (killed === undefined || survivor === undefined)
      throw new Error(
        `the lease of run/${RUN} is held by ${String(owned?.holder)}, not by a replica of the bench`,
      );
    result.failoverKilledReplica = killed.args.replicaId;
    result.failoverAgentsOnKilled = await agentsOn(killed.args.http);
    result.failoverAgentsOnSurvivor = await agentsOn(survivor.args.http);
    survivorAdmin = createAdminServiceClient(
      survivor.args.grpc,
      credentials.createInsecure(),
    );
    const killedAtMs = Date.now();
    killed.process.kill("SIGKILL");
    await killed.process.exited;
    log(
      `e2e: SIGKILLed ${killed.args.replicaId}, the owner of ${RUN} (${String(result.failoverAgentsOnKilled)} agents on it)`,
    );
    const at = await measureFailover({
      leases,
      admin: survivorAdmin,
      survivor,
      killedId: killed.args.replicaId,
      killedAtMs,
      o,
    });
    result.failoverLeaseSeconds = round(at.lease.ms / 1000);
    result.failoverTakeoverEpoch = at.lease.epoch;
    result.failoverReconnectSeconds = round(at.reconnected / 1000);
    result.failoverProgressSeconds = round(at.progress / 1000);
    log(
      `e2e: failover: lease taken after ${String(result.failoverLeaseSeconds)} s, agents back after ${String(result.failoverReconnectSeconds)} s, run moving after ${String(result.failoverProgressSeconds)} s`,
    );
    // The figures are taken; a whole run more would add minutes and measure nothing new.
    await stopUnlessFinished(survivorAdmin, RUN, "bench: failover measured");
    result.failoverSurvivorRssEndKiB = await rssKiB(survivor.process.pid);
  } finally {
    survivorAdmin?.close();
    admin.close();
    await leases.close();
  }
}

/**
 * Waits until the replicas together hold `count` agent sessions.
 * @param {Replica[]} replicas
 * @param {number} count
 * @param {E2eSettings} o
 */
function waitConnectedOn(replicas, count, o) {
  return follow({
    what: "fleet (HA)",
    log: o.log,
    intervalMs: 500,
    timeoutMs: 600_000,
    check: async () => {
      const on = await Promise.all(replicas.map((r) => agentsOn(r.args.http)));
      const connected = on.reduce((s, n) => s + n, 0);
      return {
        done: connected >= count,
        line: `${String(connected)}/${String(count)} connected (${on.join(" + ")})`,
      };
    },
  });
}

/**
 * Creates and starts the step's run over the staged clusters and waits until a member has
 * succeeded. The agent processes were started again, so their simulated clusters are back on the
 * fleet's first version: the run upgrades them to the next minor, as the staged step did.
 * @param {wire.AdminServiceClient} admin
 * @param {E2eSettings} o
 */
async function startMovingRun(admin, o) {
  await callUnary(admin, "createUpdateRun", {
    name: RUN,
    strategyName: "bench-3stage",
    payload: {
      upgrade: {
        type: "UPGRADE_TYPE_FULL",
        kubernetesVersion: VERSIONS.mid,
      },
    },
    reason: "bench",
  });
  await callUnary(admin, "startUpdateRun", { name: RUN, reason: "bench" });
  await follow({
    what: `run ${RUN}`,
    log: o.log,
    intervalMs: 500,
    timeoutMs: 120_000,
    check: async () => {
      const run = await getRun(admin, RUN);
      const members = run.stages.flatMap((s) =>
        s.groups.flatMap((g) => g.members),
      );
      const n = members.filter((m) => m.state === "Succeeded").length;
      return {
        done: run.state === "Running" && n > 0,
        line: `${String(n)} succeeded, ${run.state}`,
      };
    },
  });
}

/**
 * Follows the failover from the kill, three things at once, each in its own loop so that a
 * replica slow to answer during the reconnect storm delays none of the others:
 *   - the lease: read from NATS until another replica holds it; taken at the time the server
 *     stored that write;
 *   - the agents: the surviving replica's /healthz until it holds a session for every cluster;
 *     taken when that answer arrives;
 *   - the run: the surviving replica's view until a member changed state after the kill; taken
 *     at that change's own stamp (the earliest one after the kill), not when the bench saw it.
 * Resolves with each as ms after the kill (Date.now() clock).
 * @param {{
 *   leases: Awaited<ReturnType<typeof openLeases>>,
 *   admin: wire.AdminServiceClient,
 *   survivor: Replica,
 *   killedId: string,
 *   killedAtMs: number,
 *   o: E2eSettings,
 * }} options
 * @returns {Promise<{
 *   lease: { ms: number, epoch: number },
 *   reconnected: number,
 *   progress: number,
 * }>}
 */
async function measureFailover({
  leases,
  admin,
  survivor,
  killedId,
  killedAtMs,
  o,
}) {
  const timeoutMs = 600_000;
  /** @type {{ ms: number, epoch: number } | undefined} */
  let lease;
  /** @type {number | undefined} */
  let reconnected;
  /** @type {number | undefined} */
  let progress;
  // Set when one loop fails, so that the others end at their next check.
  let failed = false;
  const ended = { done: true, line: "ended" };
  await Promise.all([
    follow({
      what: "lease",
      log: o.log,
      intervalMs: 250,
      timeoutMs,
      check: async () => {
        if (failed) return ended;
        const holder = await leases.holder(`run/${RUN}`);
        if (holder !== undefined && holder.holder !== killedId)
          lease = {
            ms: holder.writtenAtMs - killedAtMs,
            epoch: holder.epoch,
          };
        return {
          done: lease !== undefined,
          line: `held by ${holder?.holder ?? "nobody"}`,
        };
      },
    }),
    follow({
      what: "agents back",
      log: o.log,
      intervalMs: 500,
      timeoutMs,
      check: async () => {
        if (failed) return ended;
        const n = await agentsOn(survivor.args.http);
        if (n >= o.clusters) reconnected = Date.now() - killedAtMs;
        return {
          done: reconnected !== undefined,
          line: `${String(n)}/${String(o.clusters)} on ${survivor.args.replicaId}`,
        };
      },
    }),
    follow({
      what: "run moving",
      log: o.log,
      intervalMs: 500,
      timeoutMs,
      check: async () => {
        if (failed) return ended;
        const run = await getRun(admin, RUN);
        const stamps = run.stages
          .flatMap((s) => s.groups.flatMap((g) => g.members))
          .map((m) => m.stateChangedAtMs)
          .filter((t) => t >= killedAtMs);
        if (stamps.length > 0) progress = Math.min(...stamps) - killedAtMs;
        else if (run.state !== "Running")
          progress = (run.finishedAtMs ?? Date.now()) - killedAtMs;
        return {
          done: progress !== undefined,
          line: `${run.state}, no member changed since the kill`,
        };
      },
    }),
  ]).catch((/** @type {unknown} */ error) => {
    failed = true;
    throw error;
  });
  return {
    lease: /** @type {{ ms: number, epoch: number }} */ (lease),
    reconnected: Number(reconnected),
    progress: Number(progress),
  };
}
