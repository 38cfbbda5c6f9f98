/**
 * Stopping is bounded whatever NATS does: the real hub, with agents connected and an admin watch
 * open, exits 0 soon after SIGTERM when its nats-server was killed (nothing will ever confirm a
 * drain) and when it is frozen (connected, never answering: the `--shutdown-timeout` deadline
 * closes what is left). The agents process exits 0 too once its NATS is gone.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startProcess, waitFor, type TestProcess } from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";
import { exitWithin } from "./hub-process.js";

const SHUTDOWN_TIMEOUT_MS = 3_000;
/** Process start-up on a busy 2-core machine, and the forced close after the deadline. */
const MARGIN_MS = 5_000;

let env: E2E | undefined;
let frozenNats: number | undefined;
const watchers: TestProcess[] = [];

afterEach(async () => {
  if (frozenNats !== undefined) process.kill(frozenNats, "SIGCONT");
  frozenNats = undefined;
  await Promise.all(watchers.splice(0).map((w) => w.stop()));
  await env?.stop();
  env = undefined;
});

/** A fleet of 3 connected agents and `flotilla audit watch` following the hub's audit log. */
async function fleetWithWatch(): Promise<{ env: E2E; watch: TestProcess }> {
  const e2e = await startE2E({
    hubArgs: ["--shutdown-timeout", `${String(SHUTDOWN_TIMEOUT_MS)}ms`],
  });
  env = e2e;
  await e2e.startAgents("fleet", fleetFile([clusters("stop-", 3, {})]));
  await e2e.connected(3);
  const watch = startProcess({
    name: "audit watch",
    args: ["packages/cli/dist/main.js", "audit", "watch"],
    env: {
      FLOTILLA_HUB: e2e.hubAddress,
      FLOTILLA_INSECURE_PLAINTEXT: "1",
      FLOTILLA_ACTOR: "e2e",
    },
  });
  watchers.push(watch);
  // The watch is open once it prints an event made after it started: label until one shows.
  let labelled = 0;
  await waitFor(
    async () => {
      const result = await e2e.cli(
        "cluster",
        "label",
        "stop-01",
        `watched=${String(++labelled)}`,
      );
      if (result.code !== 0) throw new Error(result.stderr);
      return watch.lines.some((l) => l.includes("stop-01"));
    },
    { timeoutMs: 30_000, intervalMs: 300, message: "the audit watch to print" },
  );
  return { env: e2e, watch };
}

function pidOf(e2e: E2E): number {
  const pid = e2e.nats.pid;
  if (pid === undefined) throw new Error("nats-server is not running");
  return pid;
}

describe("stopping without NATS", () => {
  it("the hub exits 0 within its deadline after nats-server was killed", async () => {
    const { env: e2e, watch } = await fleetWithWatch();
    process.kill(pidOf(e2e), "SIGKILL");
    const hub = e2e.hub();
    await hub.waitForLine(/NATS connection lost/);
    hub.kill("SIGTERM");
    const exit = await exitWithin(hub, SHUTDOWN_TIMEOUT_MS + MARGIN_MS);
    expect(exit.code, hub.output()).toBe(0);
    // A clean stop: the watch was ended and the connection closed, nothing left to the deadline.
    expect(hub.output()).not.toMatch(/stop took longer/);
    expect((await exitWithin(watch, MARGIN_MS)).code, watch.output()).toBe(3);
  });

  it("the hub exits 0 after its deadline, saying so, when nats-server is frozen", async () => {
    const { env: e2e } = await fleetWithWatch();
    frozenNats = pidOf(e2e);
    process.kill(frozenNats, "SIGSTOP");
    const hub = e2e.hub();
    hub.kill("SIGTERM");
    const exit = await exitWithin(hub, SHUTDOWN_TIMEOUT_MS + MARGIN_MS);
    expect(exit.code, hub.output()).toBe(0);
    await hub.waitForLine(/stop took longer than --shutdown-timeout/, 1_000);
  });

  it("the agents process exits 0 after nats-server was killed", async () => {
    const e2e = await startE2E();
    env = e2e;
    const agents = await e2e.startAgents(
      "fleet",
      fleetFile([clusters("gone-", 3, {})]),
    );
    await e2e.connected(3);
    process.kill(pidOf(e2e), "SIGKILL");
    agents.kill("SIGTERM");
    const exit = await exitWithin(agents, 10_000 + MARGIN_MS);
    expect(exit.code, agents.output()).toBe(0);
  });
});
