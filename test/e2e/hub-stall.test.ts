/**
 * A hub that stalls (here frozen with SIGSTOP for longer than the heartbeat timeout, as a long GC
 * pause or a suspended VM would) must not mark its whole fleet Unreachable when it resumes: the
 * agents kept sending heartbeats, which sit unread in its sockets. Only an agent that really went
 * away (killed right after the hub resumed) becomes Unreachable, within its usual timeout.
 */
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

const HEARTBEAT_MS = 500;
/** --missed-heartbeats defaults to 3: Unreachable after 1.5 s of silence. */
const UNREACHABLE_AFTER_MS = 3 * HEARTBEAT_MS;
/** How long the hub is frozen: well past the timeout. */
const STALL_MS = 3 * UNREACHABLE_AFTER_MS;

let env: E2E | undefined;
let frozen: number | undefined;

afterEach(async () => {
  if (frozen !== undefined) process.kill(frozen, "SIGCONT");
  frozen = undefined;
  await env?.stop();
  env = undefined;
});

/** The clusters named in the hub's "agents unreachable" log lines so far. */
function markedUnreachable(lines: readonly string[]): string[] {
  return lines
    .filter((l) => l.includes('"agents unreachable"'))
    .flatMap((l) => (JSON.parse(l) as { clusters: string[] }).clusters);
}

describe("a hub that stalls", () => {
  it("marks no live agent Unreachable when it resumes, and still catches one that died", async () => {
    const e2e = await startE2E({
      heartbeatMs: HEARTBEAT_MS,
      hubLogLevel: "info",
    });
    env = e2e;
    await e2e.startAgents("steady", fleetFile([clusters("steady-", 4, {})]));
    await e2e.startAgents("victim", fleetFile([clusters("victim-", 1, {})]));
    await e2e.connected(5);
    const hub = e2e.hub();
    expect(markedUnreachable(hub.lines)).toEqual([]);

    frozen = hub.pid;
    process.kill(hub.pid, "SIGSTOP");
    // The stall itself: the one thing here that has to be a length of time.
    await delay(STALL_MS);
    process.kill(hub.pid, "SIGCONT");
    frozen = undefined;

    // The control: an agent that goes away for good after the stall is caught. By the time
    // it is, the hub has checked heartbeats many times since it resumed.
    e2e.agents("victim").kill("SIGKILL");
    await hub.waitForLine(/^(?=.*"agents unreachable")(?=.*victim-01)/, 15_000);
    expect(markedUnreachable(hub.lines)).toEqual(["victim-01"]);
    await e2e.connected(4);
  }, 60_000);
});
