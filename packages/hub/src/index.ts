/**
 * @flotilla/hub: the hub server: the StateStore and IntentPublisher ports with their adapters
 * (in-memory for unit tests, NATS JetStream for real; each pair passes one contract suite), the
 * names of every bucket and key, the server's parts and how they are wired, the audit log, the
 * process (config, logs, metrics, HTTP) and NATS authorization.
 */

// State store: the port
export {
  DEFAULT_MAX_VALUE_BYTES,
  KV_OVERHEAD_BYTES,
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

// State store: the adapters
export { createMemoryStore } from "./store/memory-store.js";
export type { MemoryStoreOptions } from "./store/memory-store.js";
export { createJetStreamStore } from "./store/jetstream-store.js";
export type {
  JetStreamStoreDeps,
  JetStreamStoreOptions,
} from "./store/jetstream-store.js";

// Buckets and keys
export {
  COLLECTION_NAMES,
  DEFAULT_BUCKET_PREFIX,
  MAX_KEY_LENGTH,
  bucketName,
  keyProblem,
  encodeKeyToken,
  decodeKeyToken,
  nameKey,
  bundleRevisionKey,
  bundleRevisionsPrefix,
  gateDecisionKey,
  gateDecisionsPrefix,
  isRunJournalKey,
  runHeadKey,
  runJournalKey,
  runRecordsPrefix,
  runSnapshotPartKey,
} from "./store/keys.js";
export type { CollectionName } from "./store/keys.js";

// Intents: the port, its adapters, and the rules they share
export {
  IntentRefusedError,
  checkContentSize,
  decidePublish,
  prepareIntent,
} from "./intents/intent-publisher.js";
export type {
  IntentOperationOptions,
  IntentPublisher,
  IntentRefusal,
  PreparedIntent,
  PublishedIntent,
  PublishResult,
} from "./intents/intent-publisher.js";
export { createMemoryIntentPublisher } from "./intents/memory-intent-publisher.js";
export type { MemoryIntentPublisher } from "./intents/memory-intent-publisher.js";
export { createJetStreamIntentPublisher } from "./intents/jetstream-intent-publisher.js";
export type {
  JetStreamIntentPublisherDeps,
  JetStreamIntentPublisherOptions,
} from "./intents/jetstream-intent-publisher.js";

// The hub server: its parts and how they are wired
export { createHub } from "./hub.js";
export type {
  BundleService,
  BundleServiceDeps,
  Hub,
  HubObserver,
  HubOptions,
} from "./hub.js";
export { createIntentWriter } from "./intents/intent-writer.js";
export type { CurrentIntent, IntentWriter } from "./intents/intent-writer.js";
export { createClusterRegistry } from "./clusters/cluster-registry.js";
export type {
  ClusterChange,
  ClusterRegistry,
  ClusterStatus,
  ConnectionState,
  SessionHandle,
} from "./clusters/cluster-registry.js";
export type { ClusterDirectory } from "./clusters/cluster-directory.js";
export { createRunManager } from "./runs/run-manager.js";
export type {
  RunCommand,
  RunManager,
  RunUpdate,
  StoredRun,
} from "./runs/run-manager.js";
export { createBundleService } from "./bundles/bundle-service.js";
export { createBundleManager } from "./bundles/bundle-manager.js";
export type { BundleManager } from "./bundles/bundle-manager.js";
export {
  createJetStreamObjectReader,
  objectReaderOf,
} from "./bundles/object-reader.js";
export type { ObjectReader } from "./bundles/object-reader.js";

// Audit log
export { createMemoryAuditLog } from "./audit/memory-audit-log.js";
export { createJetStreamAuditLog } from "./audit/jetstream-audit-log.js";
export { auditHandlers } from "./audit/admin-audit.js";
export type {
  AuditEvent,
  AuditFilter,
  AuditLog,
  AuditOutcome,
  AuditRecord,
} from "./audit/audit-log.js";

// Process: config, logs, metrics, HTTP
export { HUB_USAGE, parseHubConfig } from "./config/config.js";
export type { HubConfig, HubSettings } from "./config/config.js";
export { createLogger } from "./logger.js";
export { createHubMetrics } from "./metrics/metrics.js";
export type {
  HubMetrics,
  MemberCounts,
  RegistrationMethod,
} from "./metrics/metrics.js";
export {
  DEFAULT_FINISHED_RUN_RETENTION_MS,
  hubObserverOf,
  membersByRun,
  startHubGauges,
} from "./metrics/metrics-observer.js";
export type {
  HubGaugeOptions,
  HubGauges,
  HubGaugeSources,
} from "./metrics/metrics-observer.js";
export { startHttpServer } from "./metrics/http-server.js";
export type { HttpServer } from "./metrics/http-server.js";

// NATS authorization: the operator setup and agents' NATS credentials
export {
  CLAIMS_UPDATE_SUBJECT,
  HUB_NATS_USER,
  createNatsAuthSetup,
} from "./security/nats-auth.js";
export { unlimitedConnections } from "./security/nats-limits.js";
export type {
  NatsAuthSetup,
  NatsAuthSetupOptions,
  NatsJetStreamLimits,
} from "./security/nats-auth.js";
export {
  agentNatsUserName,
  createAgentNatsCredentialsIssuer,
} from "./security/agent-nats-issuer.js";
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
  agentsAccountClaims,
  agentsAccountImports,
} from "./security/agents-account-claims.js";
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
