/**
 * @flotilla/hub/testing: what only tests and benchmarks use of the hub. The in-memory adapters
 * (each passes the same contract suite as its NATS JetStream twin), the bucket and key names the
 * adapters write, and the limits and rules the adapters share, for asserting against. Production
 * code imports `@flotilla/hub`.
 */

// In-memory adapters of the ports
export { createMemoryStore } from "./store/memory-store.js";
export type { MemoryStoreOptions } from "./store/memory-store.js";
export { createMemoryIntentPublisher } from "./intents/memory-intent-publisher.js";
export type { MemoryIntentPublisher } from "./intents/memory-intent-publisher.js";
export { createMemoryAuditLog } from "./audit/memory-audit-log.js";

// Limits and rules the state store and intent publisher adapters share
export {
  DEFAULT_MAX_VALUE_BYTES,
  KV_OVERHEAD_BYTES,
} from "./store/state-store.js";
export { prepareIntent } from "./intents/intent-publisher.js";
export {
  INTENT_FENCES_HEADER,
  MAX_FENCED_UNITS,
} from "./intents/intent-fences.js";

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
  leaseKey,
  leasesBucketName,
  runHeadKey,
  runJournalKey,
  runRecordsPrefix,
  runSnapshotPartKey,
} from "./store/keys.js";

// NATS authorization: the account claims and connection limits tests check against
export { agentsAccountClaims } from "./security/agents-account-claims.js";
export { unlimitedConnections } from "./security/nats-limits.js";
export { createLeaseKeeper } from "./leases/lease-keeper.js";
export type { LeaseKeeper, Lease } from "./leases/lease-keeper.js";
export { createMemoryLeaseBucket } from "./leases/memory-lease-bucket.js";
export type { LeaseBucket } from "./leases/lease-bucket.js";
