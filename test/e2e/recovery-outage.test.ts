/**
 * Recovery from outages, end to end with real processes: nats-server down and restarted mid-run,
 * and one cluster's agent cut off (SIGSTOP: silent, its connections left open) before its stage,
 * which docs/semantics.md#offline-clusters says must wait Pending (reason Unreachable) while the
 * others go on, and run once it is back. (Crashes: recovery.test.ts.)
 */
import { describe, expect, it } from "vitest";
import type { RunView } from "@flotilla/protocol";
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
  ok,
  startUpgrade,
  watchRun,
} from "./recovery-helpers.js";

const recovery = useRecoveryEnv();

describe("recovery from outages", () => {
  it(
    "finishes a run across a nats-server restart",
    async () => {
      const { env, log } = await recovery.start();
      await env.startAgents(
        "fleet",
        fleetFile([clusters("node-", 8, { env: "prod" }, slowUpgrades)]),
      );
      await env.connected(8);
      await createStrategy(env, recovery.work, "pairs", [
        {
          name: "all",
          memberSelector: { byLabel: "env=prod" },
          maxConcurrency: 2,
        },
      ]);
      await startUpgrade(env, "up", "pairs");
      const before = await watchRun(
        env,
        "up",
        (run) =>
          namesIn(run, "Succeeded").length >= 2 &&
          namesIn(run, "Running").length >= 1,
        { message: "2 members Succeeded and 1 Running" },
      );
      const succeededBefore = namesIn(before, "Succeeded");

      // NATS goes away while members are in flight. The hub gives its leases up at once (it
      // cannot fence its writes without NATS) and NATS stays away for two of its lease rounds,
      // longer than an upgrade takes, so agents report while nobody owns the run: once NATS is
      // back the hub takes the run back and asks for those reports again, none may be lost.
      await env.nats.halt();
      await env.hub().waitForLine(/lease lost: no longer the owner/, 20_000);
      await waitFor(
        () =>
          env.hub().lines.filter((l) => l.includes("lease round failed"))
            .length >= 2,
        { timeoutMs: 20_000, message: "two lease rounds without NATS" },
      );
      await env.nats.restart();

      const after = await watchRun(
        env,
        "up",
        (run) => run.state === "Completed",
        {
          message: "the run to complete after the NATS restart",
          check: (run) => {
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
      expect(members).toHaveLength(8);
      expect(members.filter((m) => m.state !== "Succeeded")).toEqual([]);
      // Every agent is connected again, and each got its upgrade in one generation.
      await env.connected(8);
      expect(log.invalid).toEqual([]);
      for (const m of members) {
        expect(
          log.of(m.name).map((r) => [r.generation, r.upgradeRun]),
          m.name,
        ).toEqual([[1, "up"]]);
      }
      expect(log.conflicts()).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "holds an unreachable member Pending while others proceed, then runs it when it returns",
    async () => {
      const { env, log } = await recovery.start();
      await env.startAgents(
        "fleet",
        fleetFile([
          clusters("canary-", 1, { env: "canary" }),
          clusters("prod-", 3, { env: "prod" }, { startIndex: 2 }),
        ]),
      );
      // prod-01 comes first in its group's order, so a group that did not hold it would start it.
      const lonely = await env.startAgents(
        "lonely",
        fleetFile([clusters("prod-", 1, { env: "prod" })]),
      );
      await env.connected(5);
      await createStrategy(env, recovery.work, "gated", [
        {
          name: "canary",
          memberSelector: { byLabel: "env=canary" },
          afterGates: [{ type: "Approval", displayName: "canary ok" }],
        },
        {
          name: "prod",
          memberSelector: { byLabel: "env=prod" },
          maxConcurrency: 1,
        },
      ]);
      await startUpgrade(env, "up", "gated");
      const gate = await waitFor(
        async () =>
          (await env.run("up")).stages[0]?.afterGates.find(
            (g) => g.state === "Pending",
          ),
        {
          timeoutMs: 30_000,
          intervalMs: 100,
          message: "the canary gate to be Pending",
        },
      );

      // Cut prod-01's agent off before its stage starts: heartbeats stop, connections stay open.
      recovery.freeze(lonely.pid);
      await waitFor(
        async () =>
          (await clusterGet(env, "prod-01")).connection ===
          "CONNECTION_STATE_UNREACHABLE",
        {
          timeoutMs: 20_000,
          intervalMs: 200,
          message: "prod-01 to be Unreachable",
        },
      );
      await ok(env, "run", "approve", "up", gate.id);

      const neverRunning = (run: RunView): void => {
        expect(membersOf(run).get("prod-01")?.state).not.toBe("Running");
        expect(run.state).not.toBe("Completed");
      };
      const held = await watchRun(
        env,
        "up",
        (run) => {
          const m = membersOf(run);
          return (
            m.get("prod-01")?.state === "Pending" &&
            ["prod-02", "prod-03", "prod-04"].every(
              (n) => m.get(n)?.state === "Succeeded",
            )
          );
        },
        {
          check: neverRunning,
          message: "prod-01 Pending and the rest of prod Succeeded",
        },
      );
      expect(membersOf(held).get("prod-01")?.reason).toBe("Unreachable");
      expect(log.of("prod-01").filter((r) => r.upgradeRun === "up")).toEqual(
        [],
      );

      // Back: reachable again, it gets the upgrade, and the run completes.
      const resumedAtMs = Date.now();
      recovery.thaw(lonely.pid);
      await waitFor(
        async () =>
          (await clusterGet(env, "prod-01")).connection ===
          "CONNECTION_STATE_CONNECTED",
        {
          timeoutMs: 20_000,
          intervalMs: 200,
          message: "prod-01 to be Connected again",
        },
      );
      const done = await watchRun(
        env,
        "up",
        (run) => run.state === "Completed",
        {
          message: "the run to complete",
        },
      );
      expect(
        [...membersOf(done).values()].filter((m) => m.state !== "Succeeded"),
      ).toEqual([]);
      expect(
        membersOf(done).get("prod-01")?.startedAtMs,
      ).toBeGreaterThanOrEqual(resumedAtMs);
      expect((await clusterGet(env, "prod-01")).facts.kubernetesVersion).toBe(
        "1.30.3",
      );
      expect(log.conflicts()).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
