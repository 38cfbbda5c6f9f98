/**
 * A test hub per test with scripted agents that join it: started before each test, stopped (its
 * agents closed first) after each. Call {@link useHubWithAgents} at the top of a test file.
 */
import type { wire } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { afterEach, beforeEach } from "vitest";
import {
  startTestHub,
  type TestHub,
  type TestHubOptions,
} from "../hub-harness.js";
import { connectScriptedAgent, type ScriptedAgent } from "../scripted-agent.js";

export interface HubWithAgents {
  /** The current test's hub. */
  readonly hub: TestHub;
  /** Connects a scripted agent that has said nothing yet; it is closed after the test. */
  connect(): ScriptedAgent;
  /**
   * Connects an agent for cluster `name` that sends `facts`, and waits until the hub knows the
   * cluster with the facts' labels.
   */
  register(name: string, facts: wire.ClusterFacts): Promise<ScriptedAgent>;
}

/** Registers the hooks that start and stop a hub around each test of the file. */
export function useHubWithAgents(options: TestHubOptions = {}): HubWithAgents {
  let current: TestHub | undefined;
  const agents: ScriptedAgent[] = [];
  beforeEach(async () => {
    current = await startTestHub(options);
  });
  afterEach(async () => {
    for (const a of agents.splice(0)) a.close();
    await current?.stop();
    current = undefined;
  });
  const hubOfTest = (): TestHub => {
    if (current === undefined) throw new Error("no test hub outside a test");
    return current;
  };
  const connect = (): ScriptedAgent => {
    const agent = connectScriptedAgent(hubOfTest().address);
    agents.push(agent);
    return agent;
  };
  return {
    get hub() {
      return hubOfTest();
    },
    connect,
    async register(name, facts) {
      const hub = hubOfTest();
      const agent = connect();
      agent.hello(name);
      agent.send({ facts });
      await agent.next("welcome");
      const labels = Object.entries(facts.labels ?? {});
      await waitFor(
        () => {
          const known = hub.hub.registry.cluster(name)?.labels;
          return (
            known !== undefined && labels.every(([k, v]) => known[k] === v)
          );
        },
        { message: `${name}'s facts` },
      );
      return agent;
    },
  };
}
