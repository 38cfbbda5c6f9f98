/**
 * Run handling as `az fleet` offers it, over real gRPC with scripted agents: the gates of every run
 * listed by state and by run, and DeleteUpdateRun refused while the run is in flight (with its
 * state), accepted once it is Stopped or NotStarted: the run is gone from the store and from its
 * watchers, the call is audited, members' intents stay as the run left them, and the name can be
 * used again.
 */
import { describe, expect, it } from "vitest";
import { callUnary } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { RUN_LOG } from "../src/runs/run-log.js";
import type { RunUpdate } from "../src/runs/run-manager.js";
import { reportUpgrade, stagedFacts } from "./staged-fleet.js";
import { useHubWithAgents } from "./support/hub-with-agents.js";

const STRATEGY = JSON.stringify({
  stages: [
    {
      name: "canary",
      memberSelector: { byLabel: "ring=canary" },
      afterGates: [{ type: "Approval", displayName: "ok canary" }],
    },
    {
      name: "prod",
      memberSelector: { byLabel: "ring=prod" },
      beforeGates: [{ type: "Approval", displayName: "ok prod" }],
    },
  ],
});

const fixture = useHubWithAgents();

async function createRun(name: string): Promise<void> {
  await callUnary(fixture.hub.admin, "createUpdateRun", {
    name,
    strategyName: "rings",
    payload: {
      upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: "1.30.0" },
    },
    reason: "",
  });
}

function gateRows(
  gates: readonly { run: string; gate: { id: string; state: string } | null }[],
): string[] {
  return gates.map(
    (g) => `${g.run} ${g.gate?.id ?? ""} ${g.gate?.state ?? ""}`,
  );
}

describe("hub: gate list and run delete", () => {
  it("lists gates across runs by state and run, and deletes a run only when it is not in flight", async () => {
    const canary = await fixture.register(
      "c-1",
      stagedFacts({ ring: "canary" }),
    );
    await fixture.register("p-1", stagedFacts({ ring: "prod" }));
    const admin = fixture.hub.admin;
    await callUnary(admin, "createUpdateStrategy", {
      name: "rings",
      strategyJson: STRATEGY,
      reason: "",
    });
    await createRun("r1");
    await createRun("r2");

    const all = await callUnary(admin, "listGates", {
      states: [],
      run: "",
    });
    expect(gateRows(all.gates)).toEqual([
      "r1 stage:canary:after GATE_STATE_NOT_STARTED",
      "r1 stage:prod:before GATE_STATE_NOT_STARTED",
      "r2 stage:canary:after GATE_STATE_NOT_STARTED",
      "r2 stage:prod:before GATE_STATE_NOT_STARTED",
    ]);
    expect(all.gates[0]?.gate?.displayName).toBe("ok canary");
    expect(all.gates[0]?.gate?.type).toBe("GATE_TYPE_APPROVAL");

    await callUnary(admin, "startUpdateRun", { name: "r1", reason: "" });
    // In flight: refused with the run's state, nothing changes.
    const revision = fixture.hub.hub.runs.get("r1").revision;
    await expect(
      callUnary(admin, "deleteUpdateRun", { name: "r1", reason: "oops" }),
    ).rejects.toMatchObject({
      code: "failed_precondition",
      message: expect.stringContaining("is Running"),
    });
    expect(fixture.hub.hub.runs.get("r1").revision).toBe(revision);

    await reportUpgrade(fixture.hub, canary, "c-1", 1, "STATUS_PHASE_READY");
    await waitFor(
      () =>
        fixture.hub.hub.runs.get("r1").run.stages[0]?.afterGates[0]?.state ===
        "Pending",
    );
    const pending = await callUnary(admin, "listGates", {
      states: ["GATE_STATE_PENDING"],
      run: "",
    });
    expect(gateRows(pending.gates)).toEqual([
      "r1 stage:canary:after GATE_STATE_PENDING",
    ]);
    expect(pending.gates[0]?.gate?.reachedAtMs).toBeGreaterThan(0);
    // Waiting at the gate is still in flight.
    expect(fixture.hub.hub.runs.get("r1").run.state).toBe("Pending");
    await expect(
      callUnary(admin, "deleteUpdateRun", { name: "r1", reason: "" }),
    ).rejects.toMatchObject({
      code: "failed_precondition",
      message: expect.stringContaining("is Pending"),
    });
    const ofR2 = await callUnary(admin, "listGates", { states: [], run: "r2" });
    expect(ofR2.gates.map((g) => g.run)).toEqual(["r2", "r2"]);
    await expect(
      callUnary(admin, "listGates", { states: [], run: "nope" }),
    ).rejects.toMatchObject({ code: "not_found" });
    await expect(
      callUnary(admin, "listGates", {
        states: ["GATE_STATE_UNSPECIFIED"],
        run: "",
      }),
    ).rejects.toMatchObject({ code: "invalid_argument" });

    // Stopped (nothing in flight while the gate waits): deleted, with its records and watchers.
    await callUnary(admin, "stopUpdateRun", { name: "r1", reason: "" });
    await waitFor(() => fixture.hub.hub.runs.get("r1").run.state === "Stopped");
    const intentBefore = (await fixture.hub.hub.intents.current("c-1")).intent;
    const heard: RunUpdate[] = [];
    fixture.hub.hub.runs.watch("r1", (u) => heard.push(u));
    const deleted = await callUnary(admin, "deleteUpdateRun", {
      name: "r1",
      reason: "abandoned",
    });
    expect(deleted.state).toBe("RUN_STATE_STOPPED");
    expect(heard.at(-1)?.deleted).toBe(true);
    await expect(
      callUnary(admin, "getUpdateRun", { name: "r1" }),
    ).rejects.toMatchObject({ code: "not_found" });
    expect(await fixture.hub.store.list(RUN_LOG, { prefix: "r1" })).toEqual([]);
    expect(fixture.hub.hub.runs.list().map((r) => r.run.name)).toEqual(["r2"]);
    // The members' intents stay as the run left them (a finished run changes none).
    const intentAfter = (await fixture.hub.hub.intents.current("c-1")).intent;
    expect(intentAfter.generation).toBe(intentBefore.generation);
    await expect(
      callUnary(admin, "deleteUpdateRun", { name: "r1", reason: "" }),
    ).rejects.toMatchObject({ code: "not_found" });

    // NotStarted: deleted too.
    const notStarted = await callUnary(admin, "deleteUpdateRun", {
      name: "r2",
      reason: "",
    });
    expect(notStarted.state).toBe("RUN_STATE_NOT_STARTED");

    // The name is free again, for a run that starts from scratch.
    await createRun("r1");
    const again = fixture.hub.hub.runs.get("r1");
    expect(again.run.state).toBe("NotStarted");
    expect(again.revision).toBe(1);

    const audit = await fixture.hub.audit.list({
      method: "/flotilla.v1.AdminService/DeleteUpdateRun",
    });
    expect(
      audit.events.map((e) => [e.targetName, e.reason, e.outcome]),
    ).toEqual([
      ["r1", "oops", "Failed"],
      ["r1", "", "Failed"],
      ["r1", "abandoned", "Succeeded"],
      ["r1", "", "Failed"],
      ["r2", "", "Succeeded"],
    ]);
  });
});
