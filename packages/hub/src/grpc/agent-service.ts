/**
 * AgentService: one bidirectional stream per agent (docs/agent-protocol.md). The stream's first
 * message must be `hello`; the hub then opens a session in the cluster registry and answers
 * `welcome`. Every later message is validated before it touches any state; an invalid one ends
 * this stream (StreamError, then the same gRPC status) and nothing else: other agents' sessions
 * are independent.
 *
 * With TLS the stream's client certificate names its cluster (agent-registration.ts):
 * no valid certificate of a registered cluster is UNAUTHENTICATED at once, and a hello naming
 * another cluster is PERMISSION_DENIED. In plaintext development mode hello names the cluster.
 *
 * Status reports count only for the cluster's current intent generation (revision-correct
 * readiness); the `ack` says whether a report counted. Counted upgrade reports go to the run
 * manager, counted bundle reports to the bundle manager.
 */
import { FlotillaError, showValue } from "@flotilla/core";
import {
  clusterFactsFromWire,
  loadProtocol,
  MAX_AGENT_MESSAGE_BYTES,
  heartbeatFromWire,
  helloFromWire,
  maintenanceFromWire,
  PROTOCOL_VERSION,
  statusReportFromWire,
  streamErrorToWire,
  toGrpcStatus,
  type StatusReport,
  type wire,
} from "@flotilla/protocol";
import {
  status as grpcStatus,
  type ServerDuplexStream,
  type ServiceDefinition,
} from "@grpc/grpc-js";
import type { Logger } from "pino";
import type {
  ClusterRegistry,
  SessionHandle,
} from "../clusters/cluster-registry.js";
import type { IntentWriter } from "../intents/intent-writer.js";
import type { AgentRegistration } from "./agent-registration.js";

/** Marks a message too large to decode: the stream is refused with its size (see below). */
const OVERSIZED = Symbol("oversized");

interface Oversized {
  readonly [OVERSIZED]: number;
}

/**
 * AgentService's definition with a size check before decoding: the server's message limit is the
 * admin API's (MAX_REQUEST_BYTES), but an agent message may be at most MAX_AGENT_MESSAGE_BYTES.
 * A larger one is not decoded; the stream is refused with INVALID_ARGUMENT naming its size.
 */
export function agentServiceDefinition(): ServiceDefinition {
  const base = loadProtocol().agentService;
  const connect = base.Connect;
  const decode = connect.requestDeserialize;
  return {
    ...base,
    Connect: {
      ...connect,
      requestDeserialize: (bytes: Buffer) =>
        bytes.byteLength > MAX_AGENT_MESSAGE_BYTES
          ? ({ [OVERSIZED]: bytes.byteLength } satisfies Oversized)
          : decode(bytes),
    },
  };
}

type AgentStream = ServerDuplexStream<
  wire.AgentMessage__Output,
  wire.HubMessage
>;

