/**
 * Pausing a cluster on a live hub (docs/semantics.md#paused-clusters; docs/cli.md, `cluster
 * pause`), over real gRPC with scripted agents: LabelCluster sets or clears the pause, the bundle
 * passes hold the paused cluster (HOLD_REASON_PAUSED) while the others get the bundle, an agent's
 * own reports do not undo it, and unpausing releases it.
 */
import { describe, expect, it } from "vitest";
import { callUnary } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { bundleSpec } from "./bundles-fixtures.js";
import type { ScriptedAgent } from "./scripted-agent.js";
import { useHubWithAgents } from "./support/hub-with-agents.js";

const fixture = useHubWithAgents();

const FACTS = { labels: { env: "prod" }, nodePools: [] };

function register(name: string): Promise<ScriptedAgent> {
  return fixture.register(name, FACTS);
}

const holdsWeb = async (name: string): Promise<boolean> =>
  (await fixture.hub.hub.intents.current(name)).intent.bundles["web"] !==
  undefined;

describe("hub: a paused cluster", () => {
  it("is held by bundle rollouts while paused, keeps its pause across agent reports, and gets the bundle once unpaused", async () => {
    const second = await register("c-2");
    for (const name of ["c-1", "c-3"]) await register(name);

    const paused = await callUnary(fixture.hub.admin, "labelCluster", {
      name: "c-2",
      setLabels: {},
      removeLabels: [],
      paused: true,
      reason: "store refit",
    });
    expect(paused.cluster).toMatchObject({ name: "c-2", paused: true });

    const applied = await callUnary(fixture.hub.admin, "applyBundle", {
      bundle: bundleSpec(),
      reason: "",
    });
    expect(applied.warnings).toContainEqual({
      code: "PausedClusters",
      message:
        "1 cluster(s) are paused: they receive nothing new and do not count as unavailable: c-2",
    });
    await waitFor(
      async () => (await holdsWeb("c-1")) && (await holdsWeb("c-3")),
    );
    // The pass that released c-1 and c-3 (all at once, the defaults) decided about c-2 too.
    expect(await holdsWeb("c-2")).toBe(false);
    const status = await callUnary(fixture.hub.admin, "getBundle", {
      name: "web",
    });
    expect(status.clusters.find((c) => c.cluster === "c-2")).toMatchObject({
      held: "HOLD_REASON_PAUSED",
      message: "cluster is paused",
    });

    // The pause is the operator's: the agent reporting its facts again does not clear it.
    second.send({ facts: { ...FACTS, labels: { env: "prod", x: "1" } } });
    await waitFor(
      () => fixture.hub.hub.registry.cluster("c-2")?.labels["x"] === "1",
    );
    expect(fixture.hub.hub.registry.cluster("c-2")?.paused).toBe(true);
    // A label change that does not mention the pause leaves it.
    await callUnary(fixture.hub.admin, "labelCluster", {
      name: "c-2",
      setLabels: { tier: "gold" },
      removeLabels: [],
      reason: "",
    });
    const got = await callUnary(fixture.hub.admin, "getCluster", {
      name: "c-2",
    });
    expect(got.cluster?.paused).toBe(true);

    const unpaused = await callUnary(fixture.hub.admin, "labelCluster", {
      name: "c-2",
      setLabels: {},
      removeLabels: [],
      paused: false,
      reason: "refit done",
    });
    expect(unpaused.cluster?.paused).toBe(false);
    await waitFor(() => holdsWeb("c-2"), {
      message: "c-2 to receive the bundle once unpaused",
    });

    const audit = await fixture.hub.audit.list({
      method: "/flotilla.v1.AdminService/LabelCluster",
    });
    expect(audit.events.map((e) => [e.targetName, e.reason])).toEqual([
      ["c-2", "store refit"],
      ["c-2", ""],
      ["c-2", "refit done"],
    ]);
  });
});
