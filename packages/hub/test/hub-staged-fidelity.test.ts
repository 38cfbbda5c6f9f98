/**
 * The engine's staged-run decisions as a live hub applies them (docs/engine.md), over real gRPC
 * with scripted agents: an empty stage is skipped and the run goes on; a group over its budget fails
 * its stage and the run.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { callUnary } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { startTestHub, type TestHub } from "./hub-harness.js";
import type { ScriptedAgent } from "./scripted-agent.js";
import { registerAgent, reportUpgrade } from "./staged-fleet.js";

let hub: TestHub;
const agents: ScriptedAgent[] = [];

beforeEach(async () => {
  hub = await startTestHub();
});
afterEach(async () => {
  for (const a of agents.splice(0)) a.close();
  await hub.stop();
});

/** Creates strategy and run `name` through AdminService; returns the creation's warnings. */
async function createRun(
  name: string,
  strategy: unknown,
): Promise<{ code: string; message: string }[]> {
  await callUnary(hub.admin, "createUpdateStrategy", {
    name,
    strategyJson: JSON.stringify(strategy),
    reason: "",
  });
  const created = await callUnary(hub.admin, "createUpdateRun", {
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
  await callUnary(hub.admin, "startUpdateRun", { name, reason: "test" });
}

const hasUpgrade = async (cluster: string): Promise<boolean> =>
  (await hub.hub.intents.current(cluster)).intent.upgrade !== undefined;

describe("hub: empty scopes", () => {
  it("runs s1, skips the empty s2 (NoMembers) and completes; creation warns EmptyStage", async () => {
    const a1 = await registerAgent(hub, "a1", { group: "g1" }, agents);
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
    await reportUpgrade(hub, a1, "a1", 1, "STATUS_PHASE_READY");
    await waitFor(
      () => hub.hub.runs.get("empty-s2").run.state === "Completed",
      { message: "the run to complete" },
    );
    const status = await callUnary(hub.admin, "getUpdateRun", {
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
    const a1 = await registerAgent(hub, "a1", { group: "g" }, agents);
    await registerAgent(hub, "a2", { group: "g" }, agents);
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
    await reportUpgrade(hub, a1, "a1", 1, "STATUS_PHASE_FAILED");
    await waitFor(() => hub.hub.runs.get("group-over").run.state === "Failed", {
      message: "the run to fail",
    });
    const status = await callUnary(hub.admin, "getUpdateRun", {
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
