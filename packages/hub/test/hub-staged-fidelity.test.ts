/**
 * The engine's staged-run decisions as a live hub applies them (docs/semantics.md#staged-runs), over real gRPC
 * with scripted agents: an empty stage is skipped and the run goes on; a group over its budget fails
 * its stage and the run; reports that reach the hub in one batch are all counted before a slot is
 * refilled.
 */
import { describe, expect, it } from "vitest";
import { callUnary } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import pino from "pino";
import { RunLog } from "../src/runs/run-log.js";
import { createHeldStore, type HeldStore } from "./held-store.js";
import type { ScriptedAgent } from "./scripted-agent.js";
import { reportUpgrade, stagedFacts } from "./staged-fleet.js";
import { useHubWithAgents } from "./support/hub-with-agents.js";

let held: HeldStore;
const fixture = useHubWithAgents({
  wrapStore: (store) => (held = createHeldStore(store)),
});

/** Creates strategy and run `name` through AdminService; returns the creation's warnings. */
async function createRun(
  name: string,
  strategy: unknown,
): Promise<{ code: string; message: string }[]> {
  await callUnary(fixture.hub.admin, "createUpdateStrategy", {
    name,
    strategyJson: JSON.stringify(strategy),
    reason: "",
  });
  const created = await callUnary(fixture.hub.admin, "createUpdateRun", {
    name,
    strategyName: name,
    payload: {
      upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: "1.30.0" },
    },
    reason: "test",
  });
  return created.warnings.map((w) => ({ code: w.code, message: w.message }));
}

async function startRun(name: string): Promise<void> {
  await callUnary(fixture.hub.admin, "startUpdateRun", {
    name,
    reason: "test",
  });
}

const hasUpgrade = async (cluster: string): Promise<boolean> =>
  (await fixture.hub.hub.intents.current(cluster)).intent.upgrade !== undefined;

describe("hub: empty scopes", () => {
  it("runs s1, skips the empty s2 (NoMembers) and completes; creation warns EmptyStage", async () => {
    const a1 = await fixture.register("a1", stagedFacts({ group: "g1" }));
    const warnings = await createRun("empty-s2", {
      stages: [
        {
          name: "s1",
          groups: [{ name: "g1", memberSelector: { byLabel: "group=g1" } }],
        },
        {
          name: "s2",
          afterGates: [{ type: "Approval" }],
          groups: [{ name: "g2", memberSelector: { byLabel: "group=g2" } }],
        },
      ],
    });
    expect(warnings.map((w) => w.code)).toEqual(["EmptyStage"]);
    await startRun("empty-s2");
    await waitFor(() => hasUpgrade("a1"), { message: "a1's upgrade intent" });
    await reportUpgrade(fixture.hub, a1, "a1", 1, "STATUS_PHASE_READY");
    await waitFor(
      () => fixture.hub.hub.runs.get("empty-s2").run.state === "Completed",
      { message: "the run to complete" },
    );
    const status = await callUnary(fixture.hub.admin, "getUpdateRun", {
      name: "empty-s2",
    });
    const [s1, s2] = status.run?.stages ?? [];
    expect(s1?.state).toBe("SCOPE_STATE_COMPLETED");
    expect(s2).toMatchObject({
      state: "SCOPE_STATE_SKIPPED",
      reason: "NoMembers",
      afterGates: [expect.objectContaining({ state: "GATE_STATE_SKIPPED" })],
    });
    expect(s2?.groups[0]).toMatchObject({
      state: "SCOPE_STATE_SKIPPED",
      reason: "NoMembers",
    });
  });
});

describe("hub: failure propagates up", () => {
  it("a group over its budget fails its stage and the run, though the stage's budget allows more", async () => {
    const a1 = await fixture.register("a1", stagedFacts({ group: "g" }));
    await fixture.register("a2", stagedFacts({ group: "g" }));
    await createRun("group-over", {
      stages: [
        {
          name: "s",
          maxAllowedFailures: "5",
          groups: [
            {
              name: "g",
              maxAllowedFailures: "0",
              memberSelector: { byLabel: "group=g" },
            },
          ],
        },
      ],
    });
    await startRun("group-over");
    await waitFor(() => hasUpgrade("a1"), { message: "a1's upgrade intent" });
    await reportUpgrade(fixture.hub, a1, "a1", 1, "STATUS_PHASE_FAILED");
    await waitFor(
      () => fixture.hub.hub.runs.get("group-over").run.state === "Failed",
      {
        message: "the run to fail",
      },
    );
    const status = await callUnary(fixture.hub.admin, "getUpdateRun", {
      name: "group-over",
    });
    const s = status.run?.stages[0];
    expect([s?.state, s?.groups[0]?.state, status.run?.failureCount]).toEqual([
      "SCOPE_STATE_FAILED",
      "SCOPE_STATE_FAILED",
      1,
    ]);
    expect(s?.message).toBe(
      'group "g" failed: failureCount 1 exceeds maxAllowedFailures 0',
    );
    expect(await hasUpgrade("a2")).toBe(false);
  });
});

describe("hub: simultaneous outcomes", () => {
  it("counts three failures that arrive in one batch before refilling: failureCount 3, a4 never starts", async () => {
    const fleet = new Map<string, ScriptedAgent>();
    for (const name of ["a1", "a2", "a3", "a4"])
      fleet.set(
        name,
        await fixture.register(name, stagedFacts({ group: "g" })),
      );
    const b1 = await fixture.register("b1", stagedFacts({ group: "h" }));
    await createRun("together", {
      stages: [
        {
          name: "s",
          groups: [
            {
              name: "g",
              maxConcurrency: "3",
              maxAllowedFailures: "1",
              memberSelector: { byLabel: "group=g" },
            },
            { name: "h", memberSelector: { byLabel: "group=h" } },
          ],
        },
      ],
    });
    await startRun("together");
    for (const name of ["a1", "a2", "a3", "b1"])
      await waitFor(() => hasUpgrade(name), { message: `${name}'s intent` });

    // b1's success is a batch of its own; while the hub stores it, a1-a3 report failure, so their
    // three reports wait in the mailbox and make up the next batch together.
    held.hold("runs");
    await reportUpgrade(fixture.hub, b1, "b1", 1, "STATUS_PHASE_READY");
    await waitFor(() => held.waiting > 0, {
      message: "b1's batch being stored",
    });
    let sequence = 10;
    for (const name of ["a1", "a2", "a3"]) {
      const agent = fleet.get(name);
      if (agent === undefined) throw new Error(name);
      await reportUpgrade(
        fixture.hub,
        agent,
        name,
        sequence++,
        "STATUS_PHASE_FAILED",
      );
    }
    held.release();

    const group = () =>
      fixture.hub.hub.runs.get("together").run.stages[0]?.groups[0];
    await waitFor(() => group()?.failureCount === 3, {
      message: "the three failures to be counted",
    });
    await fixture.hub.hub.runs.idle();
    const { run } = fixture.hub.hub.runs.get("together");
    expect(run).toMatchObject({ state: "Failed", failureCount: 3 });
    expect(group()?.members.map((m) => [m.name, m.state])).toEqual([
      ["a1", "Failed"],
      ["a2", "Failed"],
      ["a3", "Failed"],
      ["a4", "NotStarted"],
    ]);
    expect(await hasUpgrade("a4")).toBe(false);

    // The batch is journaled as it was applied: the run read back from the store is the same.
    const stored = await RunLog.loadAll(
      fixture.hub.store,
      pino({ level: "silent" }),
    );
    expect(stored.find((r) => r.run.name === "together")?.run).toEqual(run);
  });
});
