import { describe, expect, test } from "vitest";
import { createPrometheusClient } from "../src/gates/prometheus-client.js";
import { createHub } from "../src/hub.js";
import { memoryHubParts } from "./hub-harness.js";

describe("the hub's Prometheus", () => {
  test("is the client the hub was given (--prometheus-url), and undefined without one", async () => {
    const parts = await memoryHubParts(Date.parse("2026-12-01T10:00:00Z"));
    const prometheus = createPrometheusClient({
      url: "http://prometheus.example:9090",
    });
    const withClient = createHub(
      parts.options({ heartbeatIntervalMs: 1_000, prometheus }),
    );
    expect(withClient.prometheus).toBe(prometheus);
    const without = createHub(parts.options({ heartbeatIntervalMs: 1_000 }));
    expect(without.prometheus).toBeUndefined();
    await parts.audit.stop();
    await parts.publisher.stop();
    await parts.store.stop();
  });
});
