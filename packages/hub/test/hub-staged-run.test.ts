/**
 * The hub end to end in one process, over real gRPC: scripted agents register, a staged run is
 * created and started through AdminService, the hub publishes upgrade intents, the agents report
 * against the generation they were given, and the run completes. Also: revision-correct
 * readiness (a Ready for an older generation does not count), refusals that leave other agents
 * alone, and bad admin input.
 */
import { describe, expect, it } from "vitest";
import { callUnary } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { status as grpcStatus } from "@grpc/grpc-js";
import { TEST_PASS_INTERVAL_MS } from "./hub-harness.js";
import type { ScriptedAgent } from "./scripted-agent.js";
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
      maxConcurrency: 2,
    },
  ],
});

const fixture = useHubWithAgents();

function register(name: string, ring: string): Promise<ScriptedAgent> {
  return fixture.register(name, stagedFacts({ ring }));
}

function reportReady(
  agent: ScriptedAgent,
  cluster: string,
  sequence: number,
): Promise<unknown> {
  return reportUpgrade(
    fixture.hub,
    agent,
    cluster,
    sequence,
    "STATUS_PHASE_READY",
  );
}

/**
 * Lets `ms` of silence pass on the hub's clock with heartbeat checks on time, one per pass
 * interval, as the hub's own timer makes them. (One jump of the clock with a single check would
 * look like a stalled hub whenever the real timer had checked before, and stalls do not count as
 * silence: heartbeat-stalls.ts.)
 */
function staySilent(ms: number): void {
  for (let passed = 0; passed < ms; passed += TEST_PASS_INTERVAL_MS) {
    fixture.hub.clock.advance(TEST_PASS_INTERVAL_MS);
    fixture.hub.hub.registry.checkHeartbeats();
  }
}

