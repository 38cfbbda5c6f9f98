/**
 * A hub with agent security for the security tests: in-memory adapters, a clock the test moves,
 * the hub's CA in the memory store, and gRPC over TLS through the hub's own server credentials.
 * Clients are real grpc-js clients, with or without a client certificate. With `adminAuth`, admin
 * callers authenticate as in production (security/admin-auth.ts) and `admin` presents an admin
 * certificate of the hub's CA. `restart()` replaces the hub by a new one on the same adapters, as
 * a hub process restarting on the same NATS would.
 */
import {
  createAdminServiceClient,
  createAgentServiceClient,
  type wire,
} from "@flotilla/protocol";
import { credentials, type ChannelCredentials } from "@grpc/grpc-js";
import type { AuditLog } from "../src/audit/audit-log.js";
import { createHub, type Hub, type HubOptions } from "../src/hub.js";
import { createAdminAuth } from "../src/security/admin-auth.js";
import { loadOrCreateCertificateAuthority } from "../src/security/ca-store.js";
import type { CertificateAuthority } from "../src/security/certificate-authority.js";
import { createHubServerCredentials } from "../src/security/server-credentials.js";
import type { StateStore } from "../src/store/state-store.js";
import { memoryHubParts } from "./hub-harness.js";
import { newKeyAndCsr } from "./security-keys.js";
import { compact } from "@flotilla/core";

/** A client certificate and its key (PEM). */
export interface TestIdentity {
  readonly keyPem: string;
  readonly certificatePem: string;
}

export interface SecureTestHubOptions {
  readonly clusterCertificateTtlMs?: number;
  /** Where the hub's clock starts relative to real time (default 0). */
  readonly clockOffsetMs?: number;
  /** Metrics hooks. */
  readonly observer?: HubOptions["observer"];
  /** Admin callers authenticate with certificates of the hub's CA (default: everyone is admin). */
  readonly adminAuth?: boolean;
  /** gRPC address (default `127.0.0.1:0`); `[::]:0` serves IPv4 and IPv6 loopback clients. */
  readonly listen?: string;
  /** How many refused calls the audit log records per peer (HubOptions.refusalAudit). */
  readonly refusalAudit?: HubOptions["refusalAudit"];
  /** Agents' NATS users: who mints them and who revokes them (HubSecurity). */
  readonly nats?: Pick<
    NonNullable<HubOptions["security"]>,
    "natsCredentials" | "natsUsers"
  >;
}

export interface SecureTestHub {
  readonly hub: Hub;
  readonly address: string;
  readonly authority: CertificateAuthority;
  /** AdminService over TLS; with `adminAuth`, as admin `test-admin` (certificate). */
  readonly admin: wire.AdminServiceClient;
  readonly store: StateStore;
  readonly audit: AuditLog;
  readonly clock: { now(): number; advance(ms: number): void };
  /** An AgentService client over TLS; with `identity`, presenting that client certificate. */
  agentClient(identity?: TestIdentity): wire.AgentServiceClient;
  /** An AdminService client over TLS to `host` (default 127.0.0.1), presenting `identity` if given. */
  adminClient(identity?: TestIdentity, host?: string): wire.AdminServiceClient;
  /** Stops the hub and starts a new one on the same store, audit log and CA (a new port). */
  restart(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startSecureTestHub(
  options: SecureTestHubOptions = {},
): Promise<SecureTestHub> {
  // Near real time: TLS checks certificates' validity against the real clock.
  const { clock, store, publisher, audit, ...parts } = await memoryHubParts(
    Date.now() + (options.clockOffsetMs ?? 0),
  );
  const authority = await loadOrCreateCertificateAuthority(store, {
    now: clock.now,
  });
  const serving = await authority.issueServingCertificate(
    ["localhost", "127.0.0.1", "::1"],
    24 * 3_600_000,
  );
  const server = createHubServerCredentials({
    certificatePem: serving.certificatePem,
    privateKeyPem: serving.privateKeyPem,
    caCertificatePem: authority.certificatePem,
  });
  let adminIdentity: TestIdentity | undefined;
  if (options.adminAuth === true) {
    const key = await newKeyAndCsr();
    const issued = await authority.issueClientCertificate(
      key.csrPem,
      { kind: "admin", role: "admin", name: "test-admin" },
      24 * 3_600_000,
    );
    adminIdentity = {
      keyPem: key.keyPem,
      certificatePem: issued.certificatePem,
    };
  }
  const ca = Buffer.from(authority.certificatePem);
  const tls = (identity: TestIdentity | undefined): ChannelCredentials =>
    identity === undefined
      ? credentials.createSsl(ca)
      : credentials.createSsl(
          ca,
          Buffer.from(identity.keyPem),
          Buffer.from(identity.certificatePem),
        );
  const clients: { close(): void }[] = [];

  const startHub = async (): Promise<{ hub: Hub; port: number }> => {
    const hub = createHub(
      parts.options({
        heartbeatIntervalMs: 60_000,
        ...compact({
          observer: options.observer,
          refusalAudit: options.refusalAudit,
        }),
        security: {
          authority,
          ...options.nats,
          ...compact({
            clusterCertificateTtlMs: options.clusterCertificateTtlMs,
          }),
        },
        ...(options.adminAuth === true
          ? {
              adminAuth: (deps, hooks) =>
                createAdminAuth({
                  ...deps,
                  ...hooks,
                  verifyCertificate: authority.verify,
                }),
            }
          : {}),
      }),
    );
    const port = await hub.start(
      options.listen ?? "127.0.0.1:0",
      server.credentials,
    );
    return { hub, port };
  };

  let current = await startHub();
  const adminClient = (
    identity?: TestIdentity,
    host = "127.0.0.1",
  ): wire.AdminServiceClient => {
    const client = createAdminServiceClient(
      `${host}:${String(current.port)}`,
      tls(identity),
    );
    clients.push(client);
    return client;
  };
  let admin = adminClient(adminIdentity);
  return {
    get hub() {
      return current.hub;
    },
    get address() {
      return `127.0.0.1:${String(current.port)}`;
    },
    get admin() {
      return admin;
    },
    authority,
    store,
    audit,
    clock,
    agentClient(identity) {
      const client = createAgentServiceClient(
        `127.0.0.1:${String(current.port)}`,
        tls(identity),
      );
      clients.push(client);
      return client;
    },
    adminClient,
    async restart() {
      await current.hub.stop();
      current = await startHub();
      admin = adminClient(adminIdentity);
    },
    async [Symbol.asyncDispose]() {
      for (const client of clients) client.close();
      await current.hub.stop();
      await audit.stop();
      await publisher.stop();
      await store.stop();
    },
  };
}