/** Where counted reports go. */
export interface ReportSinks {
  readonly upgrade: (
    cluster: string,
    run: string,
    report: StatusReport,
  ) => void;
  readonly bundle: (cluster: string, report: StatusReport) => void;
}

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
  const open = new Set<AgentStream>();
  const byCluster = new Map<
    string,
    {
      session: SessionHandle;
      refuse: (e: FlotillaError) => void;
      resync: (reason: string) => void;
    }
  >();

  // An agent back from Unreachable may have reported into the void (reports sent while its
  // stream was stuck): ask it for its current status of everything.
  deps.registry.onChange((change) => {
    if (change.type !== "reachable") return;
    byCluster.get(change.cluster)?.resync("back from unreachable");
  });

  deps.registry.onSessionRevoked((session, why) => {
    const live = byCluster.get(session.cluster);
    if (live?.session.id === session.id) {
      live.refuse(
        why === "removed"
          ? new FlotillaError(
              "permission_denied",
              `Cluster ${showValue(session.cluster)} was removed from the fleet by an operator`,
            )
          : new FlotillaError(
              "unavailable",
              `Cluster ${showValue(session.cluster)} was silent past its heartbeat timeout and another session took over`,
            ),
      );
    }
  });

  const connect = (call: AgentStream): void => {
    open.add(call);
    let session: SessionHandle | undefined;
    let closed = false;
    let chain: Promise<void> = Promise.resolve();
    const log = deps.logger.child({ peer: safePeer(call) });

    const finish = (): void => {
      if (closed) return;
      closed = true;
      clearTimeout(helloTimer);
      open.delete(call);
      const ended = session;
      if (ended !== undefined) {
        if (byCluster.get(ended.cluster)?.session.id === ended.id) {
          byCluster.delete(ended.cluster);
        }
        void deps.registry.disconnect(ended);
      }
    };

    const refuse = (error: FlotillaError): void => {
      if (closed) return;
      deps.onSessionRefused?.(error.code);
      log.info(
        { cluster: session?.cluster, code: error.code, err: error.message },
        "agent stream refused",
      );
      try {
        call.write({ error: streamErrorToWire(error) });
        call.emit("error", toGrpcStatus(error));
      } catch {
        // The stream is already gone.
      }
      finish();
    };

    const helloTimer = setTimeout(() => {
      if (session === undefined) {
        refuse(
          new FlotillaError(
            "invalid_argument",
            `No hello within ${String(deps.helloTimeoutMs ?? 10_000)} ms: an agent's first message must be hello`,
          ),
        );
      }
    }, deps.helloTimeoutMs ?? 10_000);

    // The certificate is checked as the stream opens: without one it ends before any hello.
    const authenticated = deps.registration.authenticateStream(call);
    authenticated.catch((error: unknown) => {
      refuse(FlotillaError.from(error));
    });

    const invalid = (
      what: string,
      problems: Parameters<typeof FlotillaError.invalid>[1],
    ): never => {
      throw FlotillaError.invalid(what, problems);
    };

    const handle = async (
      message: wire.AgentMessage__Output,
    ): Promise<void> => {
      const oversized = (message as Partial<Oversized>)[OVERSIZED];
      if (oversized !== undefined) {
        throw new FlotillaError(
          "invalid_argument",
          `An agent message of ${String(oversized)} bytes is larger than the ${String(MAX_AGENT_MESSAGE_BYTES)} allowed`,
        );
      }
      if (session === undefined) {
        if (message.body !== "hello") {
          throw new FlotillaError(
            "invalid_argument",
            `An agent's first message must be hello, not ${showValue(message.body ?? "empty")}`,
          );
        }
        const hello = helloFromWire(message.hello, "hello");
        if (!hello.ok) return invalid("hello", hello.problems);
        if (hello.value.protocolVersion !== PROTOCOL_VERSION) {
          throw new FlotillaError(
            "failed_precondition",
            `Protocol version ${String(hello.value.protocolVersion)} is not supported: this hub speaks version ${String(PROTOCOL_VERSION)}`,
          );
        }
        const identity = await authenticated;
        if (
          identity !== undefined &&
          identity.cluster !== hello.value.clusterName
        ) {
          throw deps.registration.deniedHello(
            identity,
            hello.value.clusterName,
            safePeer(call),
          );
        }
        const opened = await deps.registry.connect(
          hello.value.clusterName,
          hello.value.agentVersion,
          undefined,
        );
        if (closed) {
          void deps.registry.disconnect(opened);
          return;
        }
        session = opened;
        deps.registry.seen(opened, hello.value.lastAppliedGeneration);
        byCluster.set(opened.cluster, {
          session: opened,
          refuse,
          resync: (reason) => {
            if (!closed) call.write({ resync: { reason } });
          },
        });
        clearTimeout(helloTimer);
        call.write({
          welcome: {
            clusterName: opened.cluster,
            protocolVersion: PROTOCOL_VERSION,
            heartbeatIntervalMs: deps.heartbeatIntervalMs,
            hubTimeMs: deps.now(),
          },
        });
        log.debug({ cluster: opened.cluster }, "agent connected");
        return;
      }
      const current = session;
      if (!deps.registry.isCurrent(current)) {
        throw new FlotillaError(
          "failed_precondition",
          "This session was replaced",
        );
      }
      switch (message.body) {
        case "hello":
          throw new FlotillaError(
            "invalid_argument",
            "hello was already sent on this stream",
          );
        case "facts": {
          const facts = clusterFactsFromWire(message.facts, "facts");
          if (!facts.ok) return invalid("facts", facts.problems);
          await deps.registry.updateFacts(current, facts.value);
          return;
        }
        case "heartbeat": {
          const beat = heartbeatFromWire(message.heartbeat, "heartbeat");
          if (!beat.ok) return invalid("heartbeat", beat.problems);
          deps.registry.seen(current, beat.value.lastAppliedGeneration);
          return;
        }
        case "windowsChanged": {
          const raw = message.windowsChanged?.maintenance;
          if (raw === null || raw === undefined) {
            await deps.registry.updateMaintenance(current, undefined);
            return;
          }
          const maintenance = maintenanceFromWire(
            raw,
            "windowsChanged.maintenance",
          );
          if (!maintenance.ok) return invalid("windows", maintenance.problems);
          await deps.registry.updateMaintenance(current, maintenance.value);
          return;
        }
        case "status": {
          const report = statusReportFromWire(message.status, "status");
          if (!report.ok) return invalid("status report", report.problems);
          deps.registry.seen(current);
          await onReport(current.cluster, report.value);
          return;
        }
        case undefined:
          throw new FlotillaError("invalid_argument", "Empty agent message");
      }
    };

    const onReport = async (
      cluster: string,
      report: StatusReport,
    ): Promise<void> => {
      const { intent } =
        deps.intents.peek(cluster) ?? (await deps.intents.current(cluster));
      let reason = "";
      if (report.generation !== intent.generation) {
        reason = `generation ${String(report.generation)} is not the current intent generation ${String(intent.generation)}`;
      } else if (report.subject.kind === "upgrade") {
        if (intent.upgrade?.run !== report.subject.upgradeId) {
          reason = `upgrade ${showValue(report.subject.upgradeId)} is not in the current intent`;
        }
      } else {
        const bundle = intent.bundles[report.subject.bundle];
        if (bundle?.revision !== report.subject.revision) {
          reason = `bundle ${showValue(report.subject.bundle)} revision ${showValue(report.subject.revision)} is not in the current intent`;
        }
      }
      const accepted = reason === "";
      deps.onReport?.(report.phase, accepted);
      if (!closed) {
        call.write({
          ack: {
            sequence: report.sequence,
            generation: report.generation,
            accepted,
            reason,
          },
        });
      }
      if (!accepted) return;
      if (report.subject.kind === "upgrade") {
        deps.sinks.upgrade(cluster, report.subject.upgradeId, report);
      } else deps.sinks.bundle(cluster, report);
    };

    call.on("data", (message: wire.AgentMessage__Output) => {
      chain = chain.then(async () => {
        if (closed) return;
        try {
          await handle(message);
        } catch (error) {
          const flotilla =
            error instanceof FlotillaError
              ? error
              : new FlotillaError(
                  "internal",
                  "The hub could not process the message",
                  { cause: error },
                );
          if (flotilla.code === "internal")
            log.error({ err: error }, "agent message failed");
          refuse(flotilla);
        }
      });
    });
    call.on("end", () => {
      chain = chain.then(() => {
        if (!closed) {
          try {
            call.end();
          } catch {
            // already ended
          }
        }
        finish();
      });
    });
    call.on("error", () => {
      finish();
    });
    call.on("cancelled", () => {
      finish();
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

function safePeer(call: AgentStream): string {
  try {
    return call.getPeer();
  } catch {
    return "unknown";
  }
}
