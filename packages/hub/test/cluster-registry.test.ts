/**
 * The cluster registry keeps what agents tell it while the state store is unavailable (a NATS
 * outage must not end agents' sessions) and writes it once the store is back.
 */
import { describe, expect, it } from "vitest";
import { createClusterRegistry } from "../src/clusters/cluster-registry.js";
import { CLUSTERS } from "../src/clusters/cluster-record.js";
import { createMemoryStore } from "../src/store/memory-store.js";

describe("cluster registry during a store outage", () => {
  it("keeps facts and new clusters in memory, then flushes them", async () => {
    const store = createMemoryStore();
    await store.start();
    const now = 1_000;
    const registry = createClusterRegistry({
      store,
      now: () => now,
      unreachableAfterMs: 30_000,
      groups: () => [],
    });
    await registry.start();
    const session = await registry.connect("c-1", "v1", undefined);

    await store.stop();
    await registry.updateFacts(session, {
      labels: { env: "prod" },
      nodePools: [],
      kubernetesVersion: "1.30.3",
    });
    const newcomer = await registry.connect("c-2", "v1", undefined);
    expect(registry.cluster("c-1")?.kubernetesVersion).toBe("1.30.3");
    expect(registry.isCurrent(newcomer)).toBe(true);
    await expect(registry.flush()).rejects.toMatchObject({
      code: "unavailable",
    });

    await store.start();
    await registry.flush();
    const stored = await store.list(CLUSTERS);
    expect(stored.map((e) => [e.key, e.value.facts.kubernetesVersion])).toEqual(
      [
        ["c-1", "1.30.3"],
        ["c-2", undefined],
      ],
    );
  });
});
