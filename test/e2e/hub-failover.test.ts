/**
 * Several hub replicas on one NATS, end to end with real processes (docs/high-availability.md):
 * the replica that owns a staged run is SIGKILLed mid-run, or frozen with SIGSTOP past its lease
 * and let go again; another replica takes the run over and finishes it. The intent log hears
 * every intent write from the start, so a generation given two payloads, or a write by the
 * deposed owner after the takeover, would show.
 */
import { describe, expect, it } from "vitest";
import { callUnary } from "@flotilla/protocol";
import { startNatsServer, waitFor, type TestProcess } from "@flotilla/testkit";
import { startHubProcess } from "./hub-process.js";
import type { E2E } from "./fleet.js";
import { TEST_TIMEOUT_MS, useRecoveryEnv } from "./recovery-env.js";
import { namesIn, startRingRollout, watchRun } from "./recovery-helpers.js";

const recovery = useRecoveryEnv();
const REPLICAS = 2;

/** The JSON log lines of `proc` whose message is `msg`. */
function logged(proc: TestProcess, msg: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of proc.lines) {
    if (!line.startsWith("{")) continue;
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.msg === msg) out.push(parsed);
    } catch {
      // not a log line
    }
  }
  return out;
}

/** The replica that took run `name` over last, and how many takeovers of it each has logged. */
function ownerOf(env: E2E, name: string): { index: number; epoch: number } {
  let best = { index: -1, epoch: -1 };
  for (let i = 0; i < REPLICAS; i++) {
    for (const line of logged(env.hub(i), "took over the update run")) {
      const epoch = Number(line.epoch);
      if (line.run === name && epoch > best.epoch) best = { index: i, epoch };
    }
  }
  if (best.index < 0) throw new Error(`no replica took ${name} over`);
  return best;
}

/** Run `up` over 2 canaries and 8 prod clusters, stopped in prod with 3 members done. */
function startRollout(env: E2E): Promise<void> {
  return startRingRollout(
    env,
    recovery.work,
    [
      { name: "canary", count: 2, maxConcurrency: 1 },
      { name: "prod", count: 8, maxConcurrency: 2 },
    ],
    3,
  );
}

