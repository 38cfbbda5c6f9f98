// A hub for the agent's identity tests: AgentService over TLS on 127.0.0.1 that asks for (but does
// not require) a client certificate, like the real hub. Register checks a bootstrap token (uses,
// cluster binding) and signs the agent's CSR with a test CA; RenewIdentity signs a new CSR for the
// cluster named by the verified client certificate; Connect welcomes a hello and records which
// certificate the stream came with. Everything it saw is recorded for assertions.
import { X509Certificate } from "node:crypto";
import {
  experimental,
  Server,
  status,
  type ServerDuplexStream,
  type ServerUnaryCall,
} from "@grpc/grpc-js";
import {
  PROTOCOL_VERSION,
  SERVER_OPTIONS,
  type wire,
} from "@flotilla/protocol";
import { addAgentService } from "@flotilla/protocol/testing";
import type { IssueValidity, TestCa } from "./test-ca.js";

const CLUSTER_URI = "URI:spiffe://flotilla/cluster/";

/** A bootstrap token the fake hub accepts. */
export interface FakeToken {
  readonly secret: string;
  readonly maxUses: number;
  readonly cluster?: string;
  uses: number;
}

/** The verified client certificate of a call: serial and cluster, or undefined without one. */
export interface Peer {
  readonly serial: string;
  readonly cluster: string;
}

/** What the fake hub answers; changeable while it runs. */
export interface FakeIdentityBehaviour {
  /** Validity of the certificates it issues. */
  validity: () => IssueValidity;
  /** How many of the next RenewIdentity calls fail with UNAVAILABLE. */
  failRenewals: number;
  /** NATS credentials to hand out; null: none (NATS without authorization). */
  nats: wire.NatsCredentials | null;
}

function peerOf(
  call:
    ServerUnaryCall<unknown, unknown> | ServerDuplexStream<unknown, unknown>,
  ca: X509Certificate,
): Peer | undefined {
  const raw = call.getAuthContext().sslPeerCertificate?.raw;
  if (raw === undefined) return undefined;
  const certificate = new X509Certificate(raw);
  if (!certificate.checkIssued(ca) || !certificate.verify(ca.publicKey))
    return undefined;
  const uri = (certificate.subjectAltName ?? "")
    .split(",")
    .map((s) => s.trim())
    .find((s) => s.startsWith(CLUSTER_URI));
  if (uri === undefined) return undefined;
  return {
    serial: certificate.serialNumber,
    cluster: uri.slice(CLUSTER_URI.length),
  };
}

/** The fake hub. */
export class FakeIdentityHub implements AsyncDisposable {
  readonly tokens = new Map<string, FakeToken>();
  readonly registrations: wire.RegisterRequest__Output[] = [];
  /** The certificate each RenewIdentity call came with. */
  readonly renewals: (Peer | undefined)[] = [];
  /** The certificate each Connect stream came with, and the hello's cluster. */
  readonly streams: { peer: Peer | undefined; hello: string; open: boolean }[] =
    [];
  readonly behaviour: FakeIdentityBehaviour;
  #server: Server | undefined;
  #port = 0;

  private constructor(
    private readonly ca: TestCa,
    behaviour: FakeIdentityBehaviour,
  ) {
    this.behaviour = behaviour;
  }

