/**
 * The agent's two identity calls to the hub (agent.proto): `Register` exchanges a bootstrap
 * token for the cluster's identity over TLS without a client certificate (the hub verified with the
 * operator's CA), and `RenewIdentity` gets a new certificate for a new key, authenticated by the
 * current certificate. Both make a fresh key and CSR, and check what the hub answers before anyone
 * stores it (identity.ts `checkIdentity`). One attempt each; the caller retries.
 */
import { FlotillaError, showValue, compact } from "@flotilla/core";
import { credentials, type ChannelOptions } from "@grpc/grpc-js";
import {
  callUnary,
  createAgentServiceClient,
  type wire,
} from "@flotilla/protocol";
import { hubCredentials, type HubTls } from "../hub/transport.js";
import { checkIdentity, type AgentIdentity } from "./agent-identity.js";
import { createKeyAndCsr } from "./csr.js";

/** What both calls need. */
export interface IdentityCallOptions {
  /** The hub's AgentService address, `HOST:PORT`. */
  readonly hub: string;
  readonly clusterName: string;
  readonly channelOptions?: ChannelOptions;
  /** Deadline of the call; default 30000 ms. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** Options of {@link registerCluster}. */
export interface RegisterOptions extends IdentityCallOptions {
  /** PEM CA certificate(s) that verify the hub (`--tls-ca`). */
  readonly hubCa: Buffer;
  /** The bootstrap token's secret; sent once, never stored. */
  readonly token: string;
  readonly agentVersion: string;
}

/** Options of {@link renewClusterIdentity}. */
export interface RenewOptions extends IdentityCallOptions {
  /** The current identity's TLS material: the hub authenticates the renewal by it. */
  readonly tls: HubTls;
}

/** Whether a failed call is worth retrying: the hub was not reached or did not answer in time. */
export function isRetryable(error: FlotillaError): boolean {
  return error.code === "unavailable" || error.code === "deadline_exceeded";
}

/**
 * Registers cluster `clusterName` with a bootstrap token and returns its checked identity. A
 * refusal (expired, revoked or used-up token, a token bound to another cluster) rejects with the
 * hub's code and message; `isRetryable` tells an unreachable hub apart.
 */
export async function registerCluster(
  options: RegisterOptions,
): Promise<AgentIdentity> {
  const { keyPem, csrPem } = await createKeyAndCsr(options.clusterName);
  const client = createAgentServiceClient(
    options.hub,
    credentials.createSsl(options.hubCa),
    options.channelOptions,
  );
  try {
    const response = await callUnary(
      client,
      "register",
      {
        bootstrapToken: options.token,
        clusterName: options.clusterName,
        csrPem,
        agentVersion: options.agentVersion,
      },
      callOptions(options),
    ).catch((error: unknown) => {
      throw withContext(error, "register", options);
    });
    if (response.clusterName !== options.clusterName)
      throw new FlotillaError(
        "internal",
        `Cannot register cluster ${showValue(options.clusterName)}: the hub answered for cluster ${showValue(response.clusterName)}`,
      );
    return identityFromWire(
      response.identity,
      options.clusterName,
      keyPem,
      "register",
    );
  } finally {
    client.close();
  }
}

/** Renews the identity of `clusterName` with a new key; rejects like {@link registerCluster}. */
export async function renewClusterIdentity(
  options: RenewOptions,
): Promise<AgentIdentity> {
  const { keyPem, csrPem } = await createKeyAndCsr(options.clusterName);
  const client = createAgentServiceClient(
    options.hub,
    hubCredentials({ tls: options.tls }),
    options.channelOptions,
  );
  try {
    const response = await callUnary(
      client,
      "renewIdentity",
      { csrPem },
      callOptions(options),
    ).catch((error: unknown) => {
      throw withContext(error, "renew the identity of", options);
    });
    return identityFromWire(
      response.identity,
      options.clusterName,
      keyPem,
      "renew",
    );
  } finally {
    client.close();
  }
}

function callOptions(options: IdentityCallOptions): {
  timeoutMs: number;
  signal?: AbortSignal;
} {
  return {
    timeoutMs: options.timeoutMs ?? 30_000,
    ...compact({ signal: options.signal }),
  };
}

function withContext(
  error: unknown,
  action: string,
  options: IdentityCallOptions,
): FlotillaError {
  const cause = FlotillaError.from(error);
  return new FlotillaError(
    cause.code,
    `Cannot ${action} cluster ${showValue(options.clusterName)} with the hub ${showValue(options.hub)}: ${cause.message}`,
    { cause },
  );
}

/** The identity in a hub's answer, checked against the key it was requested for. */
function identityFromWire(
  identity: wire.ClusterIdentity__Output | null,
  clusterName: string,
  keyPem: string,
  call: "register" | "renew",
): AgentIdentity {
  const where = `the hub's ${call === "register" ? "Register" : "RenewIdentity"} answer`;
  if (identity === null)
    throw new FlotillaError(
      "internal",
      `Cannot use ${where} for cluster ${showValue(clusterName)}: it has no identity`,
    );
  const { nats } = identity;
  const candidate: AgentIdentity = {
    clusterName,
    keyPem,
    certificatePem: identity.clientCertificatePem,
    caPem: identity.caCertificatePem,
    expiresAtMs: 0,
    ...(nats === null
      ? {}
      : {
          nats: {
            servers: nats.servers,
            creds: nats.creds,
            bucket: nats.intentBucket,
            key: nats.intentKey,
          },
        }),
  };
  let validity;
  try {
    validity = checkIdentity(candidate, clusterName, where);
  } catch (error) {
    // The hub sent something unusable: not the caller's input, the hub's fault.
    throw new FlotillaError("internal", FlotillaError.from(error).message, {
      cause: error,
    });
  }
  return { ...candidate, expiresAtMs: validity.notAfterMs };
}
