/**
 * @flotilla/hub: the hub server. So far: the StateStore port with its adapters (in-memory for unit
 * tests, NATS JetStream KV for real; both pass one contract suite) and the module that names every
 * bucket and key.
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
