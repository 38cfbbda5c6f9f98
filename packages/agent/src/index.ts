/**
 * @flotilla/agent: runs in each downstream cluster, follows the cluster's intent from NATS, makes it
 * so through its ports (`KubeGateway`, `UpgradeDriver`) and reports status to the hub over gRPC.
 */

// Intents: follow the cluster's intent from NATS; fetch bundle content by digest
export { createIntentWatcher, getBundleContent } from "./intent-watcher.js";
export type {
  GetBundleContentOptions,
  IntentEvent,
  IntentWatcher,
  IntentWatcherDeps,
  IntentWatcherOptions,
} from "./intent-watcher.js";

// Kubernetes: the KubeGateway port and the manifest helpers its adapters share
export type {
  KubeGateway,
  Manifest,
  ApplyBundleRequest,
  BundleStatus,
  BundlePhase,
  BundleStatusListener,
  AppliedBundle,
  GatewayCallOptions,
  ResourceState,
  ResourceStatus,
} from "./kube/gateway.js";
export {
  resourceRefs,
  resourceKey,
  capResources,
  CLUSTER_SCOPED_KINDS,
} from "./kube/manifest.js";
export type { ResourceRef, ResourceRefsOptions } from "./kube/manifest.js";

// Upgrades and maintenance windows: the UpgradeDriver and MaintenanceSource ports, window checks
export type {
  UpgradeDriver,
  UpgradeRequest,
  UpgradeOutcome,
  UpgradeProgress,
  UpgradeFailureReason,
  StartUpgradeOptions,
  PlatformFacts,
} from "./upgrade/driver.js";
export { checkWindow, upgradeScope } from "./upgrade/check-window.js";
export type { WindowHold } from "./upgrade/check-window.js";
export { createStaticMaintenanceSource } from "./upgrade/maintenance-source.js";
export type {
  MaintenanceSource,
  MaintenanceState,
  MaintenanceError,
  WindowsChanged,
} from "./upgrade/maintenance-source.js";

// Simulated clusters: both ports in memory, injected clock and randomness, fleet config
export { systemClock, createManualClock } from "./simulated/clock.js";
export type { Clock, ManualClock } from "./simulated/clock.js";
export { mulberry32, seedFrom, forkRandom } from "./simulated/random.js";
export type { Random } from "./simulated/random.js";
export {
  fixedSeconds,
  sampleMs,
  distributionField,
} from "./simulated/distribution.js";
export type { Distribution } from "./simulated/distribution.js";
export {
  parseSimulatedFleet,
  parseSimulatedCluster,
} from "./simulated/config.js";
export type {
  SimulatedClusterConfig,
  SimulatedFleet,
  FailureConfig,
} from "./simulated/config.js";
export { loadSimulatedFleet } from "./simulated/fleet-file.js";
export type { LoadSimulatedFleetOptions } from "./simulated/fleet-file.js";
export { createMaintenanceFile } from "./simulated/maintenance-file.js";
export type { MaintenanceFileOptions } from "./simulated/maintenance-file.js";
export type { TextParser } from "./simulated/text-file.js";
export {
  createSimulatedCluster,
  createSimulatedClusters,
} from "./simulated/simulated-cluster.js";
export type {
  SimulatedCluster,
  SimulatedClusterDeps,
  SimulatedClustersDeps,
} from "./simulated/simulated-cluster.js";
export type {
  SimulatedKubeGateway,
  DriftTarget,
} from "./simulated/simulated-gateway.js";

// Local progress: the last intent generation each cluster fully handled
export {
  createFileProgressStore,
  createMemoryProgressStore,
  isGenerationHandled,
} from "./progress-store.js";
export type {
  ProgressStore,
  ProgressRecord,
  ProgressLoad,
  ProgressOptions,
  HandledItem,
} from "./progress-store.js";
