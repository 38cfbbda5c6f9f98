/**
 * A hub with agent security for the security tests: in-memory adapters, a clock the test moves,
 * the hub's CA in the memory store, and gRPC over TLS on 127.0.0.1 through the hub's own server
 * credentials. Clients are real grpc-js clients, with or without a client certificate.
 */
import {
  createAdminServiceClient,
  createAgentServiceClient,
  type wire,
} from "@flotilla/protocol";
import { credentials } from "@grpc/grpc-js";
import { createHub, type Hub, type HubObserver } from "../src/hub.js";
import { loadOrCreateCertificateAuthority } from "../src/security/ca-store.js";
import type { CertificateAuthority } from "../src/security/certificate-authority.js";
import { createHubServerCredentials } from "../src/security/server-credentials.js";
import { memoryHubParts } from "./hub-harness.js";
import type { AuditLog } from "../src/audit/audit-log.js";
import type { StateStore } from "../src/store/state-store.js";

export interface SecureTestHub {
  readonly hub: Hub;
  readonly address: string;
  readonly authority: CertificateAuthority;
  readonly admin: wire.AdminServiceClient;
  readonly store: StateStore;
  readonly audit: AuditLog;
  readonly clock: { now(): number; advance(ms: number): void };
  /** An AgentService client over TLS; with `identity`, presenting that client certificate. */
  agentClient(identity?: {
    keyPem: string;
    certificatePem: string;
  }): wire.AgentServiceClient;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startSecureTestHub(
  options: {
    clusterCertificateTtlMs?: number;
    /** Where the hub's clock starts relative to real time (default 0). */
    clockOffsetMs?: number;
    /** Metrics hooks. */
    observer?: HubObserver;
  } = {},
): Promise<SecureTestHub> {
  // Near real time: TLS checks certificates' validity against the real clock.
  const { clock, store, publisher, audit, ...parts } = await memoryHubParts(
    Date.now() + (options.clockOffsetMs ?? 0),
  );
  const authority = await loadOrCreateCertificateAuthority(store, {
    now: clock.now,
  });
  const serving = await authority.issueServingCertificate(
    ["localhost", "127.0.0.1"],
    24 * 3_600_000,
  );
  const hub = createHub(
    parts.options({
      heartbeatIntervalMs: 60_000,
      ...(options.observer === undefined ? {} : { observer: options.observer }),
      security: {
        authority,
        ...(options.clusterCertificateTtlMs === undefined
          ? {}
          : { clusterCertificateTtlMs: options.clusterCertificateTtlMs }),
      },
    }),
  );
  const server = createHubServerCredentials({
    certificatePem: serving.certificatePem,
    privateKeyPem: serving.privateKeyPem,
    caCertificatePem: authority.certificatePem,
  });
  const port = await hub.start("127.0.0.1:0", server.credentials);
  const address = `127.0.0.1:${String(port)}`;
  const ca = Buffer.from(authority.certificatePem);
  const clients: { close(): void }[] = [];
  const admin = createAdminServiceClient(address, credentials.createSsl(ca));
  clients.push(admin);
  return {
    hub,
    address,
    authority,
    admin,
    store,
    audit,
    clock,
    agentClient(identity) {
      const client = createAgentServiceClient(
        address,
        identity === undefined
          ? credentials.createSsl(ca)
          : credentials.createSsl(
              ca,
              Buffer.from(identity.keyPem),
              Buffer.from(identity.certificatePem),
            ),
      );
      clients.push(client);
      return client;
    },
    async [Symbol.asyncDispose]() {
      for (const client of clients) client.close();
      await hub.stop();
      await audit.stop();
      await publisher.stop();
      await store.stop();
    },
  };
}