describe("hub: staged run over gRPC with scripted agents", () => {
  it("runs canary then prod with the gate and the concurrency limit, counting only current generations", async () => {
    const fleet = new Map<string, ScriptedAgent>();
    for (const [name, ring] of [
      ["c-1", "canary"],
      ["p-1", "prod"],
      ["p-2", "prod"],
      ["p-3", "prod"],
    ] as const) {
      fleet.set(name, await register(name, ring));
    }
    // The canary already holds an intent (a bundle release): generation 1.
    await fixture.hub.hub.intents.change("c-1", [
      {
        type: "SetBundle",
        bundle: "web",
        revision: "r1",
        digest: `sha256:${"a".repeat(64)}`,
      },
    ]);
    const admin = fixture.hub.admin;
    await callUnary(admin, "createUpdateStrategy", {
      name: "rings",
      strategyJson: STRATEGY,
      reason: "",
    });
    const created = await callUnary(admin, "createUpdateRun", {
      name: "k8s-130",
      strategyName: "rings",
      payload: {
        upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: "1.30.0" },
      },
      reason: "quarterly",
    });
    expect(created.run?.state).toBe("RUN_STATE_NOT_STARTED");
    await callUnary(admin, "startUpdateRun", { name: "k8s-130", reason: "go" });

    // The canary gets its intent; a Ready for an older generation does not count.
    const canary = fleet.get("c-1");
    if (canary === undefined) throw new Error("no canary");
    await waitFor(
      async () =>
        (await fixture.hub.hub.intents.current("c-1")).intent.upgrade !==
        undefined,
    );
    const { intent } = await fixture.hub.hub.intents.current("c-1");
    expect(intent.generation).toBe(2);
    canary.send({
      status: {
        sequence: 1,
        generation: intent.generation - 1,
        upgradeId: "k8s-130",
        phase: "STATUS_PHASE_READY",
        observedAtMs: Date.now(),
      },
    });
    const stale = await canary.next("ack", (a) => a.sequence === 1);
    expect(stale.accepted).toBe(false);
    expect(stale.reason).toMatch(/not the current intent generation/);
    await fixture.hub.hub.runs.idle();
    expect(
      fixture.hub.hub.runs.get("k8s-130").run.stages[0]?.groups[0]?.members[0]
        ?.state,
    ).toBe("Running");

    await reportReady(canary, "c-1", 2);
    const gate = await waitFor(() => {
      const run = fixture.hub.hub.runs.get("k8s-130").run;
      return run.stages[0]?.afterGates.find((g) => g.state === "Pending");
    });
    // Nothing in prod starts before the approval.
    expect(
      (await fixture.hub.hub.intents.current("p-1")).intent.upgrade,
    ).toBeUndefined();
    await callUnary(admin, "approveGate", {
      run: "k8s-130",
      gateId: gate.id,
      reason: "canary fine",
    });

    // Prod: at most 2 at a time.
    let sequence = 10;
    const done = new Set<string>();
    while (done.size < 3) {
      const running = await waitFor(() => {
        const members =
          fixture.hub.hub.runs
            .get("k8s-130")
            .run.stages[1]?.groups.flatMap((g) => g.members) ?? [];
        const now = members.filter((m) => m.state === "Running");
        expect(now.length).toBeLessThanOrEqual(2);
        return now.length > 0 ? now : undefined;
      });
      for (const member of running) {
        const agent = fleet.get(member.name);
        if (agent === undefined) throw new Error(member.name);
        await reportReady(agent, member.name, sequence++);
        done.add(member.name);
      }
    }
    await waitFor(
      () => fixture.hub.hub.runs.get("k8s-130").run.state === "Completed",
      {
        message: "the run to complete",
      },
    );

    // Every call that changed state is audited with its caller and reason.
    const audit = await fixture.hub.audit.list({
      method: "/flotilla.v1.AdminService/ApproveGate",
    });
    expect(
      audit.events.map((e) => [e.targetName, e.reason, e.outcome]),
    ).toEqual([[`k8s-130/${gate.id}`, "canary fine", "Succeeded"]]);

    // Starting a Completed run is refused and changes nothing.
    const before = fixture.hub.hub.runs.get("k8s-130").revision;
    await expect(
      callUnary(admin, "startUpdateRun", { name: "k8s-130", reason: "" }),
    ).rejects.toMatchObject({
      code: "failed_precondition",
    });
    expect(fixture.hub.hub.runs.get("k8s-130").revision).toBe(before);
  });

  it("refuses a second agent claiming a connected cluster's name without affecting the first", async () => {
    const first = await register("c-1", "canary");
    const impostor = fixture.connect();
    impostor.hello("c-1");
    const ended = await impostor.waitEnded();
    expect(ended.code).toBe(grpcStatus.ALREADY_EXISTS);
    expect((await impostor.next("error")).message).toMatch(
      /already has a connected agent/,
    );
    first.send({
      heartbeat: { sentAtMs: Date.now(), lastAppliedGeneration: 0 },
    });
    expect(first.ended()).toBeUndefined();
    expect(fixture.hub.hub.registry.status("c-1")?.connection).toBe(
      "Connected",
    );
  });

  it("ends a stream that sends a malformed message, and only that one", async () => {
    const good = await register("c-1", "canary");
    const bad = await register("c-2", "canary");
    bad.send({ facts: { labels: { "bad key!": "x" }, nodePools: [] } });
    const ended = await bad.waitEnded();
    expect(ended.code).toBe(grpcStatus.INVALID_ARGUMENT);
    const error = await bad.next("error");
    expect(error.problems.map((p) => p.path)).toEqual([
      "facts.labels.bad key!",
    ]);
    good.send({
      heartbeat: { sentAtMs: Date.now(), lastAppliedGeneration: 0 },
    });
    await waitFor(
      () =>
        fixture.hub.hub.registry.status("c-2")?.connection === "Disconnected",
    );
    expect(good.ended()).toBeUndefined();
    expect(fixture.hub.hub.registry.status("c-1")?.connection).toBe(
      "Connected",
    );
  });

  it("refuses an oversized agent message by its size, and only that stream", async () => {
    const good = await register("c-1", "canary");
    const big = await register("c-2", "canary");
    big.send({
      status: {
        sequence: 1,
        generation: 1,
        upgradeId: "x",
        phase: "STATUS_PHASE_FAILED",
        error: "e".repeat(300 * 1024),
        observedAtMs: Date.now(),
      },
    });
    const ended = await big.waitEnded();
    expect(ended.code).toBe(grpcStatus.INVALID_ARGUMENT);
    expect(ended.details).toMatch(/larger than the 262144 allowed/);
    good.send({
      heartbeat: { sentAtMs: Date.now(), lastAppliedGeneration: 0 },
    });
    expect(good.ended()).toBeUndefined();
    expect(fixture.hub.hub.registry.status("c-1")?.connection).toBe(
      "Connected",
    );
  });

  it("lets a new agent take over a name whose session went silent past the timeout", async () => {
    const old = await register("c-1", "canary");
    staySilent(fixture.hub.heartbeatIntervalMs * 3);
    const fresh = await register("c-1", "canary");
    expect((await old.waitEnded()).code).toBe(grpcStatus.UNAVAILABLE);
    expect(fresh.ended()).toBeUndefined();
    expect(fixture.hub.hub.registry.status("c-1")?.connection).toBe(
      "Connected",
    );
  });

  it("refuses a stream whose first message is not hello", async () => {
    const agent = fixture.connect();
    agent.send({
      heartbeat: { sentAtMs: Date.now(), lastAppliedGeneration: 0 },
    });
    expect((await agent.waitEnded()).code).toBe(grpcStatus.INVALID_ARGUMENT);
  });

  it("marks a silent agent Unreachable after the heartbeat timeout, and reachable when it speaks", async () => {
    const agent = await register("c-1", "canary");
    staySilent(fixture.hub.heartbeatIntervalMs * 3);
    expect(fixture.hub.hub.registry.status("c-1")?.connection).toBe(
      "Unreachable",
    );
    agent.send({
      heartbeat: { sentAtMs: Date.now(), lastAppliedGeneration: 0 },
    });
    await waitFor(
      () => fixture.hub.hub.registry.status("c-1")?.connection === "Connected",
    );
    // Back from Unreachable, it is asked for its current status of everything.
    expect((await agent.next("resync")).reason).toMatch(/unreachable/);
  });

  it("answers malformed admin requests with INVALID_ARGUMENT and the field path, unknown names with NOT_FOUND", async () => {
    const admin = fixture.hub.admin;
    await expect(
      callUnary(admin, "createUpdateStrategy", {
        name: "Bad Name",
        strategyJson: STRATEGY,
        reason: "",
      }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [{ path: "name" }],
    });
    await expect(
      callUnary(admin, "createUpdateStrategy", {
        name: "ok",
        strategyJson: "{",
        reason: "",
      }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [{ path: "strategyJson" }],
    });
    await expect(
      callUnary(admin, "getUpdateRun", { name: "nope" }),
    ).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(
      callUnary(admin, "createUpdateRun", {
        name: "r",
        payload: {
          upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: "banana" },
        },
        reason: "",
      }),
    ).rejects.toMatchObject({ code: "invalid_argument" });
    const listed = await callUnary(admin, "listUpdateStrategies", {});
    expect(listed.strategies).toEqual([]);
    expect((await callUnary(admin, "listUpdateRuns", {})).runs).toEqual([]);
  });
});
