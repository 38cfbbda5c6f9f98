/**
 * AgentService: one bidirectional stream per agent (docs/agent-protocol.md). The stream's first
 * message must be `hello`; the hub then opens a session in the cluster registry and answers
 * `welcome` (agent-session.ts). Every later message is validated before it touches any state
 * (agent-messages.ts); an invalid one ends this stream (StreamError, then the same gRPC status)
 * and nothing else: other agents' sessions are independent.
 *
 * With TLS the stream's client certificate names its cluster (agent-registration.ts): no valid
 * certificate of a registered cluster is UNAUTHENTICATED at once, and a hello naming another
 * cluster is PERMISSION_DENIED. In plaintext development mode hello names the cluster.
 *
 * Status reports count only for the cluster's current intent generation (agent-reports.ts).
 */
import { FlotillaError } from "@flotilla/core";
import type { StatusReport, wire } from "@flotilla/protocol";
import { status as grpcStatus } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { ClusterRegistry } from "../clusters/cluster-registry.js";
import type { IntentWriter } from "../intents/intent-writer.js";
import { handleAgentMessage, type AgentMessageDeps } from "./agent-messages.js";
import { checkMessageSize } from "./agent-message-size.js";
import type { AgentRegistration } from "./agent-registration.js";
import { takeReport, type ReportSinks } from "./agent-reports.js";
import { openSession } from "./agent-session.js";
import { createAgentStreamIndex } from "./agent-stream-index.js";
import { createAgentStream, type AgentCall } from "./agent-stream.js";

export { agentServiceDefinition } from "./agent-message-size.js";
export type { ReportSinks } from "./agent-reports.js";

export interface AgentServiceDeps {
  readonly registry: ClusterRegistry;
  readonly intents: IntentWriter;
  readonly sinks: ReportSinks;
  readonly now: () => number;
  readonly heartbeatIntervalMs: number;
  readonly logger: Logger;
  /** How long a new stream may take to say hello (default 10 s). */
  readonly helloTimeoutMs?: number;
  readonly onSessionRefused?: (code: string) => void;
  /** An agent's version catalogue was refused (agent-messages.ts). */
  readonly onCatalogueRefused?: AgentMessageDeps["onCatalogueRefused"];
  readonly onReport?: (phase: string, accepted: boolean) => void;
  /** Register, RenewIdentity and the stream's authentication. */
  readonly registration: AgentRegistration;
}

export interface AgentService {
  readonly handlers: wire.AgentServiceHandlers;
  /** Ends every open stream (hub shutdown): agents reconnect to the next hub. */
  closeAll(): void;
}

export function createAgentService(deps: AgentServiceDeps): AgentService {
  const open = new Set<AgentCall>();
  const streams = createAgentStreamIndex(deps.registry);

  const connect = (call: AgentCall): void => {
    open.add(call);
    const stream = createAgentStream(call, {
      logger: deps.logger,
      helloTimeoutMs: deps.helloTimeoutMs ?? 10_000,
      onSessionRefused: deps.onSessionRefused,
      onFinish: (session) => {
        open.delete(call);
        if (session === undefined) return;
        streams.remove(session);
        void deps.registry.disconnect(session);
      },
    });

    // The certificate is checked as the stream opens: without one it ends before any hello.
    const identity = deps.registration.authenticateStream(call);
    identity.catch((error: unknown) => {
      stream.refuse(FlotillaError.from(error));
    });

    const ack = (ack: wire.Ack): void => {
      stream.send({ ack });
    };
    const report = (cluster: string, report: StatusReport): Promise<void> =>
      takeReport(cluster, report, ack, deps);

    stream.listen(async (message) => {
      checkMessageSize(message);
      const session = stream.session();
      if (session === undefined) {
        await openSession(stream, message, identity, { ...deps, streams });
      } else {
        await handleAgentMessage(message, session, { ...deps, report });
      }
    });
  };

  return {
    handlers: {
      Connect: connect,
      ...deps.registration.handlers,
    },
    closeAll() {
      for (const call of [...open]) {
        try {
          call.emit("error", {
            code: grpcStatus.UNAVAILABLE,
            details: "The hub is shutting down",
          });
        } catch {
          // gone
        }
      }
      open.clear();
    },
  };
}
