/**
 * Recovery from crashes, end to end with real processes: the hub SIGKILLed mid-run, an agents
 * process SIGKILLed after its work and started again. The intent log hears every intent write
 * from the start of each test, so a restart that made the hub hand one generation two payloads,
 * or issue intents again for finished work, would show. (Outages: recovery-outage.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { callUnary } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { clusters, fleetFile } from "./fleet.js";
import {
  slowUpgrades,
  TEST_TIMEOUT_MS,
  useRecoveryEnv,
} from "./recovery-env.js";
import {
  clusterGet,
  createStrategy,
  membersOf,
  namesIn,
  pollUntil,
  rollOutBundle,
  startUpgrade,
  watchRun,
} from "./recovery-helpers.js";

const recovery = useRecoveryEnv();

describe("recovery from crashes", () => {
  it(
    "resumes a run after the hub is SIGKILLed, never giving a generation two payloads",
    async () => {
      const { env, log } = await recovery.start();
      await env.startAgents(
        "fleet",
        fleetFile([
          clusters("canary-", 3, { env: "canary" }, slowUpgrades),
          clusters("prod-", 9, { env: "prod" }, slowUpgrades),
        ]),
      );
      await env.connected(12);
      // A bundle first: every intent then has a history (generation 1: the bundle; 2: the upgrade
      // too), so a new hub that lost track of it would reuse a generation for other content.
      await rollOutBundle(env, recovery.work, "base", 12);
      await createStrategy(env, recovery.work, "rings", [
        {
          name: "canary",
          memberSelector: { byLabel: "env=canary" },
          maxConcurrency: 1,
        },
        {
          name: "prod",
          memberSelector: { byLabel: "env=prod" },
          maxConcurrency: 3,
        },
      ]);
      await startUpgrade(env, "up", "rings");

      // Kill the hub in the prod stage, with some members done and several in flight.
      const before = await watchRun(
        env,
        "up",
        (run) =>
          namesIn(run, "Succeeded").length >= 4 &&
          namesIn(run, "Running").length >= 2,
        { message: "4 members Succeeded and 2 Running" },
      );
      env.hub().kill("SIGKILL");
      expect((await env.hub().exited).signal).toBe("SIGKILL");
      const killedAtMs = Date.now();
      const succeededBefore = namesIn(before, "Succeeded");
      const runningBefore = namesIn(before, "Running");

      await env.startHub();
      const after = await watchRun(
        env,
        "up",
        (run) => run.state === "Completed",
        {
          message: "the run to complete after the hub restart",
          check: (run) => {
            // What had succeeded stays succeeded, in every snapshot the new hub shows.
            const members = membersOf(run);
            for (const name of succeededBefore) {
              expect(
                members.get(name)?.state,
                `${name} after the restart`,
              ).toBe("Succeeded");
            }
            expect(run.state).not.toBe("Failed");
          },
        },
      );

      const members = [...membersOf(after).values()];
      expect(members).toHaveLength(12);
      expect(members.filter((m) => m.state !== "Succeeded")).toEqual([]);
      expect(after.failureCount).toBe(0);
      // The members in flight at the kill were finished, not started again by the new hub.
      for (const name of runningBefore) {
        expect(membersOf(after).get(name)?.startedAtMs).toBe(
          membersOf(before).get(name)?.startedAtMs,
        );
      }

      // Every member was handed the run's upgrade once, and no generation meant two payloads.
      expect(log.invalid).toEqual([]);
      for (const m of members) {
        expect(
          log.of(m.name).map((r) => [r.generation, r.upgradeRun ?? ""]),
          m.name,
        ).toEqual([
          [1, ""],
          [2, "up"],
        ]);
      }
      expect(log.conflicts()).toEqual([]);
      // Members done before the kill got nothing new from the new hub: nothing is redone.
      for (const name of succeededBefore) {
        expect(log.of(name).filter((r) => r.atMs >= killedAtMs)).toEqual([]);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "restarts an agents process without redoing finished work, and runs a new run after",
    async () => {
      const { env, log } = await recovery.start();
      const restarted = ["node-01", "node-02", "node-03"];
      const fleetA = fleetFile([clusters("node-", 3, { env: "prod" })]);
      const a = await env.startAgents("a", fleetA);
      await env.startAgents(
        "b",
        fleetFile([clusters("node-", 3, { env: "prod" }, { startIndex: 4 })]),
      );
      await env.connected(6);
      await createStrategy(env, recovery.work, "all", [
        {
          name: "all",
          memberSelector: { byLabel: "env=prod" },
          maxConcurrency: 3,
        },
      ]);
      await startUpgrade(env, "first", "all");
      const first = await watchRun(
        env,
        "first",
        (run) => run.state === "Completed",
        {
          message: "the first run to complete",
        },
      );
      expect(namesIn(first, "Succeeded")).toHaveLength(6);
      for (const name of restarted) {
        expect((await clusterGet(env, name)).appliedGeneration).toBe(1);
      }

      // SIGKILL: no clean-up at all. The hub sees the streams end.
      a.kill("SIGKILL");
      await a.exited;
      await env.connected(3);
      const killedAtMs = Date.now();

      // Same name, same state dir: each agent's hello says it finished generation 1, so the hub
      // never sees it behind; had it lost its progress, hello would say 0 until it redid the
      // upgrade (checked on every poll from the first reconnection on).
      await env.startAgents("a", fleetA);
      await pollUntil(
        async () => {
          const { clusters: all } = await callUnary(env.admin, "listClusters", {
            pageSize: 100,
          });
          return all.filter(
            (c) =>
              restarted.includes(c.name) &&
              c.connection === "CONNECTION_STATE_CONNECTED",
          );
        },
        (back) => back.length === restarted.length,
        {
          check: (back) => {
            for (const c of back) {
              expect([c.name, c.appliedGeneration]).toEqual([
                c.name,
                c.intentGeneration,
              ]);
            }
          },
          intervalMs: 50,
          message: "the restarted agents to reconnect",
        },
      );
      // The finished run is untouched: nothing stored changed, no intent was issued again.
      const firstAfter = await env.run("first");
      expect(firstAfter.revision).toBe(first.revision);
      expect(membersOf(firstAfter)).toEqual(membersOf(first));
      expect(log.records.filter((r) => r.atMs >= killedAtMs)).toEqual([]);

      // A new run reaches the restarted agents (generation 2) and completes. Simulated clusters
      // keep no state of their own across a restart (only the agent's progress survives), so they
      // come back on their fleet file's 1.29.9 and 1.30.3 is an upgrade again; restarted agents
      // that had redone generation 1 would likely be on 1.30.3 already, Skipped AlreadyAtTarget.
      await startUpgrade(env, "second", "all");
      const second = await watchRun(
        env,
        "second",
        (run) => run.state === "Completed",
        {
          message: "the second run to complete",
        },
      );
      for (const name of restarted) {
        expect(membersOf(second).get(name)?.state, name).toBe("Succeeded");
        expect(log.of(name).map((r) => [r.generation, r.upgradeRun])).toEqual([
          [1, "first"],
          [2, "second"],
        ]);
        await waitFor(
          async () => (await clusterGet(env, name)).appliedGeneration === 2,
          {
            timeoutMs: 10_000,
            intervalMs: 200,
            message: `${name} to report generation 2 applied`,
          },
        );
      }
      expect(log.conflicts()).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
