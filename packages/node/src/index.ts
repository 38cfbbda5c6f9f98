/**
 * @flotilla/node: the small Node.js-side helpers that the hub, the agent and the CLI share, each
 * with one home (docs/architecture.md). Nothing here knows about runs, bundles or clusters.
 */
export { systemClock } from "./clock.js";
export type { Clock } from "./clock.js";
export { isProcessEntry } from "./process-entry.js";
export { abortable, unlessAborted } from "./signals.js";
export { backoffCeilingMs, createBackoff, halfJitter } from "./backoff.js";
export type { Backoff, BackoffOptions } from "./backoff.js";
export {
  createConnectionWatch,
  type ConnectionWatch,
} from "./jetstream/connection-watch.js";
export {
  isNatsOutage,
  isStoreFull,
  isStreamNotFound,
  isWrongLastRevision,
  toNatsFlotillaError,
} from "./jetstream/nats-errors.js";
export { bucketPrefixProblem, checkBucketPrefix } from "./jetstream/names.js";
export { checkMaxPayload } from "./jetstream/server-limits.js";
export * from "./config/index.js";
export { AsyncQueue } from "./async/async-queue.js";
export { createListenerSet, type ListenerSet } from "./async/listener-set.js";
export {
  createReadWriteLock,
  type ReadWriteLock,
} from "./async/read-write-lock.js";
export { runTool } from "./tools/run-tool.js";
export type { RunToolOptions, ToolOutput } from "./tools/run-tool.js";
export {
  runHelm,
  helmTemplateArgs,
  HELM_CONFIGURED_BY,
  type HelmCapabilities,
  type HelmTemplateInput,
} from "./tools/helm.js";
export {
  parseDocuments,
  type DocumentProblem,
  type ManifestDocument,
} from "./yaml/manifest-documents.js";
export {
  describeReadError,
  fileProblem,
  parseDocumentText,
  yamlStreamErrors,
} from "./bundle-dir/yaml-input.js";
export {
  fileSystemBundleDirIo,
  readBundleDir,
  readRendererFiles,
  type BundleDirIo,
  type ReadBundleDirOptions,
  type DirEntry,
} from "./bundle-dir/read-bundle-dir.js";
