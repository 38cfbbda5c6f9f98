/**
 * @flotilla/hub: the hub server. So far: the StateStore port with its adapters (in-memory for unit
 * tests, NATS JetStream KV for real; both pass one contract suite), the module that names every
 * bucket and key, and the IntentPublisher port (intents to agents over NATS; in-memory and
 * JetStream adapters, one contract suite).
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