describe("hub replicas failing over", () => {
  it(
    "finishes the run on another replica after its owner is SIGKILLed, every generation with one payload",
    async () => {
      const { env, log } = await recovery.start({
        replicas: REPLICAS,
        leaseTtl: "3s",
        hubLogLevel: "info",
      });
      await startRollout(env);
      const owner = ownerOf(env, "up");
      const survivor = (owner.index + 1) % REPLICAS;
      env.useHub(survivor);

      // `flotilla hub status`, asked of either replica, shows both and who holds the run.
      const hubStatus = await env.cli("hub", "status", "-o", "json");
      expect(hubStatus.code, hubStatus.stderr).toBe(0);
      const replicas = (
        JSON.parse(hubStatus.stdout) as {
          replicas: { id: string; leases: string[]; sessions: number }[];
        }
      ).replicas;
      expect(replicas.map((r) => r.id)).toEqual(["hub-0", "hub-1"]);
      expect(replicas[owner.index]?.leases).toContain("run/up");
      expect(replicas[survivor]?.leases).not.toContain("run/up");
      expect(replicas.reduce((sum, r) => sum + r.sessions, 0)).toBe(10);

      env.hub(owner.index).kill("SIGKILL");
      expect((await env.hub(owner.index).exited).signal).toBe("SIGKILL");

      // While the run is still going, the survivor answers that it drives it (`run status`).
      const driven = await waitFor(
        async () => {
          const answer = await callUnary(env.admin, "getUpdateRun", {
            name: "up",
          });
          return answer.ownerReplica === `hub-${String(survivor)}`
            ? answer
            : undefined;
        },
        {
          timeoutMs: 30_000,
          intervalMs: 100,
          message: "the survivor to drive the run",
        },
      );
      expect(driven.run?.state).not.toBe("Completed");

      const after = await watchRun(
        env,
        "up",
        (run) => run.state === "Completed",
        {
          message: "the run to complete on the surviving replica",
        },
      );
      expect(namesIn(after, "Succeeded")).toHaveLength(10);
      const taken = ownerOf(env, "up");
      expect(taken.index).toBe(survivor);
      expect(taken.epoch).toBeGreaterThan(owner.epoch);
      expect(log.conflicts()).toEqual([]);
      expect(log.invalid).toEqual([]);

      // The takeover is in the audit log, and `run status` names the replica driving the run.
      const audit = await env.cli(
        "audit",
        "list",
        "--method",
        "/flotilla.hub/TakeOverUpdateRun",
        "-o",
        "json",
      );
      expect(audit.code, audit.stderr).toBe(0);
      const events = (
        JSON.parse(audit.stdout) as {
          events: { actor: string; targetName: string; message: string }[];
        }
      ).events;
      expect(events).toEqual([
        expect.objectContaining({
          actor: `hub/hub-${String(survivor)}`,
          targetName: "up",
          message: expect.stringContaining(
            `from replica hub-${String(owner.index)} with lease epoch ${String(taken.epoch)}`,
          ) as unknown,
        }),
      ]);
    },
    TEST_TIMEOUT_MS * 2,
  );

  it(
    "resumes the run from the store when every replica is killed and started again at once",
    async () => {
      const { env, log } = await recovery.start({
        replicas: REPLICAS,
        leaseTtl: "3s",
        hubLogLevel: "info",
      });
      await startRollout(env);
      const before = ownerOf(env, "up");
      for (let i = 0; i < REPLICAS; i++) env.hub(i).kill("SIGKILL");
      for (let i = 0; i < REPLICAS; i++) await env.hub(i).exited;
      await Promise.all(
        Array.from({ length: REPLICAS }, (_, i) => env.startHub(i)),
      );
      env.useHub(0);
      const after = await watchRun(
        env,
        "up",
        (run) => run.state === "Completed",
        {
          message: "the run to complete after every replica restarted",
        },
      );
      expect(namesIn(after, "Succeeded")).toHaveLength(10);
      expect(ownerOf(env, "up").epoch).toBeGreaterThan(before.epoch);
      expect(log.conflicts()).toEqual([]);
    },
    TEST_TIMEOUT_MS * 2,
  );

  it(
    "an owner frozen past its lease writes nothing once it wakes: the other replica took over and finished",
    async () => {
      const { env, log } = await recovery.start({
        replicas: REPLICAS,
        leaseTtl: "3s",
        hubLogLevel: "info",
      });
      await startRollout(env);
      const owner = ownerOf(env, "up");
      const other = (owner.index + 1) % REPLICAS;
      env.useHub(other);
      const frozenProc = env.hub(owner.index);
      recovery.freeze(frozenProc.pid ?? 0);
      // The other replica takes the run over once the frozen one's lease has expired.
      await watchRun(env, "up", () => ownerOf(env, "up").index === other, {
        message: "the other replica to take the run over",
      });
      const takeover = ownerOf(env, "up");
      const frozenAtWrites = log.records.length;
      await watchRun(env, "up", () => log.records.length > frozenAtWrites, {
        message: "the new owner to publish intents",
      });
      recovery.thaw(frozenProc.pid ?? 0);
      // The woken replica finds out at its next lease round, without writing for the run.
      await watchRun(
        env,
        "up",
        () =>
          logged(frozenProc, "lease lost: no longer the owner").some(
            (l) => l.unit === "run/up",
          ),
        { message: "the woken replica to see it lost the lease" },
      );
      const after = await watchRun(
        env,
        "up",
        (run) => run.state === "Completed",
        {
          message: "the run to complete",
        },
      );
      expect(namesIn(after, "Succeeded")).toHaveLength(10);
      // The woken replica may have been handed the run back since (it is the preferred owner),
      // but only with a lease taken after the other replica's.
      expect(ownerOf(env, "up").epoch).toBeGreaterThanOrEqual(takeover.epoch);
      expect(log.conflicts()).toEqual([]);
      // Generations only go up for every cluster, in the order the writes were stored.
      for (const name of new Set(log.records.map((r) => r.cluster))) {
        const generations = log.of(name).map((r) => r.generation);
        expect(generations).toEqual([...generations].sort((a, b) => a - b));
      }
    },
    TEST_TIMEOUT_MS * 2,
  );
});

describe("replicas started with settings that differ", () => {
  it("the later one takes no leases and says which setting differs, until the first is gone", async () => {
    await using nats = await startNatsServer();
    const first = startHubProcess({
      nats: nats.url,
      args: ["--replica-id", "hub-0", "--lease-ttl", "3s"],
      logLevel: "info",
    });
    await first.waitForLine(/serving gRPC/);
    const second = startHubProcess({
      nats: nats.url,
      args: ["--replica-id", "hub-1", "--lease-ttl", "5s"],
      logLevel: "info",
    });
    try {
      await second.waitForLine(/not taking leases/, 20_000);
      const line = second.lines.find((l) => l.includes("not taking leases"));
      expect(line).toContain("replica hub-0");
      expect(line).toContain("leaseTtlMs=3000 (here 5000)");
      // The first keeps every lease; once it stops, the second takes them.
      await first.stop();
      await second.waitForLine(/replicas are compatible again/, 20_000);
      await second.waitForLine(/lease taken: now the owner/, 20_000);
    } finally {
      await second.stop();
      await first.stop();
    }
  }, 60_000);
});
