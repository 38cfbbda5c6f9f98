/**
 * A whole hub in the test's process as main.ts builds it: JetStream state store, intent publisher,
 * audit log and object reader on a real nats-server, the metrics observer, and AdminService over
 * real gRPC on 127.0.0.1 (plaintext, every caller admin). Its log lines are captured, parsed, for
 * the test to read; its clock is the test's.
 */
import { randomBytes, randomUUID } from "node:crypto";
import {
  callUnary,
  createAdminServiceClient,
  DEFAULT_INTENTS_PREFIX,
  type wire,
} from "@flotilla/protocol";
import { jetstream } from "@nats-io/jetstream";
import { credentials, ServerCredentials } from "@grpc/grpc-js";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { NatsServer } from "@flotilla/testkit";
import { auditHandlers } from "../src/audit/admin-audit.js";
import type { AuditLog } from "../src/audit/audit-log.js";
import { createJetStreamAuditLog } from "../src/audit/jetstream-audit-log.js";
import { createBundleService } from "../src/bundles/bundle-service.js";
import type { ContentGcOptions } from "../src/bundles/content-collector.js";
import { createJetStreamObjectReader } from "../src/bundles/object-reader.js";
import { createHub, type Hub, type HubReplication } from "../src/hub.js";
import { createJetStreamLeaseBucket } from "../src/leases/jetstream-lease-bucket.js";
import { createRunForwarding } from "../src/leases/run-forwarding.js";
import { createPresence } from "../src/leases/presence.js";
import { systemClock, type Clock } from "@flotilla/node";
import type { IntentPublisher } from "../src/intents/intent-publisher.js";
import { createJetStreamIntentPublisher } from "../src/intents/jetstream-intent-publisher.js";
import { createHubMetrics, type HubMetrics } from "../src/metrics/metrics.js";
import {
  hubObserverOf,
  replicationObserverOf,
} from "../src/metrics/metrics-observer.js";
import { contentKeysOfSecret } from "../src/security/content-keys.js";
import { createJetStreamStore } from "../src/store/jetstream-store.js";
import { DEFAULT_BUCKET_PREFIX } from "../src/store/keys.js";
import { hubStreams } from "../src/jetstream/hub-streams.js";
import { readStreamHealth } from "../src/jetstream/stream-health.js";
import type { StateStore } from "../src/store/state-store.js";
import {
  capturedLogger,
  metricSample,
  type LogLine,
} from "./captured-logger.js";
import { compact } from "@flotilla/core";

/** Options of {@link startJetStreamHub}. */
export interface JetStreamHubOptions {
  /** The audit stream's size limit (its 1 GiB default does not fit a small test store). */
  readonly auditMaxBytes?: number;
  /** The hub's clock; default Date.now. */
  readonly now?: () => number;
  /** How bundle content is collected; default the hub's defaults. */
  readonly contentGc?: ContentGcOptions;
  /** Run as one of several replicas on this NATS (leases, forwarding), named `id`. */
  readonly replica?: { readonly id: string; readonly leaseTtlMs: number };
  /** The secret bundle content is sealed with (replicas share one); default a random one. */
  readonly contentSecret?: Buffer;
  /** The clock of leases and forwarding; default the system clock. */
  readonly clock?: Clock;
}

export interface JetStreamHub extends AsyncDisposable {
  readonly hub: Hub;
  /** The gRPC address, `127.0.0.1:PORT`. */
  readonly address: string;
  readonly admin: wire.AdminServiceClient;
  /** The hub's own connection (tests may use it to look at or change NATS). */
  readonly nc: NatsConnection;
  readonly store: StateStore;
  readonly publisher: IntentPublisher;
  readonly audit: AuditLog;
  readonly metrics: HubMetrics;
  /** Every line the hub logged so far. */
  readonly logs: LogLine[];
  /** The sample of one series of the hub's metrics (`name{labels}`), or undefined. */
  sample(series: string): Promise<number | undefined>;
  /** Applies `spec` over gRPC as the CLI does. */
  apply(spec: wire.BundleSpec): Promise<wire.ApplyBundleResponse__Output>;
  stop(): Promise<void>;
}

/** Starts a hub on `server` and connects an admin client to it. */
export async function startJetStreamHub(
  server: NatsServer,
  options: JetStreamHubOptions = {},
): Promise<JetStreamHub> {
  const nc = await connect({
    servers: server.url,
    name: "flotilla-hub",
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
  const captured = capturedLogger("info");
  const metrics = createHubMetrics({ defaultMetrics: false });
  const store = createJetStreamStore({ nc });
  const contentKeys = contentKeysOfSecret(
    options.contentSecret ?? randomBytes(32),
  );
  const publisher = createJetStreamIntentPublisher({ nc, contentKeys });
  const audit = createJetStreamAuditLog(
    {
      nc,
      log: captured.log,
      onSkipped: (reason) => {
        metrics.auditRecordSkipped(reason);
      },
    },
    {
      timeoutMs: 2_000,
      ...compact({ maxBytes: options.auditMaxBytes }),
    },
  );
  const objects = createJetStreamObjectReader({ nc, contentKeys });
  await store.start();
  await publisher.start();
  await audit.start();
  const clock = options.clock ?? systemClock;
  const replicationObserver = replicationObserverOf(metrics);
  const replication: HubReplication | undefined =
    options.replica === undefined
      ? undefined
      : {
          bucket: createJetStreamLeaseBucket(nc, {
            ttlMs: options.replica.leaseTtlMs,
          }),
          forwarding: createRunForwarding({
            nc,
            clock,
            logger: captured.log,
            ownerWaitMs: 10_000,
            replica: options.replica.id,
            onForwarded: replicationObserver.onForwarded,
          }),
          presence: createPresence({
            nc,
            replica: options.replica.id,
            logger: captured.log,
          }),
          identity: {
            id: options.replica.id,
            incarnation: randomUUID(),
            address: options.replica.id,
            version: "test",
            settings: { leaseTtlMs: options.replica.leaseTtlMs },
            startedAtMs: clock.now(),
          },
          clock,
          onTakeover: replicationObserver.onTakeover,
        };
  const hub = createHub({
    ...compact({ replication }),
    store,
    contentKeys,
    publisher,
    audit,
    logger: captured.log,
    ...compact({ now: options.now }),
    // Long enough that a scripted agent that sends none stays reachable during a test.
    heartbeatIntervalMs: 60_000,
    missedHeartbeats: 3,
    passIntervalMs: 100,
    bundles: (deps) =>
      createBundleService(
        { ...deps, objects },
        compact({ contentGc: options.contentGc }),
      ),
    auditHandlers,
    observer: hubObserverOf(metrics),
    streamHealth: async () =>
      readStreamHealth(
        await jetstream(nc).jetstreamManager(),
        hubStreams(DEFAULT_BUCKET_PREFIX, DEFAULT_INTENTS_PREFIX),
      ),
  });
  const port = await hub.start(
    "127.0.0.1:0",
    ServerCredentials.createInsecure(),
  );
  const address = `127.0.0.1:${String(port)}`;
  const admin = createAdminServiceClient(address, credentials.createInsecure());
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    admin.close();
    await hub.stop();
    await audit.stop();
    await publisher.stop();
    await store.stop();
    await nc.close();
  };
  return {
    hub,
    address,
    admin,
    nc,
    store,
    publisher,
    audit,
    metrics,
    logs: captured.lines,
    async sample(series) {
      return metricSample(await metrics.registry.metrics(), series);
    },
    apply(spec) {
      return callUnary(admin, "applyBundle", { bundle: spec, reason: "test" });
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
