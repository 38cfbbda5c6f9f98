/**
 * GetHubStatus (`flotilla hub status`) of a lone in-memory hub: it answers with itself only (its
 * address, the sessions it holds) and no streams. Replicas: hub-status-replicas.test.ts.
 */
import { callUnary } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { startTestHub } from "./hub-harness.js";

describe("hub status of a single hub", () => {
  it("answers with itself only: its address, every unit its own, no streams", async () => {
    const test = await startTestHub();
    try {
      await test.hub.registry.connect("prod-01", "1.0.0", {
        labels: {},
        kubernetesVersion: "1.29.9",
        nodePools: [],
      });
      const status = await callUnary(test.admin, "getHubStatus", {});
      expect(status.replica).toBe(test.address);
      expect(status.replicas).toEqual([
        expect.objectContaining({
          id: test.address,
          address: test.address,
          sessions: 1,
          leases: [],
          eligible: true,
        }),
      ]);
      expect(status.replicas[0]?.version).not.toBe("");
      expect(status.streams).toEqual([]);
    } finally {
      await test.stop();
    }
  });
});
