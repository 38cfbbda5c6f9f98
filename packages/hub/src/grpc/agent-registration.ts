/**
 * How an agent gets and keeps its identity (docs/security.md), and how its session stream proves
 * it:
 *
 * * Register (no client certificate): a bootstrap token is checked, the cluster name validated
 *   (an intent key), the CSR's signature verified; a cluster already registered needs a token
 *   bound to its name. Only then is a use of the token counted, the certificate issued and the
 *   identity stored, so a refused request changes nothing.
 * * RenewIdentity: the caller's valid certificate names the cluster (never the message); the new
 *   certificate is added and the previous one stays valid until it expires.
 * * Connect: the stream's certificate must name a registered cluster holding it, and hello must
 *   name that same cluster.
 *
 * Every Register and RenewIdentity, and every refused stream, goes to the audit log
 * (agent-audit.ts: who is named how, and the limit on refusals per peer).
 */
import {
  FlotillaError,
  showValue,
  type FlotillaErrorCode,
} from "@flotilla/core";
import { intentKeyProblem, toGrpcStatus, type wire } from "@flotilla/protocol";
import type { sendUnaryData, ServerUnaryCall } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { BootstrapTokens } from "../security/bootstrap-tokens.js";
import type { CertificateAuthority } from "../security/certificate-authority.js";
import type { ClusterIdentities } from "../security/cluster-identities.js";
import type { ClusterIdentity } from "../security/identity.js";
import type {
  AgentNatsCredentials,
  AgentNatsCredentialsIssuer,
} from "../security/agent-nats-credentials.js";
import {
  AGENT_METHOD_PREFIX,
  createAgentAudit,
  type AgentAuditDeps,
} from "./agent-audit.js";
import { audited, callContext } from "./unary.js";

/** A cluster certificate's default lifetime: 30 days. */
export const DEFAULT_CLUSTER_CERT_TTL_MS = 30 * 24 * 3_600_000;

const MAX_AGENT_VERSION_LENGTH = 128;

/** What the hub needs to register and authenticate agents (absent: plaintext development mode). */
export interface AgentSecurity {
  readonly authority: CertificateAuthority;
  readonly tokens: BootstrapTokens;
  readonly identities: ClusterIdentities;
  /** Absent: registration answers without NATS credentials. */
  readonly natsCredentials?: AgentNatsCredentialsIssuer;
  readonly clusterCertificateTtlMs: number;
}

export interface AgentRegistrationDeps extends AgentAuditDeps {
  readonly security: AgentSecurity | undefined;
  readonly logger: Logger;
  /** Called once a cluster is registered (the registry creates its record). */
  readonly onRegistered?: (
    cluster: string,
    agentVersion: string,
  ) => Promise<void>;
  /** Called with every Register and RenewIdentity answer (metrics): `ok` or the error's code. */
  readonly onAnswered?: (
    method: "Register" | "RenewIdentity",
    code: FlotillaErrorCode | "ok",
  ) => void;
}

type Call = Pick<
  ServerUnaryCall<unknown, unknown>,
  "metadata" | "getPeer" | "on" | "getAuthContext"
>;

function peerOf(call: Pick<Call, "getPeer">): string {
  try {
    return call.getPeer();
  } catch {
    return "unknown";
  }
}

/** What the agent is sent of its NATS credentials (the user's public key stays with the hub). */
function natsToWire(nats: AgentNatsCredentials): wire.NatsCredentials {
  return {
    servers: [...nats.servers],
    creds: nats.creds,
    intentBucket: nats.intentBucket,
    intentKey: nats.intentKey,
  };
}

function needsTls(method: string): FlotillaError {
  return new FlotillaError(
    "failed_precondition",
    `${method} needs TLS: this hub serves plaintext (--insecure-plaintext), where agents are not registered`,
  );
}