  static async start(
    ca: TestCa,
    behaviour: Partial<FakeIdentityBehaviour> = {},
    port = 0,
  ): Promise<FakeIdentityHub> {
    const hub = new FakeIdentityHub(ca, {
      validity: () => ({
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + 3_600_000),
      }),
      failRenewals: 0,
      nats: null,
      ...behaviour,
    });
    await hub.listen(port);
    return hub;
  }

  get port(): number {
    return this.#port;
  }

  get address(): string {
    return `127.0.0.1:${String(this.#port)}`;
  }

  addToken(token: Omit<FakeToken, "uses">): void {
    this.tokens.set(token.secret, { ...token, uses: 0 });
  }

  shutdown(): void {
    this.#server?.forceShutdown();
    this.#server = undefined;
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.shutdown();
    return Promise.resolve();
  }

  async listen(port: number): Promise<void> {
    const server = new Server(SERVER_OPTIONS);
    const caCertificate = new X509Certificate(this.ca.pem);
    addAgentService(server, {
      Register: (call, callback) => {
        const request = call.request;
        this.registrations.push(request);
        const token = this.tokens.get(request.bootstrapToken);
        if (token === undefined || token.uses >= token.maxUses) {
          callback({
            code: status.UNAUTHENTICATED,
            details: "The bootstrap token is not valid (unknown, used up)",
          });
          return;
        }
        if (
          token.cluster !== undefined &&
          token.cluster !== request.clusterName
        ) {
          callback({
            code: status.PERMISSION_DENIED,
            details: `The bootstrap token is bound to cluster "${token.cluster}"`,
          });
          return;
        }
        token.uses++;
        this.issue(request.csrPem, request.clusterName).then(
          (identity) => {
            callback(null, { clusterName: request.clusterName, identity });
          },
          (error: unknown) => {
            callback({ code: status.INVALID_ARGUMENT, details: String(error) });
          },
        );
      },
      RenewIdentity: (call, callback) => {
        const peer = peerOf(call, caCertificate);
        this.renewals.push(peer);
        if (peer === undefined) {
          callback({
            code: status.UNAUTHENTICATED,
            details: "No client certificate",
          });
          return;
        }
        if (this.behaviour.failRenewals > 0) {
          this.behaviour.failRenewals--;
          callback({ code: status.UNAVAILABLE, details: "The hub is busy" });
          return;
        }
        this.issue(call.request.csrPem, peer.cluster).then(
          (identity) => {
            callback(null, { identity });
          },
          (error: unknown) => {
            callback({ code: status.INVALID_ARGUMENT, details: String(error) });
          },
        );
      },
      Connect: (call) => {
        const record = {
          peer: peerOf(call, caCertificate),
          hello: "",
          open: true,
        };
        this.streams.push(record);
        call.on("data", (message: wire.AgentMessage__Output) => {
          if (message.body !== "hello") return;
          record.hello = message.hello?.clusterName ?? "";
          call.write({
            welcome: {
              clusterName: record.hello,
              protocolVersion: PROTOCOL_VERSION,
              heartbeatIntervalMs: 60_000,
              hubTimeMs: Date.now(),
            },
          });
        });
        const ended = (): void => {
          record.open = false;
        };
        call.on("end", () => {
          ended();
          call.end();
        });
        call.on("cancelled", ended);
        call.on("error", ended);
      },
    });
    const server_ = await this.ca.server();
    const material = {
      ca: { caCertificate: Buffer.from(this.ca.pem) },
      identity: {
        certificate: Buffer.from(server_.certificatePem),
        privateKey: Buffer.from(server_.keyPem),
      },
    };
    // Listeners are called later, not inside add…Listener: grpc-js 1.14 adds its own watcher only
    // after adding the listeners, so a synchronous answer would be lost and every TLS connection
    // dropped ("unloaded credentials").
    const provider: experimental.CertificateProvider = {
      addCaCertificateListener: (listener) => {
        queueMicrotask(() => {
          listener(material.ca);
        });
      },
      removeCaCertificateListener: () => undefined,
      addIdentityCertificateListener: (listener) => {
        queueMicrotask(() => {
          listener(material.identity);
        });
      },
      removeIdentityCertificateListener: () => undefined,
    };
    const credentials = experimental.createCertificateProviderServerCredentials(
      provider,
      provider,
      false,
    );
    this.#port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(
        `127.0.0.1:${String(port)}`,
        credentials,
        (error, bound) => {
          if (error === null) resolve(bound);
          else reject(error);
        },
      );
    });
    this.#server = server;
  }

  private async issue(
    csrPem: string,
    cluster: string,
  ): Promise<wire.ClusterIdentity> {
    const certificate = await this.ca.signCsr(
      csrPem,
      cluster,
      this.behaviour.validity(),
    );
    return {
      clientCertificatePem: certificate.toString("pem"),
      caCertificatePem: this.ca.pem,
      certificateExpiresAtMs: certificate.notAfter.getTime(),
      nats: this.behaviour.nats,
    };
  }
}
