/**
 * A whole hub in the test's process over real gRPC on 127.0.0.1, with in-memory adapters (state
 * store, intent publisher, audit log) and a manual clock, for tests that drive it with scripted
 * agents and AdminService calls. The end-to-end tests in test/ run the real processes instead.
 */
import pino from "pino";
import { createAdminServiceClient, type wire } from "@flotilla/protocol";
import { credentials, ServerCredentials } from "@grpc/grpc-js";
import { auditHandlers } from "../src/audit/admin-audit.js";
import type { AuditLog } from "../src/audit/audit-log.js";
import { createMemoryAuditLog } from "../src/audit/memory-audit-log.js";
import { createBundleService } from "../src/bundles/bundle-service.js";
import { objectReaderOf } from "../src/bundles/object-reader.js";
import {
  createHub,
  type Hub,
  type HubObserver,
  type HubOptions,
} from "../src/hub.js";
import {
  createMemoryIntentPublisher,
  type MemoryIntentPublisher,
} from "../src/intents/memory-intent-publisher.js";
import { createMemoryStore } from "../src/store/memory-store.js";
import type { StateStore } from "../src/store/state-store.js";
import { compact } from "@flotilla/core";

export interface TestHub {
  readonly hub: Hub;
  readonly address: string;
  readonly admin: wire.AdminServiceClient;
  readonly store: StateStore;
  readonly publisher: MemoryIntentPublisher;
  readonly audit: AuditLog;
  readonly heartbeatIntervalMs: number;
  readonly clock: { now(): number; advance(ms: number): void };
  stop(): Promise<void>;
}

/** Options of {@link startTestHub}: hooks the hub is built with (metrics tests). */
export interface TestHubOptions {
  readonly observer?: HubObserver;
  readonly adminAuth?: HubOptions["adminAuth"];
  /** Wraps the in-memory store the hub is built on (a fake that holds or fails writes). */
  readonly wrapStore?: (store: StateStore) => StateStore;
}

/** The in-memory adapters and manual clock every test hub is built on, started. */
/** How often test hubs run their pass (and check heartbeats), in real milliseconds. */
export const TEST_PASS_INTERVAL_MS = 50;

export async function memoryHubParts(startMs: number): Promise<{
  readonly clock: {
    readonly now: () => number;
    readonly advance: (ms: number) => void;
  };
  readonly store: StateStore;
  readonly publisher: MemoryIntentPublisher;
  readonly audit: AuditLog;
  /** HubOptions for a hub on these adapters; `extra` is added (and wins). */
  readonly options: (
    extra: Partial<HubOptions> & Pick<HubOptions, "heartbeatIntervalMs">,
  ) => HubOptions;
}> {
  let now = startMs;
  const clock = {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
  const store = createMemoryStore();
  const publisher = createMemoryIntentPublisher({ now: clock.now });
  const audit = createMemoryAuditLog();
  await store.start();
  await publisher.start();
  await audit.start();
  return {
    clock,
    store,
    publisher,
    audit,
    options: (extra) => ({
      store,
      publisher,
      audit,
      logger: pino({ level: "silent" }),
      now: clock.now,
      missedHeartbeats: 3,
      passIntervalMs: TEST_PASS_INTERVAL_MS,
      bundles: (deps) =>
        createBundleService({
          ...deps,
          objects: objectReaderOf((digest) => publisher.bundleContent(digest)),
        }),
      auditHandlers,
      ...extra,
    }),
  };
}

export async function startTestHub(
  options: TestHubOptions = {},
): Promise<TestHub> {
  const parts = await memoryHubParts(Date.parse("2026-12-01T10:00:00Z"));
  const { clock, publisher, audit } = parts;
  const store = options.wrapStore?.(parts.store) ?? parts.store;
  const heartbeatIntervalMs = 1_000;
  const hub = createHub(
    parts.options({
      heartbeatIntervalMs,
      store,
      ...compact({ observer: options.observer, adminAuth: options.adminAuth }),
    }),
  );
  const port = await hub.start(
    "127.0.0.1:0",
    ServerCredentials.createInsecure(),
  );
  const address = `127.0.0.1:${String(port)}`;
  const admin = createAdminServiceClient(address, credentials.createInsecure());
  return {
    hub,
    address,
    admin,
    store,
    publisher,
    audit,
    heartbeatIntervalMs,
    clock,
    async stop() {
      admin.close();
      await hub.stop();
      await audit.stop();
      await publisher.stop();
      await store.stop();
    },
  };
}