/** The cluster identity of the call's client certificate; `unauthenticated` without one. */
export async function clusterOfCall(
  security: AgentSecurity,
  call: Pick<Call, "getAuthContext">,
): Promise<ClusterIdentity> {
  let raw: Buffer | undefined;
  try {
    raw = call.getAuthContext().sslPeerCertificate?.raw;
  } catch {
    raw = undefined;
  }
  if (raw === undefined) {
    throw new FlotillaError(
      "unauthenticated",
      "No client certificate: agents authenticate with the certificate Register issued",
    );
  }
  const identity = security.authority.verify(raw);
  if (identity.kind !== "cluster") {
    throw new FlotillaError(
      "unauthenticated",
      `The client certificate names admin ${showValue(identity.name)}, not a cluster`,
    );
  }
  if (!(await security.identities.holds(identity.cluster, identity.serial))) {
    throw new FlotillaError(
      "unauthenticated",
      `Cluster ${showValue(identity.cluster)} is not registered, or certificate ${showValue(identity.serial)} is no longer honoured (removed, or registered again since)`,
    );
  }
  return identity;
}

/** Register and RenewIdentity, and the check of Connect streams. */
export interface AgentRegistration {
  readonly handlers: Pick<
    wire.AgentServiceHandlers,
    "Register" | "RenewIdentity"
  >;
  /**
   * The cluster a Connect stream may speak for, or undefined in plaintext mode (hello names it).
   * Refusals are audited and thrown (`unauthenticated`).
   */
  authenticateStream(
    call: Pick<Call, "getPeer" | "getAuthContext">,
  ): Promise<ClusterIdentity | undefined>;
  /** Audits a stream whose hello named another cluster than its certificate; returns the error. */
  deniedHello(
    identity: ClusterIdentity,
    claimed: string,
    peer: string,
  ): FlotillaError;
}

