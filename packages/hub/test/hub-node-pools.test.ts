/**
 * Node pools in a live run's member messages (docs/engine.md#node-pools-inside-a-member), over
 * real gRPC with scripted agents: the run status says which pools an upgrade left on their image
 * and why, next to what the agent reported. The hub holds no catalogue of node images, so every
 * pool is "not offered" here; core's tests cover the other reasons.
 */
import { describe, expect, it } from "vitest";
import { callUnary } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import type { ScriptedAgent } from "./scripted-agent.js";
import { useHubWithAgents } from "./support/hub-with-agents.js";

const fixture = useHubWithAgents();

function register(name: string): Promise<ScriptedAgent> {
  return fixture.register(name, {
    labels: { ring: "prod" },
    kubernetesVersion: "1.29.4",
    nodePools: [
      { name: "system", imageFamily: "ubuntu", imageVersion: "2026.01.1" },
      { name: "gpu", imageFamily: "ubuntu-gpu", imageVersion: "2026.01.1" },
    ],
    region: "westeurope",
  });
}

async function memberOf(run: string, name: string) {
  const { run: status } = await callUnary(fixture.hub.admin, "getUpdateRun", {
    name: run,
  });
  return status?.stages
    .flatMap((s) => s.groups)
    .flatMap((g) => g.members)
    .find((m) => m.name === name);
}

describe("hub: node pools in member messages", () => {
  it("a Full upgrade's Succeeded message adds the pools whose image it kept to the agent's own words", async () => {
    const agent = await register("c-1");
    await callUnary(fixture.hub.admin, "createUpdateRun", {
      name: "k8s-130",
      payload: {
        upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: "1.30.0" },
      },
      reason: "",
    });
    await callUnary(fixture.hub.admin, "startUpdateRun", {
      name: "k8s-130",
      reason: "",
    });
    const { intent } = await waitFor(async () => {
      const current = await fixture.hub.hub.intents.current("c-1");
      return current.intent.upgrade === undefined ? undefined : current;
    });
    agent.send({
      status: {
        sequence: 1,
        generation: intent.generation,
        upgradeId: "k8s-130",
        phase: "STATUS_PHASE_READY",
        message: "Upgraded control plane to 1.30.0, node pools to 1.30.0",
        observedAtMs: Date.now(),
      },
    });
    await agent.next("ack", (a) => a.sequence === 1);
    await waitFor(
      () => fixture.hub.hub.runs.get("k8s-130").run.state === "Completed",
    );
    expect(await memberOf("k8s-130", "c-1")).toMatchObject({
      state: "MEMBER_STATE_SUCCEEDED",
      message:
        'Upgraded control plane to 1.30.0, node pools to 1.30.0; kept the node image of node pool(s) "system" (no ubuntu image is offered in region "westeurope"), "gpu" (no ubuntu-gpu image is offered in region "westeurope")',
    });
  });

  it("a NodeImageOnly member with nothing to upgrade is Skipped with each pool and its reason", async () => {
    await register("c-1");
    const created = await callUnary(fixture.hub.admin, "createUpdateRun", {
      name: "images",
      payload: { upgrade: { type: "UPGRADE_TYPE_NODE_IMAGE_ONLY" } },
      reason: "",
    });
    const member = created.run?.stages[0]?.groups[0]?.members[0];
    expect(member).toMatchObject({
      name: "c-1",
      state: "MEMBER_STATE_SKIPPED",
      reason: "AlreadyAtTarget",
      message:
        'cluster "c-1" has no node pool to upgrade: skipped upgrade of node pool(s) "system" (no ubuntu image is offered in region "westeurope"), "gpu" (no ubuntu-gpu image is offered in region "westeurope")',
    });
  });
});
