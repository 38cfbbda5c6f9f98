/**
 * An open session's messages, one kind at a time: each valid one reaches the registry (or the
 * reports), an invalid one throws the error that refuses the stream, and a replaced session is
 * refused whatever it sends. Oversized messages are refused before any of that.
 */
import { MAX_AGENT_MESSAGE_BYTES, type wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { handleAgentMessage } from "../src/grpc/agent-messages.js";
import {
  agentServiceDefinition,
  checkMessageSize,
} from "../src/grpc/agent-message-size.js";

const session = { cluster: "c-1", id: 1 };

function setup(current = true) {
  const calls: unknown[] = [];
  const deps = {
    registry: {
      isCurrent: () => current,
      updateFacts: (_: unknown, facts: unknown, options?: unknown) => {
        calls.push(
          options === undefined ? ["facts", facts] : ["facts", facts, options],
        );
        return Promise.resolve();
      },
      seen: (_: unknown, generation?: number) => {
        calls.push(["seen", generation]);
      },
      updateMaintenance: (_: unknown, maintenance: unknown) => {
        calls.push(["windows", maintenance]);
        return Promise.resolve();
      },
    },
    report: (cluster: string) => {
      calls.push(["report", cluster]);
      return Promise.resolve();
    },
    onCatalogueRefused: (cluster: string, reason: string) => {
      calls.push(["refused", cluster, reason]);
    },
  };
  const handle = (message: wire.AgentMessage__Output) =>
    handleAgentMessage(message, session, deps);
  return { calls, handle };
}

describe("an open session's messages", () => {
  it("takes heartbeats, facts and cleared windows", async () => {
    const t = setup();
    await t.handle({
      body: "heartbeat",
      heartbeat: { sentAtMs: 5, lastAppliedGeneration: 2 },
    });
    await t.handle({
      body: "facts",
      facts: {
        labels: { env: "prod" },
        nodePools: [],
        maintenance: null,
        catalogue: null,
      },
    });
    await t.handle({ body: "windowsChanged", windowsChanged: null });
    expect(t.calls).toMatchObject([
      ["seen", 2],
      ["facts", { labels: { env: "prod" } }, { keepCatalogue: false }],
      ["windows", undefined],
    ]);
  });

  it("takes the facts of a refused catalogue, keeping the stored one, and says why", async () => {
    const t = setup();
    await t.handle({
      body: "facts",
      facts: {
        labels: {},
        nodePools: [],
        maintenance: null,
        catalogue: {
          kubernetes: Array.from({ length: 10_000 }, () => ({
            version: "1.30.1",
            lts: false,
            preview: false,
          })),
          nodePools: [],
        },
      },
    });
    expect(t.calls).toEqual([
      ["refused", "c-1", "implausible"],
      ["facts", { labels: {}, nodePools: [] }, { keepCatalogue: true }],
    ]);
  });

  it("refuses a second hello, an empty message and invalid ones", async () => {
    const t = setup();
    await expect(
      t.handle({ body: "hello", hello: null }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      message: "hello was already sent on this stream",
    });
    await expect(t.handle({})).rejects.toMatchObject({
      code: "invalid_argument",
      message: "Empty agent message",
    });
    await expect(
      t.handle({
        body: "heartbeat",
        heartbeat: { sentAtMs: 0, lastAppliedGeneration: 0 },
      }),
    ).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(
      t.handle({ body: "status", status: null }),
    ).rejects.toMatchObject({ code: "invalid_argument" });
    expect(t.calls).toEqual([]);
  });

  it("refuses every message of a replaced session", async () => {
    const t = setup(false);
    await expect(
      t.handle({
        body: "heartbeat",
        heartbeat: { sentAtMs: 5, lastAppliedGeneration: 2 },
      }),
    ).rejects.toMatchObject({
      code: "failed_precondition",
      message: "This session was replaced",
    });
    expect(t.calls).toEqual([]);
  });
});

describe("agent message size", () => {
  it("refuses a message too large to decode, naming its size", () => {
    const decode = agentServiceDefinition().Connect?.requestDeserialize;
    const size = MAX_AGENT_MESSAGE_BYTES + 1;
    const message = decode?.(Buffer.alloc(size)) as wire.AgentMessage__Output;
    expect(() => {
      checkMessageSize(message);
    }).toThrow(
      expect.objectContaining({
        code: "invalid_argument",
        message: `An agent message of ${String(size)} bytes is larger than the ${String(MAX_AGENT_MESSAGE_BYTES)} allowed`,
      }),
    );
    expect(() => {
      checkMessageSize({ body: "heartbeat" });
    }).not.toThrow();
  });
});
