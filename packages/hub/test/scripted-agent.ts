/**
 * A scripted agent for the hub's tests: a real AgentService.Connect stream over gRPC whose every
 * message the test chooses, so the tests can send what a real agent never would (stale
 * generations, another cluster's name, malformed messages) and see exactly what the hub answers.
 */
import {
  createAgentServiceClient,
  PROTOCOL_VERSION,
  type wire,
} from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { credentials, type ClientDuplexStream } from "@grpc/grpc-js";

export interface ScriptedAgent {
  readonly received: wire.HubMessage__Output[];
  /** The status the stream ended with (undefined while open). */
  ended(): { code: number; details: string } | undefined;
  send(message: wire.AgentMessage): void;
  hello(cluster: string, lastAppliedGeneration?: number): void;
  /** Waits for a hub message matching `match`, returns it. */
  next<K extends keyof wire.HubMessage__Output>(
    body: K,
    match?: (message: NonNullable<wire.HubMessage__Output[K]>) => boolean,
  ): Promise<NonNullable<wire.HubMessage__Output[K]>>;
  waitEnded(): Promise<{ code: number; details: string }>;
  close(): void;
}

export function connectScriptedAgent(address: string): ScriptedAgent {
  // No client-side send limit: the hub must refuse oversized messages itself.
  const client = createAgentServiceClient(
    address,
    credentials.createInsecure(),
    { "grpc.max_send_message_length": 8 * 1024 * 1024 },
  );
  const call: ClientDuplexStream<wire.AgentMessage, wire.HubMessage__Output> =
    client.Connect();
  const received: wire.HubMessage__Output[] = [];
  let end: { code: number; details: string } | undefined;
  call.on("data", (message: wire.HubMessage__Output) => {
    received.push(message);
  });
  call.on("error", (error: { code?: number; details?: string }) => {
    end = { code: error.code ?? -1, details: error.details ?? "" };
  });
  call.on("status", (status: { code: number; details: string }) => {
    end ??= { code: status.code, details: status.details };
  });
  return {
    received,
    ended: () => end,
    send(message) {
      call.write(message);
    },
    hello(cluster, lastAppliedGeneration = 0) {
      call.write({
        hello: {
          clusterName: cluster,
          agentVersion: "test",
          protocolVersion: PROTOCOL_VERSION,
          lastAppliedGeneration,
        },
      });
    },
    async next(body, match) {
      return waitFor(
        () => {
          for (const message of received) {
            const value = message[body];
            if (
              value !== null &&
              value !== undefined &&
              (match === undefined || match(value))
            ) {
              return value;
            }
          }
          return undefined;
        },
        { timeoutMs: 10_000, message: `a ${body} from the hub` },
      );
    },
    waitEnded() {
      return waitFor(() => end, {
        timeoutMs: 10_000,
        message: "the stream to end",
      });
    },
    close() {
      call.end();
      client.close();
    },
  };
}
