/**
 * @flotilla/agent: runs in each downstream cluster, follows the cluster's intent from NATS, makes it
 * so through its ports (`KubeGateway`, `UpgradeDriver`) and reports status to the hub over gRPC.
 */

// The agent: one cluster's session with the hub, intent watcher and intent follower
export { createAgent } from "./runtime/agent.js";
export type {
  Agent,
  AgentDeps,
  AgentOptions,
  AgentStatus,
} from "./runtime/agent.js";
export type { AgentBackend } from "./runtime/agent-backend.js";
export { AGENT_VERSION } from "./version.js";

// The hub session: AgentService.Connect with hello, heartbeats, reports, resync and backoff
export { createHubSession, HUB_CHANNEL_DEFAULTS } from "./hub/hub-session.js";
export type {
  HubSession,
  HubSessionDeps,
  HubSessionOptions,
  SessionStats,
} from "./hub/hub-session.js";
export type {
  SessionEvent,
  SessionState,
  SyncReason,
} from "./hub/session-events.js";
export { subjectKey } from "./hub/status-outbox.js";
export type { StatusReportInput } from "./hub/status-outbox.js";
export { createBackoff } from "@flotilla/node";
export type { Backoff, BackoffOptions } from "@flotilla/node";
export { hubCredentials, readHubTls } from "./hub/transport.js";
export type { HubTransport, HubTls, HubTlsFiles } from "./hub/transport.js";

// Identity: registration with a bootstrap token, the stored identity, renewal
export {
  checkIdentity,
  certificateValidity,
  renewAtMs,
  RENEW_AFTER_FRACTION,
} from "./identity/agent-identity.js";
export type {
  AgentIdentity,
  IdentityNats,
  Validity,
} from "./identity/agent-identity.js";
export { createFileIdentityStore } from "./identity/identity-store.js";
export type { IdentityStore } from "./identity/identity-store.js";
export {
  createSecretIdentityStore,
  type IdentitySecretRef,
} from "./identity/secret-identity-store.js";
export { createKeyAndCsr } from "./identity/csr.js";
export type { KeyAndCsr } from "./identity/csr.js";
export {
  registerCluster,
  renewClusterIdentity,
  isRetryable,
} from "./identity/registration.js";
export type {
  RegisterOptions,
  RenewOptions,
  IdentityCallOptions,
} from "./identity/registration.js";
export { createIdentityKeeper } from "./identity/identity-keeper.js";
export type {
  IdentityKeeper,
  IdentityKeeperDeps,
  IdentityKeeperOptions,
} from "./identity/identity-keeper.js";
export {
  readBootstrapToken,
  startIdentityKeepers,
  identityNatsOptions,
} from "./identity/fleet-identities.js";
export type {
  IdentityStoreChoice,
  StartIdentityKeepersOptions,
} from "./identity/fleet-identities.js";

// Metrics: prom-client metrics and the /metrics + /healthz server
export { createAgentMetrics, noopMetrics } from "./metrics/agent-metrics.js";
export type { AgentMetrics } from "./metrics/agent-metrics.js";
export {
  registerAgentGauges,
  resourcesNotReady,
} from "./metrics/agent-gauges.js";
export type { AgentGaugeSources } from "./metrics/agent-gauges.js";
export { startMetricsServer } from "./metrics/metrics-server.js";
export type {
  MetricsServer,
  MetricsServerOptions,
} from "./metrics/metrics-server.js";

// Intents: follow the cluster's intent from NATS; fetch bundle content by digest
export { createIntentWatcher } from "./intents/intent-watcher.js";
export type {
  IntentEvent,
  IntentWatcher,
  IntentWatcherDeps,
  IntentWatcherOptions,
} from "./intents/intent-watcher.js";
export { getBundleContent } from "./intents/bundle-content.js";
export type { GetBundleContentOptions } from "./intents/bundle-content.js";
export {
  agentInboxPrefix,
  isNatsCreds,
  natsConnectOptions,
} from "./intents/nats-credentials.js";
export type {
  AgentNatsConnectOptions,
  AgentNatsCredentialsOptions,
} from "./intents/nats-credentials.js";

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

// Kubernetes: the @kubernetes/client-node gateway (server-side apply, inventory, readiness, drift)
export { createClientNodeGateway } from "./kube/client-node-gateway.js";
export type {
  ClientNodeGateway,
  ClientNodeGatewayDeps,
  ClientNodeGatewayOptions,
} from "./kube/client-node-gateway.js";
export { loadKubeConfig, SERVICE_ACCOUNT_TOKEN } from "./kube/kube-config.js";
export type { LoadKubeConfigOptions } from "./kube/kube-config.js";
export { readinessOf } from "./kube/readiness.js";
export type { Readiness } from "./kube/readiness.js";
export { driftOf, describeDrift } from "./kube/drift.js";
export type { FieldDrift } from "./kube/drift.js";
export { applyOrder, deleteOrder } from "./kube/apply-order.js";
export {
  BUNDLE_LABEL,
  INVENTORY_LABEL,
  inventoryName,
  parseInventory,
} from "./kube/inventory.js";
export type { Inventory } from "./kube/inventory.js";

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

// Upgrade drivers on the Kubernetes API (system-upgrade-controller, Cluster API) and owner-set
// maintenance windows in a ConfigMap, with the `flotilla-agent windows` command
export { createSucDriver, CONTROL_PLANE_LABEL } from "./upgrade/suc-driver.js";
export type { SucDriverDeps, SucDriverOptions } from "./upgrade/suc-driver.js";
export type { FollowOptions } from "./upgrade/kube-upgrade.js";
export { createCapiDriver } from "./upgrade/capi-driver.js";
export type {
  CapiDriverDeps,
  CapiDriverOptions,
} from "./upgrade/capi-driver.js";
export { CAPI_CLUSTER_LABEL } from "./upgrade/capi-objects.js";
export { createNoneDriver, POOL_LABELS } from "./upgrade/none-driver.js";
export type { NoneDriverOptions } from "./upgrade/none-driver.js";

// The backend of a real cluster: gateway, chosen driver, windows ConfigMap and facts
export { createKubernetesBackend } from "./runtime/kubernetes-backend.js";
export type {
  KubernetesBackend,
  KubernetesBackendDeps,
  KubernetesBackendOptions,
  UpgradeDriverConfig,
} from "./runtime/kubernetes-backend.js";
export { createConfigMapMaintenanceSource } from "./windows/configmap-maintenance-source.js";
export type {
  ConfigMapMaintenanceSource,
  ConfigMapMaintenanceSourceDeps,
  ConfigMapMaintenanceSourceOptions,
} from "./windows/configmap-maintenance-source.js";
export {
  parseWindowsDocument,
  withFreeze,
  withoutFreezes,
  WINDOWS_KEY,
} from "./windows/windows-document.js";
export type { FreezeInput } from "./windows/windows-document.js";
export { runWindowsCommand, WINDOWS_USAGE } from "./windows/windows-command.js";
export type { WindowsCommandIo } from "./windows/windows-command.js";
export { describeOpenings } from "./windows/windows-show.js";

// Simulated clusters: both ports in memory, injected clock and randomness, fleet config
export { systemClock } from "@flotilla/node";
export type { Clock } from "@flotilla/node";
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
export { loadSimulatedCluster } from "./simulated/cluster-file.js";
export type { LoadSimulatedClusterOptions } from "./simulated/cluster-file.js";
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
} from "./runtime/progress-store.js";
export type {
  ProgressStore,
  ProgressRecord,
  ProgressLoad,
  ProgressOptions,
  HandledItem,
} from "./runtime/progress-store.js";
