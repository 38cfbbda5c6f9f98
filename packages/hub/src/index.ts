/**
 * @flotilla/hub: what an embedder needs to run a hub. The process entry (`serveHub` with its
 * config, logger and metrics, as `flotilla-hub` runs it) and the parts underneath it: `createHub`
 * and its options, the ports it runs on (StateStore, IntentPublisher, AuditLog, ObjectReader) with
 * their NATS JetStream adapters, the HTTP server, and NATS authorization with the `nats-setup`
 * command.
 *
 * Belongs here: what a program that starts a hub calls or passes. Anything only tests and benchmarks
 * reach for (in-memory adapters, bucket and key names, the limits and rules the adapters share)
 * goes to src/testing.ts, `@flotilla/hub/testing`.
 */

// The process: config, logs, metrics, starting and stopping everything `flotilla-hub` runs
export { HUB_USAGE, parseHubConfig } from "./config/config.js";
export type { HubConfig, HubSettings } from "./config/config.js";
export { serveHub } from "./serve-hub.js";
export type { ServeHubDeps, ServingHub } from "./serve-hub.js";
export type { StopStep } from "./shutdown.js";
export { createLogger } from "./logger.js";
export type { Logger } from "./logger.js";
export { loadAdminTokens } from "./security/admin-tokens.js";
export type { AdminTokens } from "./security/admin-tokens.js";
export { createHubMetrics } from "./metrics/metrics.js";
export type {
  HubMetrics,
  MemberCounts,
  RegistrationMethod,
} from "./metrics/metrics.js";
export {
  DEFAULT_FINISHED_RUN_RETENTION_MS,
  hubObserverOf,
  startHubGauges,
} from "./metrics/metrics-observer.js";
export type {
  HubGaugeOptions,
  HubGauges,
  HubGaugeSources,
} from "./metrics/metrics-observer.js";
export { startHttpServer } from "./metrics/http-server.js";
export type { HttpServer } from "./metrics/http-server.js";

// The hub server and the parts its options take
export { createHub } from "./hub.js";
export type {
  BundleService,
  BundleServiceDeps,
  Hub,
  HubObserver,
  HubOptions,
  HubSecurity,
} from "./hub.js";
export type {
  CurrentIntent,
  IntentChangeOptions,
  IntentWriter,
} from "./intents/intent-writer.js";
export type {
  ClusterChange,
  ClusterRegistry,
  ClusterStatus,
  ConnectionState,
  SessionHandle,
} from "./clusters/cluster-registry.js";
export type { ClusterDirectory } from "./clusters/cluster-directory.js";
export type {
  RunCommand,
  RunManager,
  RunUpdate,
  StoredRun,
} from "./runs/run-manager.js";
export { createBundleService } from "./bundles/bundle-service.js";
export type { BundleManager } from "./bundles/bundle-manager.js";

// State store: the port and its NATS JetStream adapter
export {
  defineCollection,
  isRevisionConflict,
  RevisionConflictError,
} from "./store/state-store.js";
export type {
  Change,
  Collection,
  DeleteOptions,
  Entry,
  ListOptions,
  OperationOptions,
  PutOptions,
  StateStore,
  WatchOptions,
} from "./store/state-store.js";
export { createJetStreamStore } from "./store/jetstream-store.js";
export type {
  JetStreamStoreDeps,
  JetStreamStoreOptions,
} from "./store/jetstream-store.js";
export type { CollectionName } from "./store/keys.js";

// Intents: the port and its NATS JetStream adapter
export { IntentRefusedError } from "./intents/intent-publisher.js";
export type {
  IntentOperationOptions,
  IntentPublisher,
  IntentRefusal,
  IntentWriteOptions,
  PreparedIntent,
  PublishedIntent,
  PublishResult,
} from "./intents/intent-publisher.js";
export { FencedError, isFenced } from "./intents/intent-fences.js";
export type { Fence, FenceMap } from "./intents/intent-fences.js";
export { createJetStreamIntentPublisher } from "./intents/jetstream-intent-publisher.js";
export type {
  JetStreamIntentPublisherDeps,
  JetStreamIntentPublisherOptions,
} from "./intents/jetstream-intent-publisher.js";

// Bundle content: the object-store reader port and its NATS JetStream adapter
export {
  createJetStreamObjectReader,
  objectReaderOf,
} from "./bundles/object-reader.js";
export type { ObjectReader } from "./bundles/object-reader.js";

// Audit log: the port, its NATS JetStream adapter and the AdminService calls that read it
export { createJetStreamAuditLog } from "./audit/jetstream-audit-log.js";
export { auditHandlers } from "./audit/admin-audit.js";
export type {
  AuditEvent,
  AuditFilter,
  AuditLog,
  AuditOutcome,
  AuditRecord,
} from "./audit/audit-log.js";

// NATS authorization: the operator setup, the agents account and agents' NATS credentials
export {
  CLAIMS_UPDATE_SUBJECT,
  HUB_NATS_USER,
  createNatsAuthSetup,
} from "./security/nats-auth.js";
export type {
  NatsAuthSetup,
  NatsAuthSetupOptions,
  NatsJetStreamLimits,
} from "./security/nats-auth.js";
export { createAgentNatsCredentialsIssuer } from "./security/agent-nats-issuer.js";
export type { AgentNatsCredentialsIssuerOptions } from "./security/agent-nats-issuer.js";
export type {
  AgentNatsCredentials,
  AgentNatsCredentialsIssuer,
} from "./security/agent-nats-credentials.js";
export { loadNatsAuth } from "./security/nats-auth-config.js";
export type {
  AgentsAccountAuth,
  NatsAuth,
  NatsAuthConfig,
} from "./security/nats-auth-config.js";
export {
  AGENTS_REVOCATIONS_KEY,
  createAgentsAccount,
} from "./security/agents-account.js";
export type {
  AgentsAccount,
  AgentsAccountDeps,
  AgentsAccountOptions,
  AgentsAccountTemplate,
} from "./security/agents-account.js";
export {
  CONTENT_SECRET_KEY,
  contentKeysOfSecret,
  createContentKeys,
} from "./security/content-keys.js";
export type { ContentKeys } from "./security/content-keys.js";
export {
  parseNatsSetupArgs,
  runNatsSetup,
} from "./security/nats-setup-command.js";
export {
  HUB_NATS_AUTH_FILES,
  NATS_SETUP_FILES,
} from "./security/nats-setup-files.js";
export { createJetStreamLeaseBucket } from "./leases/jetstream-lease-bucket.js";
export type { JetStreamLeaseBucketOptions } from "./leases/jetstream-lease-bucket.js";