export function createAgentRegistration(
  deps: AgentRegistrationDeps,
): AgentRegistration {
  const { security } = deps;

  const audit = createAgentAudit(deps);

  /** Answers a unary call; an unexpected error is logged here and is "Internal error" on the wire. */
  const reply = <Res>(
    method: "Register" | "RenewIdentity",
    result: Promise<Res>,
    callback: sendUnaryData<Res>,
  ): void => {
    result.then(
      (response) => {
        deps.onAnswered?.(method, "ok");
        callback(null, response);
      },
      (error: unknown) => {
        const { code } = FlotillaError.from(error);
        deps.onAnswered?.(method, code);
        if (code === "internal") {
          deps.logger.error({ err: error, method }, "agent call failed");
        }
        callback(toGrpcStatus(error));
      },
    );
  };

  const register = async (
    request: wire.RegisterRequest__Output,
  ): Promise<wire.RegisterResponse> => {
    if (security === undefined) throw needsTls("Register");
    const name = request.clusterName;
    const nameProblem = intentKeyProblem(name);
    if (nameProblem !== undefined) {
      throw FlotillaError.invalid("registration", [
        { path: "clusterName", message: nameProblem, value: name },
      ]);
    }
    if (request.agentVersion.length > MAX_AGENT_VERSION_LENGTH) {
      throw FlotillaError.invalid("registration", [
        {
          path: "agentVersion",
          message: `must be at most ${String(MAX_AGENT_VERSION_LENGTH)} characters`,
        },
      ]);
    }
    const token = await security.tokens.check(request.bootstrapToken, name);
    const existing = await security.identities.get(name);
    if (existing !== undefined && token.clusterName !== name) {
      throw new FlotillaError(
        "already_exists",
        `Cluster ${showValue(name)} is already registered: registering it again needs a bootstrap token bound to its name (flotilla token create --cluster ${name})`,
      );
    }
    // Validates the CSR (signature included) before anything is counted or stored.
    const issued = await security.authority.issueClientCertificate(
      request.csrPem,
      { kind: "cluster", cluster: name },
      security.clusterCertificateTtlMs,
    );
    const nats = await security.natsCredentials?.issue(
      name,
      issued.expiresAtMs,
    );
    await security.tokens.redeem(request.bootstrapToken, name);
    await security.identities.register(
      name,
      {
        serial: issued.serial,
        issuedAtMs: deps.now(),
        expiresAtMs: issued.expiresAtMs,
        ...(nats === undefined ? {} : { natsUser: nats.userPublicKey }),
      },
      existing !== undefined,
    );
    await deps.onRegistered?.(name, request.agentVersion);
    deps.logger.info(
      { cluster: name, serial: issued.serial, tokenId: token.id },
      "cluster registered",
    );
    return {
      clusterName: name,
      identity: {
        clientCertificatePem: issued.certificatePem,
        caCertificatePem: security.authority.certificatePem,
        certificateExpiresAtMs: issued.expiresAtMs,
        ...(nats === undefined ? {} : { nats: natsToWire(nats) }),
      },
    };
  };

  const renew = async (
    request: wire.RenewIdentityRequest__Output,
    identity: ClusterIdentity,
  ): Promise<wire.RenewIdentityResponse> => {
    if (security === undefined) throw needsTls("RenewIdentity");
    const cluster = identity.cluster;
    const issued = await security.authority.issueClientCertificate(
      request.csrPem,
      { kind: "cluster", cluster },
      security.clusterCertificateTtlMs,
    );
    const nats = await security.natsCredentials?.issue(
      cluster,
      issued.expiresAtMs,
    );
    await security.identities.renew(cluster, {
      serial: issued.serial,
      issuedAtMs: deps.now(),
      expiresAtMs: issued.expiresAtMs,
      ...(nats === undefined ? {} : { natsUser: nats.userPublicKey }),
    });
    deps.logger.info(
      {
        cluster,
        serial: issued.serial,
        previous: identity.serial,
      },
      "cluster identity renewed",
    );
    return {
      identity: {
        clientCertificatePem: issued.certificatePem,
        caCertificatePem: security.authority.certificatePem,
        certificateExpiresAtMs: issued.expiresAtMs,
        ...(nats === undefined ? {} : { nats: natsToWire(nats) }),
      },
    };
  };

  return {
    handlers: {
      Register: (call, callback) => {
        const request = call.request;
        const answer = async (): Promise<wire.RegisterResponse> => {
          let response: wire.RegisterResponse;
          try {
            response = await register(request);
          } catch (error) {
            // Even with a good token the name is only claimed (an unbound token allows any).
            await audit.refused(
              "Register",
              undefined,
              peerOf(call),
              request.clusterName,
              FlotillaError.from(error),
            );
            throw error;
          }
          const name = request.clusterName;
          await audit.succeeded("Register", name);
          return response;
        };
        reply("Register", answer(), callback);
      },

      RenewIdentity: (call, callback) => {
        const answer = async (): Promise<wire.RenewIdentityResponse> => {
          if (security === undefined) throw needsTls("RenewIdentity");
          let identity: ClusterIdentity;
          try {
            identity = await clusterOfCall(security, call);
          } catch (error) {
            await audit.refused(
              "RenewIdentity",
              undefined,
              peerOf(call),
              "",
              FlotillaError.from(error),
            );
            throw error;
          }
          const handler = audited(
            deps,
            {
              method: `${AGENT_METHOD_PREFIX}RenewIdentity`,
              targetKind: "cluster",
              targetName: () => identity.cluster,
            },
            (request: wire.RenewIdentityRequest__Output) =>
              renew(request, identity),
          );
          return handler(call.request, {
            ...callContext(call),
            actor: `cluster:${identity.cluster}`,
            role: "agent",
          });
        };
        reply("RenewIdentity", answer(), callback);
      },
    },

    async authenticateStream(call) {
      if (security === undefined) return undefined;
      try {
        return await clusterOfCall(security, call);
      } catch (error) {
        const refusal = FlotillaError.from(error);
        await audit.refused("Connect", undefined, peerOf(call), "", refusal);
        throw refusal;
      }
    },

    deniedHello(identity, claimed, peer) {
      const error = new FlotillaError(
        "permission_denied",
        `This stream's certificate is cluster ${showValue(identity.cluster)}'s; it cannot speak for cluster ${showValue(claimed)}`,
      );
      deps.logger.warn(
        { cluster: identity.cluster, claimed, peer },
        "agent hello named another cluster",
      );
      void audit.refused("Connect", identity.cluster, peer, claimed, error);
      return error;
    },
  };
}
