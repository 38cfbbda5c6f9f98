/**
 * Scripted agents that join a test hub as a fleet for staged runs, and report on the upgrade their
 * cluster's current intent holds.
 */
import { waitFor } from "@flotilla/testkit";
import { expect } from "vitest";
import type { wire } from "@flotilla/protocol";
import type { TestHub } from "./hub-harness.js";
import { connectScriptedAgent, type ScriptedAgent } from "./scripted-agent.js";

/** Connects an agent for `name` with these labels and waits until the hub knows its facts. */
export async function registerAgent(
  hub: TestHub,
  name: string,
  labels: Readonly<Record<string, string>>,
  agents: ScriptedAgent[],
): Promise<ScriptedAgent> {
  const agent = connectScriptedAgent(hub.address);
  agents.push(agent);
  agent.hello(name);
  agent.send({
    facts: {
      labels: { ...labels },
      kubernetesVersion: "1.29.4",
      nodePools: [
        { name: "np1", imageFamily: "ubuntu", imageVersion: "2024.01.01" },
      ],
      region: "westeurope",
    },
  });
  await agent.next("welcome");
  await waitFor(
    () => {
      const known = hub.hub.registry.cluster(name)?.labels ?? {};
      return Object.entries(labels).every(([k, v]) => known[k] === v);
    },
    { message: `${name}'s facts` },
  );
  return agent;
}

/**
 * Reports `phase` for the upgrade in the cluster's current intent and waits for the hub's ack. The
 * hub hands a counted report to its run manager before it acks, so once this resolves the report
 * is in the run's mailbox.
 */
export async function reportUpgrade(
  hub: TestHub,
  agent: ScriptedAgent,
  cluster: string,
  sequence: number,
  phase: "STATUS_PHASE_READY" | "STATUS_PHASE_FAILED",
): Promise<wire.Ack__Output> {
  const { intent } = await hub.hub.intents.current(cluster);
  expect(
    intent.upgrade,
    `${cluster} has an upgrade to report on`,
  ).toBeDefined();
  agent.send({
    status: {
      sequence,
      generation: intent.generation,
      upgradeId: intent.upgrade?.run ?? "",
      phase,
      ...(phase === "STATUS_PHASE_FAILED" ? { error: "upgrade failed" } : {}),
      observedAtMs: Date.now(),
    },
  });
  const ack = await agent.next("ack", (a) => a.sequence === sequence);
  expect(ack.accepted, `${cluster}'s report: ${ack.reason}`).toBe(true);
  return ack;
}
