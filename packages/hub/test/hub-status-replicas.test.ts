/**
 * GetHubStatus (`flotilla hub status`) of two replicas on one NATS: each answers with both, the
 * agent sessions and leases each holds, and the hub's JetStream streams with their replica counts.
 */
import { callUnary } from "@flotilla/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import { startJetStreamHub } from "./jetstream-hub-harness.js";

describe("hub status of replicas", () => {
  let server: NatsServer;
  beforeEach(async () => {
    server = await startNatsServer();
  });
  afterEach(async () => {
    await server.stop();
  });

  it("names both replicas through either, with the leases each holds and the streams", async () => {
    await using a = await startJetStreamHub(server, {
      replica: { id: "hub-a", leaseTtlMs: 1_500 },
    });
    await using b = await startJetStreamHub(server, {
      replica: { id: "hub-b", leaseTtlMs: 1_500 },
    });
    await a.hub.registry.connect("prod-01", "1.0.0", {
      labels: {},
      kubernetesVersion: "1.29.9",
      nodePools: [],
    });
    // Both replicas see each other once a lease round has run on each since the other started.
    await waitFor(
      () =>
        [a, b].every((h) => h.hub.leases?.replicas().length === 2) &&
        [a, b].some((h) => h.hub.leases?.held("bundles") !== undefined),
      { timeoutMs: 10_000 },
    );
    const bundlesOwner =
      a.hub.leases?.held("bundles") === undefined ? "hub-b" : "hub-a";

    // A replica's record says what it held at its last lease round: hub-b reports hub-a's
    // leases and sessions once hub-a wrote them and hub-b read them.
    const status = await waitFor(
      async () => {
        const answer = await callUnary(b.admin, "getHubStatus", {});
        const owner = answer.replicas.find((r) => r.id === bundlesOwner);
        const first = answer.replicas.find((r) => r.id === "hub-a");
        return owner?.leases.includes("bundles") === true &&
          first?.sessions === 1
          ? answer
          : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(status.replica).toBe("hub-b");
    expect(status.replicas.map((r) => r.id)).toEqual(["hub-a", "hub-b"]);
    const byId = new Map(status.replicas.map((r) => [r.id, r]));
    expect(byId.get("hub-b")).toMatchObject({
      address: "hub-b",
      version: "test",
      eligible: true,
      sessions: 0,
    });
    const other = bundlesOwner === "hub-a" ? "hub-b" : "hub-a";
    expect(byId.get(other)?.leases).not.toContain("bundles");
    expect(Number(byId.get("hub-a")?.seenAtMs)).toBeGreaterThan(0);
    expect(Number(byId.get("hub-a")?.startedAtMs)).toBeGreaterThan(0);

    const names = status.streams.map((s) => s.name);
    expect(names).toContain("KV_flotilla-runs");
    expect(names).toContain("KV_flotilla-leases");
    for (const stream of status.streams) {
      expect(stream.error, stream.name).toBe("");
      expect(stream.replicas, stream.name).toBe(1);
    }
  });
});
