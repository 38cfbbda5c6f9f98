// A hub for the agent's tests: AgentService on a real grpc-js server on 127.0.0.1, with just the
// session behaviour of docs/agent-protocol.md (welcome after hello, an ack for every status,
// resync and errors on request). It records everything each session sent. hub and agent never
// import each other, so this lives in the agent's tests.
import {
  Server,
  ServerCredentials,
  status,
  type ServerDuplexStream,
} from "@grpc/grpc-js";
import type { FlotillaError } from "@flotilla/core";
import {
  helloFromWire,
  heartbeatFromWire,
  PROTOCOL_VERSION,
  SERVER_OPTIONS,
  statusReportFromWire,
  streamErrorToWire,
  toGrpcStatus,
  type StatusReport,
  type wire,
  type Hello,
} from "@flotilla/protocol";
import { addAgentService, type Heartbeat } from "@flotilla/protocol/testing";

/** What the fake hub answers; changeable while it runs. */
export interface FakeHubBehaviour {
  heartbeatIntervalMs: number;
  /** false: statuses are recorded but never acked. */
  ack: boolean;
  /** Refuse a hello with this error (StreamError, then the same gRPC status). */
  refuse?: (hello: Hello) => FlotillaError | undefined;
}

/** One Connect call as the fake hub saw it. */
export class FakeSession {
  readonly messages: wire.AgentMessage__Output[] = [];
  /** The client's address and port: one TCP connection per distinct peer. */
  readonly peer: string;
  ended = false;
  constructor(
    readonly call: ServerDuplexStream<
      wire.AgentMessage__Output,
      wire.HubMessage
    >,
  ) {
    this.peer = call.getPeer();
  }

  get hello(): Hello | undefined {
    const first = this.messages[0];
    if (first?.body !== "hello") return undefined;
    const parsed = helloFromWire(first.hello);
    return parsed.ok ? parsed.value : undefined;
  }

  get clusterName(): string | undefined {
    return this.hello?.clusterName;
  }

  bodies(): string[] {
    return this.messages.map((m) => m.body ?? "none");
  }

  statuses(): StatusReport[] {
    return this.messages.flatMap((m) => {
      if (m.body !== "status") return [];
      const parsed = statusReportFromWire(m.status);
      if (!parsed.ok)
        throw new Error(`invalid status: ${JSON.stringify(parsed.problems)}`);
      return [parsed.value];
    });
  }

  heartbeats(): Heartbeat[] {
    return this.messages.flatMap((m) => {
      if (m.body !== "heartbeat") return [];
      const parsed = heartbeatFromWire(m.heartbeat);
      return parsed.ok ? [parsed.value] : [];
    });
  }

  send(message: wire.HubMessage): void {
    this.call.write(message);
  }
}

/** The fake hub; restartable on the same port. */
export class FakeHub implements AsyncDisposable {
  readonly sessions: FakeSession[] = [];
  readonly behaviour: FakeHubBehaviour;
  readonly #credentials: ServerCredentials;
  #server: Server | undefined;
  #port = 0;

  private constructor(
    behaviour: FakeHubBehaviour,
    credentials: ServerCredentials,
  ) {
    this.behaviour = behaviour;
    this.#credentials = credentials;
  }

  static async start(
    behaviour: Partial<FakeHubBehaviour> = {},
    credentials: ServerCredentials = ServerCredentials.createInsecure(),
  ): Promise<FakeHub> {
    const hub = new FakeHub(
      { heartbeatIntervalMs: 10_000, ack: true, ...behaviour },
      credentials,
    );
    await hub.#listen(0);
    return hub;
  }

  get port(): number {
    return this.#port;
  }

  get address(): string {
    return `127.0.0.1:${String(this.#port)}`;
  }

  /** Sessions whose hello named `cluster`, oldest first. */
  sessionsOf(cluster: string): FakeSession[] {
    return this.sessions.filter((s) => s.clusterName === cluster);
  }

  /** The newest session of `cluster` that is still open. */
  live(cluster: string): FakeSession | undefined {
    return this.sessionsOf(cluster).findLast((s) => !s.ended);
  }

  /** Every status received from `cluster`, over all its sessions. */
  statusesOf(cluster: string): StatusReport[] {
    return this.sessionsOf(cluster).flatMap((s) => s.statuses());
  }

  /** Stops the server at once: every stream is cut. */
  shutdown(): void {
    this.#server?.forceShutdown();
    this.#server = undefined;
    for (const s of this.sessions) s.ended = true;
  }

  /** Listens again on the same port. */
  async restart(): Promise<void> {
    this.shutdown();
    await this.#listen(this.#port);
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.shutdown();
    return Promise.resolve();
  }

  async #listen(port: number): Promise<void> {
    const server = new Server(SERVER_OPTIONS);
    addAgentService(server, {
      Connect: (call) => {
        this.#serve(call);
      },
      Register: (_call, callback) => {
        callback({ code: status.UNIMPLEMENTED, details: "not in the fake" });
      },
      RenewIdentity: (_call, callback) => {
        callback({ code: status.UNIMPLEMENTED, details: "not in the fake" });
      },
    });
    this.#port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(
        `127.0.0.1:${String(port)}`,
        this.#credentials,
        (error, bound) => {
          if (error === null) resolve(bound);
          else reject(error);
        },
      );
    });
    this.#server = server;
  }

  #serve(
    call: ServerDuplexStream<wire.AgentMessage__Output, wire.HubMessage>,
  ): void {
    const session = new FakeSession(call);
    this.sessions.push(session);
    call.on("data", (message: wire.AgentMessage__Output) => {
      if (session.ended) return;
      session.messages.push(message);
      if (message.body === "hello") {
        const hello = session.hello;
        const refusal =
          hello === undefined ? undefined : this.behaviour.refuse?.(hello);
        if (refusal !== undefined) {
          session.ended = true;
          call.write({ error: streamErrorToWire(refusal) });
          call.emit("error", toGrpcStatus(refusal));
          return;
        }
        call.write({
          welcome: {
            clusterName: hello?.clusterName ?? "",
            protocolVersion: PROTOCOL_VERSION,
            heartbeatIntervalMs: this.behaviour.heartbeatIntervalMs,
            hubTimeMs: Date.now(),
          },
        });
      } else if (message.body === "status" && this.behaviour.ack) {
        const report = message.status;
        call.write({
          ack: {
            sequence: report?.sequence ?? 0,
            generation: report?.generation ?? 0,
            accepted: true,
            reason: "",
          },
        });
      }
    });
    call.on("end", () => {
      session.ended = true;
      call.end();
    });
    call.on("cancelled", () => {
      session.ended = true;
    });
    call.on("error", () => {
      session.ended = true;
    });
  }
}
