import { describe, expect, test } from "vitest";
import {
  createHubProbes,
  type NatsConnectionState,
} from "../src/health/probes.js";

/** A hub whose own health the test sets, and a NATS connection whose state it sets. */
function fakes() {
  const state = {
    nats: "connected" as NatsConnectionState,
    hubOk: true,
  };
  const hub = {
    health: () => ({
      ok: state.hubOk,
      checks: {
        grpc: state.hubOk ? "serving" : "stopped",
        agents: "2 connected",
      },
    }),
  };
  const probes = createHubProbes(() => state.nats);
  return { state, hub, probes };
}

describe("the hub's probes", () => {
  test("while starting: alive, not ready, and saying so", () => {
    const { probes } = fakes();
    expect(probes.liveness()).toEqual({
      ok: true,
      checks: { hub: "starting", nats: "connected" },
    });
    expect(probes.readiness()).toEqual({
      ok: false,
      checks: { hub: "starting", nats: "connected" },
      reasons: ["the hub has not finished starting"],
    });
  });

  test("once serving with NATS up: alive and ready with the hub's checks", () => {
    const { hub, probes } = fakes();
    probes.serving(hub);
    const checks = {
      grpc: "serving",
      agents: "2 connected",
      nats: "connected",
    };
    expect(probes.liveness()).toEqual({ ok: true, checks });
    expect(probes.readiness()).toEqual({ ok: true, checks, reasons: [] });
  });

  test("NATS down: not ready at once, alive still; ready again once reconnected", () => {
    const { state, hub, probes } = fakes();
    probes.serving(hub);
    state.nats = "reconnecting";
    expect(probes.readiness()).toMatchObject({
      ok: false,
      checks: { nats: "reconnecting" },
      reasons: ["the NATS connection is down (reconnecting)"],
    });
    expect(probes.liveness().ok).toBe(true);
    state.nats = "connected";
    expect(probes.readiness().ok).toBe(true);
  });

  test("NATS closed for good: neither alive nor ready", () => {
    const { state, hub, probes } = fakes();
    probes.serving(hub);
    state.nats = "closed";
    expect(probes.liveness()).toMatchObject({
      ok: false,
      checks: { nats: "closed" },
    });
    expect(probes.readiness().reasons).toEqual([
      "the NATS connection is down (closed)",
    ]);
  });

  test("a hub that stopped serving is neither alive nor ready", () => {
    const { state, hub, probes } = fakes();
    probes.serving(hub);
    state.hubOk = false;
    expect(probes.liveness()).toMatchObject({
      ok: false,
      checks: { grpc: "stopped" },
    });
    expect(probes.readiness().reasons).toEqual(["the hub is not serving"]);
  });

  test("starting without NATS gives both reasons", () => {
    const { state, probes } = fakes();
    state.nats = "reconnecting";
    expect(probes.readiness().reasons).toEqual([
      "the hub has not finished starting",
      "the NATS connection is down (reconnecting)",
    ]);
  });
});
