// The measured scenarios of the end-to-end bench (bench/e2e.mjs): the staged run (step 3), the
// partitioned bundle rollout (step 4) and the hub restart during a staged run (step 5). Each writes
// its figures into `result`.
// @ts-check
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { callUnary } from "@flotilla/protocol";
import { runProcess } from "@flotilla/testkit";
import {
  bundleIdealMakespanSeconds,
  idealMakespanSeconds,
  VERSIONS,
  writeBundle,
} from "./e2e-fleet.mjs";
import { round, scrape, total } from "./e2e-measure.mjs";
import {
  firstLine,
  follow,
  getRun,
  startAndFollowRun,
  startHub,
  stopUnlessFinished,
} from "./e2e-steps.mjs";

/** @import { wire } from "@flotilla/protocol" */
/** @import { TestProcess } from "@flotilla/testkit" */
/** @import { E2eResult, E2eSettings } from "./e2e.mjs" */
/** @import { HubArgs } from "./e2e-steps.mjs" */

/**
 * Step 3: the staged run over the `staged=yes` clusters, against its ideal makespan.
 * @param {wire.AdminServiceClient} admin
 * @param {E2eSettings} o
 * @param {E2eResult} result
 * @param {(line: string) => void} log
 * @returns {Promise<void>}
 */
export async function stagedRun(admin, o, result, log) {
  await callUnary(admin, "createUpdateRun", {
    name: "bench-staged",
    strategyName: "bench-3stage",
    payload: {
      upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: VERSIONS.mid },
    },
    reason: "bench",
  });
  const created = await getRun(admin, "bench-staged");
  const members = created.stages.flatMap((s) =>
    s.groups.flatMap((g) => g.members),
  ).length;
  result.stagedMembers = members;
  result.stagedIdealMakespanSeconds = idealMakespanSeconds(
    created,
    o.upgradeSeconds,
  );
  result.stagedEffectiveGroupConcurrency = Object.fromEntries(
    created.stages.flatMap((s) =>
      s.groups.map((g) => [g.name, g.maxConcurrency]),
    ),
  );
  const observedMs = await startAndFollowRun({
    admin,
    name: "bench-staged",
    log,
    timeoutMs: Number(result.stagedIdealMakespanSeconds) * 5_000 + 120_000,
  });
  const done = await getRun(admin, "bench-staged");
  result.stagedMakespanObservedSeconds = round(observedMs / 1000);
  result.stagedMakespanSeconds =
    done.startedAtMs !== undefined && done.finishedAtMs !== undefined
      ? round((done.finishedAtMs - done.startedAtMs) / 1000)
      : result.stagedMakespanObservedSeconds;
  result.stagedMakespanRatio = round(
    Number(result.stagedMakespanSeconds) /
      Number(result.stagedIdealMakespanSeconds),
    3,
  );
  log(
    `e2e: staged run of ${String(members)} members: ${String(result.stagedMakespanSeconds)} s (ideal ${String(result.stagedIdealMakespanSeconds)} s)`,
  );
}

/**
 * Step 4: `flotilla bundle apply` of the bench bundle, followed until every cluster is Ready.
 * @param {string} grpc
 * @param {string} metricsUrl
 * @param {wire.AdminServiceClient} admin
 * @param {E2eSettings} o
 * @param {string} work
 * @param {E2eResult} result
 * @param {(line: string) => void} log
 * @returns {Promise<void>}
 */
export async function bundleRollout(
  grpc,
  metricsUrl,
  admin,
  o,
  work,
  result,
  log,
) {
  const dir = await writeBundle(join(work, "bundle"));
  const before = total(
    await scrape(metricsUrl),
    "flotilla_hub_intents_published_total",
  );
  const t0 = performance.now();
  const applied = await runProcess({
    name: "flotilla bundle apply",
    args: [
      "packages/cli/dist/main.js",
      "bundle",
      "apply",
      dir,
      "--name",
      "bench-web",
    ],
    env: {
      FLOTILLA_HUB: grpc,
      FLOTILLA_INSECURE_PLAINTEXT: "1",
      FLOTILLA_ACTOR: "bench",
    },
  });
  if (applied.code !== 0)
    throw new Error(`flotilla bundle apply failed: ${applied.stderr}`);
  result.bundleApplyCliSeconds = round((performance.now() - t0) / 1000);
  await follow({
    what: "bundle",
    log,
    intervalMs: 1000,
    timeoutMs: o.bundleTimeoutSeconds * 1000,
    check: async () => {
      // Every GetBundle makes the hub evaluate the whole bundle: ask once a second at most.
      const { bundle } = await callUnary(
        admin,
        "getBundle",
        { name: "bench-web" },
        { timeoutMs: 30_000 },
      );
      const counts = bundle?.counts ?? { targets: 0, ready: 0 };
      return {
        done: counts.targets === o.clusters && counts.ready === o.clusters,
        line: `${String(counts.ready)}/${String(counts.targets)} Ready`,
      };
    },
  });
  const seconds = (performance.now() - t0) / 1000;
  const after = total(
    await scrape(metricsUrl),
    "flotilla_hub_intents_published_total",
  );
  result.bundleMakespanSeconds = round(seconds);
  result.bundleIdealMakespanSeconds = bundleIdealMakespanSeconds(
    o.clusters,
    o.applySeconds,
  );
  const published = Number(after) - Number(before);
  result.bundleIntentsPublished = published;
  result.bundleIntentsPerSecond = round(published / seconds, 1);
  log(
    `e2e: bundle Ready on ${String(o.clusters)} in ${String(result.bundleMakespanSeconds)} s`,
  );
}

