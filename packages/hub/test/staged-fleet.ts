/**
 * Scripted agents as a fleet for staged runs: the facts they join a test hub with, and reports on
 * the upgrade their cluster's current intent holds.
 */
import { expect } from "vitest";
import type { wire } from "@flotilla/protocol";
import type { TestHub } from "./hub-harness.js";
import type { ScriptedAgent } from "./scripted-agent.js";

/** The facts of a fleet member for staged runs: `labels`, Kubernetes 1.29.4 and one node pool. */
export function stagedFacts(
  labels: Readonly<Record<string, string>>,
): wire.ClusterFacts {
  return {
    labels: { ...labels },
    kubernetesVersion: "1.29.4",
    nodePools: [
      { name: "np1", imageFamily: "ubuntu", imageVersion: "2024.01.01" },
    ],
    region: "westeurope",
  };
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
