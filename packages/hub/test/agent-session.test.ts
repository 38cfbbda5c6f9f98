/**
 * A stream's first message: it must be a valid hello of this hub's protocol version, or the stream
 * is refused with the error that says so.
 */
import { PROTOCOL_VERSION, type wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { readHello } from "../src/grpc/agent-session.js";

const hello = (
  fields: Partial<wire.Hello__Output> = {},
): wire.AgentMessage__Output => ({
  body: "hello",
  hello: {
    clusterName: "c-1",
    agentVersion: "v1",
    protocolVersion: PROTOCOL_VERSION,
    lastAppliedGeneration: 3,
    ...fields,
  },
});

describe("reading hello", () => {
  it("returns the validated hello", () => {
    expect(readHello(hello())).toEqual({
      clusterName: "c-1",
      agentVersion: "v1",
      protocolVersion: PROTOCOL_VERSION,
      lastAppliedGeneration: 3,
    });
  });

  it("refuses a first message that is not hello", () => {
    expect(() => readHello({ body: "heartbeat", heartbeat: null })).toThrow(
      expect.objectContaining({
        code: "invalid_argument",
        message: `An agent's first message must be hello, not "heartbeat"`,
      }),
    );
    expect(() => readHello({})).toThrow(
      expect.objectContaining({
        message: `An agent's first message must be hello, not "empty"`,
      }),
    );
  });

  it("refuses an invalid hello", () => {
    expect(() => readHello(hello({ clusterName: "Not A Name" }))).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
  });

  it("refuses another protocol version", () => {
    expect(() =>
      readHello(hello({ protocolVersion: PROTOCOL_VERSION + 1 })),
    ).toThrow(
      expect.objectContaining({
        code: "failed_precondition",
        message: `Protocol version ${String(PROTOCOL_VERSION + 1)} is not supported: this hub speaks version ${String(PROTOCOL_VERSION)}`,
      }),
    );
  });
});
