import { describe, expect, it } from "vitest";
import {
  heartbeatFromWire,
  helloFromWire,
  loadProtocol,
  type wire,
} from "@flotilla/protocol";
import { T0, valueOf } from "./fixtures.js";

describe("session messages", () => {
  function connectMessage(
    message: wire.AgentMessage,
  ): wire.AgentMessage__Output {
    const connect = loadProtocol().agentService.Connect;
    return connect.requestDeserialize(connect.requestSerialize(message));
  }

  it("accepts a well-formed Hello and Heartbeat", () => {
    const hello = connectMessage({
      hello: {
        clusterName: "prod-eu-1",
        agentVersion: "0.1.0",
        protocolVersion: 1,
      },
    }).hello;
    expect(valueOf(helloFromWire(hello))).toEqual({
      clusterName: "prod-eu-1",
      agentVersion: "0.1.0",
      protocolVersion: 1,
      lastAppliedGeneration: 0,
    });
    const beat = connectMessage({
      heartbeat: { sentAtMs: T0, lastAppliedGeneration: 3 },
    });
    expect(valueOf(heartbeatFromWire(beat.heartbeat))).toEqual({
      sentAtMs: T0,
      lastAppliedGeneration: 3,
    });
  });

  it("refuses a Hello without a usable cluster name, version or protocol", () => {
    const hello = connectMessage({
      hello: { clusterName: "Prod_EU", agentVersion: "" },
    }).hello;
    const result = helloFromWire(hello);
    expect(result.ok ? [] : result.problems.map((p) => p.path)).toEqual([
      "hello.clusterName",
      "hello.agentVersion",
      "hello.protocolVersion",
    ]);
    expect(heartbeatFromWire(null).ok).toBe(false);
  });
});
