/**
 * A stream's opening: its first message must be a hello this hub can speak to; with TLS the
 * stream's certificate must name the cluster hello names. The registry then opens the cluster's
 * session, the stream is indexed under it, and the agent is answered `welcome`.
 */
import { FlotillaError, showValue } from "@flotilla/core";
import {
  helloFromWire,
  PROTOCOL_VERSION,
  type Hello,
  type wire,
} from "@flotilla/protocol";
import type { ClusterRegistry } from "../clusters/cluster-registry.js";
import type { ClusterIdentity } from "../security/identity.js";
import type { AgentRegistration } from "./agent-registration.js";
import type { AgentStreamIndex } from "./agent-stream-index.js";
import type { AgentStream } from "./agent-stream.js";

/** The hello of a stream's first message; throws the error that refuses the stream. */
export function readHello(message: wire.AgentMessage__Output): Hello {
  if (message.body !== "hello") {
    throw new FlotillaError(
      "invalid_argument",
      `An agent's first message must be hello, not ${showValue(message.body ?? "empty")}`,
    );
  }
  const hello = helloFromWire(message.hello, "hello");
  if (!hello.ok) throw FlotillaError.invalid("hello", hello.problems);
  if (hello.value.protocolVersion !== PROTOCOL_VERSION) {
    throw new FlotillaError(
      "failed_precondition",
      `Protocol version ${String(hello.value.protocolVersion)} is not supported: this hub speaks version ${String(PROTOCOL_VERSION)}`,
    );
  }
  return hello.value;
}

export interface SessionOpeningDeps {
  readonly registry: ClusterRegistry;
  readonly registration: Pick<AgentRegistration, "deniedHello">;
  readonly streams: AgentStreamIndex;
  readonly now: () => number;
  readonly heartbeatIntervalMs: number;
}

/**
 * Opens the session of `stream` from its first message; `identity` is what the stream's
 * certificate says (undefined in plaintext mode, where hello names the cluster).
 */
export async function openSession(
  stream: AgentStream,
  message: wire.AgentMessage__Output,
  identity: Promise<ClusterIdentity | undefined>,
  deps: SessionOpeningDeps,
): Promise<void> {
  const hello = readHello(message);
  const certified = await identity;
  if (certified !== undefined && certified.cluster !== hello.clusterName) {
    throw deps.registration.deniedHello(
      certified,
      hello.clusterName,
      stream.peer(),
    );
  }
  const opened = await deps.registry.connect(
    hello.clusterName,
    hello.agentVersion,
    undefined,
  );
  if (stream.closed()) {
    void deps.registry.disconnect(opened);
    return;
  }
  stream.opened(opened);
  deps.registry.seen(opened, hello.lastAppliedGeneration);
  deps.streams.add(opened, {
    refuse: (error) => {
      stream.refuse(error);
    },
    resync: (reason) => {
      stream.send({ resync: { reason } });
    },
  });
  stream.send({
    welcome: {
      clusterName: opened.cluster,
      protocolVersion: PROTOCOL_VERSION,
      heartbeatIntervalMs: deps.heartbeatIntervalMs,
      hubTimeMs: deps.now(),
    },
  });
  stream.log.debug({ cluster: opened.cluster }, "agent connected");
}