/**
 * Starts a second staged run (to the next minor version, over the same members), waits until it
 * is Running with at least one member Succeeded, then SIGKILLs the hub and starts a new one on the
 * same ports with the same NATS. Measures from the new process's spawn to every cluster connected
 * again and to a member transition after the spawn. A second run rather than a restart inside
 * step 3 keeps step 3's makespan clean.
 * @param {TestProcess} hub
 * @param {HubArgs} hubArgs
 * @param {string} metricsUrl
 * @param {wire.AdminServiceClient} admin
 * @param {E2eSettings} o
 * @param {E2eResult} result
 * @param {(next: TestProcess) => void} onRestarted told the new hub process as soon as it serves,
 *   so that the caller stops it even when a later part of the step fails
 * @returns {Promise<void>}
 */
export async function restartDuringRun(
  hub,
  hubArgs,
  metricsUrl,
  admin,
  o,
  result,
  onRestarted,
) {
  const { log, clusters } = o;
  await callUnary(admin, "createUpdateRun", {
    name: "bench-restart",
    strategyName: "bench-3stage",
    payload: {
      upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: VERSIONS.to },
    },
    reason: "bench",
  });
  await callUnary(admin, "startUpdateRun", {
    name: "bench-restart",
    reason: "bench",
  });
  await follow({
    what: "run bench-restart",
    log,
    intervalMs: 500,
    timeoutMs: 120_000,
    check: async () => {
      const run = await getRun(admin, "bench-restart");
      const ok = run.stages.flatMap((s) => s.groups.flatMap((g) => g.members));
      const n = ok.filter((m) => m.state === "Succeeded").length;
      return {
        done: run.state === "Running" && n > 0,
        line: `${String(n)} succeeded, ${run.state}`,
      };
    },
  });
  hub.kill("SIGKILL");
  await hub.exited;
  const spawnedAtMs = Date.now();
  const t0 = performance.now();
  const next = await startHub(hubArgs);
  onRestarted(next);
  result.hubRestartServingSeconds = round((performance.now() - t0) / 1000);
  /** @type {number | undefined} */
  let connectedAt;
  /** @type {number | undefined} */
  let progressAt;
  await follow({
    what: "after restart",
    log,
    intervalMs: 500,
    timeoutMs: 600_000,
    check: async () => {
      const now = performance.now();
      if (connectedAt === undefined) {
        const n =
          total(await scrape(metricsUrl), "flotilla_hub_agents_connected") ?? 0;
        if (n >= clusters) connectedAt = now;
      }
      if (progressAt === undefined) {
        const run = await getRun(admin, "bench-restart");
        const members = run.stages.flatMap((s) =>
          s.groups.flatMap((g) => g.members),
        );
        if (
          run.state !== "Running" ||
          members.some((m) => m.stateChangedAtMs >= spawnedAtMs)
        )
          progressAt = now;
      }
      return {
        done: connectedAt !== undefined && progressAt !== undefined,
        line: `connected ${connectedAt === undefined ? "no" : "yes"}, run progressed ${progressAt === undefined ? "no" : "yes"}`,
      };
    },
  });
  result.restartAllConnectedSeconds = round((Number(connectedAt) - t0) / 1000);
  result.restartRunResumedSeconds = round((Number(progressAt) - t0) / 1000);
  result.restartSeconds = Math.max(
    Number(result.restartAllConnectedSeconds),
    Number(result.restartRunResumedSeconds),
  );
  if (!o.finishRestartRun) {
    // Quick mode: the restart figures are taken; stop run 2 instead of waiting for it.
    await stopUnlessFinished(admin, "bench-restart", "bench: restart measured");
    return;
  }
  // Let run 2 finish so that the bundle rollout does not share the hub with it.
  try {
    await follow({
      what: "run bench-restart",
      log,
      intervalMs: 1000,
      timeoutMs: 1_800_000,
      check: async () => {
        const run = await getRun(admin, "bench-restart");
        if (["Failed", "Stopped"].includes(run.state))
          return {
            done: true,
            line: run.state,
            error: new Error(`run bench-restart ended ${run.state}`),
          };
        if (run.state === "Completed")
          result.restartRunMakespanSeconds = round(
            (Number(run.finishedAtMs) - Number(run.startedAtMs)) / 1000,
          );
        return { done: run.state === "Completed", line: run.state };
      },
    });
  } catch (error) {
    result.errors.restartRun = firstLine(error);
  }
}
