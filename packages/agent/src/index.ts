/**
 * @flotilla/agent: what an embedder needs to run an agent. The agent runs in each downstream
 * cluster, follows the cluster's intent from NATS, makes it so through its ports (`AgentBackend`,
 * made of a `KubeGateway`, an `UpgradeDriver` and a `MaintenanceSource`) and reports status to the
 * hub over gRPC.
 *
 * Belongs here: the process entry (`runAgentProcess` with its parsed config, as `flotilla-agent`
 * runs it), `createAgent` and what it is given, the ports and their adapters (Kubernetes and
 * simulated), and the names the agent writes on a cluster. The agent's inner parts that only tests
 * and benchmarks drive on their own (hub session, intent watcher, identity keeper, the simulated
 * clusters' randomness) go to src/testing.ts, `@flotilla/agent/testing`.
 */

// The process: its configuration and everything `flotilla-agent` runs
export { parseAgentConfig } from "./config/config.js";
export type {
  AgentConfig,
  BackendConfig,
  ConfigResult,
  KubernetesBackendConfig,
} from "./config/config.js";
export { runAgentProcess } from "./agent-process.js";
export type { AgentProcessOptions } from "./agent-process.js";
export { AGENT_VERSION } from "./version.js";

// The agent: one cluster's session with the hub, intent watcher and intent follower
export { createAgent } from "./runtime/agent.js";
export type {
  Agent,
  AgentDeps,
  AgentOptions,
  AgentStatus,
} from "./runtime/agent.js";
export type { AgentBackend } from "./runtime/agent-backend.js";
export type { HubSession, HubSessionOptions } from "./hub/hub-session.js";
export type { SessionState } from "./hub/session-events.js";
export type {
  IntentWatcher,
  IntentWatcherOptions,
} from "./intents/intent-watcher.js";
export { readHubTls } from "./hub/transport.js";
export type { HubTransport, HubTls, HubTlsFiles } from "./hub/transport.js";
export { createAgentMetrics } from "./metrics/agent-metrics.js";
export type { AgentMetrics } from "./metrics/agent-metrics.js";

// Local progress: the last intent generation each cluster fully handled
export { createFileProgressStore } from "./runtime/progress-store.js";
export type {
  ProgressStore,
  ProgressRecord,
  ProgressLoad,
  ProgressOptions,
  HandledItem,
} from "./runtime/progress-store.js";

// Kubernetes: the KubeGateway port
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

// Kubernetes: the @kubernetes/client-node gateway and the labels it writes
export { createClientNodeGateway } from "./kube/client-node-gateway.js";
export type {
  ClientNodeGateway,
  ClientNodeGatewayDeps,
  ClientNodeGatewayOptions,
} from "./kube/client-node-gateway.js";
export { loadKubeConfig, SERVICE_ACCOUNT_TOKEN } from "./kube/kube-config.js";
export type { LoadKubeConfigOptions } from "./kube/kube-config.js";
export { BUNDLE_LABEL, INVENTORY_LABEL } from "./kube/inventory.js";

// Upgrades and maintenance windows: the UpgradeDriver and MaintenanceSource ports
export type {
  UpgradeDriver,
  UpgradeRequest,
  UpgradeOutcome,
  UpgradeProgress,
  UpgradeFailureReason,
  StartUpgradeOptions,
  PlatformFacts,
} from "./upgrade/driver.js";
export type {
  MaintenanceSource,
  MaintenanceState,
  MaintenanceError,
  WindowsChanged,
} from "./upgrade/maintenance-source.js";
export { createStaticMaintenanceSource } from "./upgrade/maintenance-source.js";

// Upgrade drivers on the Kubernetes API (system-upgrade-controller, Cluster API, none) and the
// labels they read
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

// The backend of a real cluster: gateway, chosen driver, owner-set windows in a ConfigMap and the
// `flotilla-agent windows` command that edits them
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
export { WINDOWS_KEY } from "./windows/windows-document.js";
export { runWindowsCommand, WINDOWS_USAGE } from "./windows/windows-command.js";
export type { WindowsCommandIo } from "./windows/windows-command.js";

// Simulated clusters: the backend with both ports in memory, and the files that configure it
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
export type {
  SimulatedClusterConfig,
  SimulatedFleet,
  FailureConfig,
} from "./simulated/config.js";
export { loadSimulatedFleet } from "./simulated/fleet-file.js";
export type { LoadSimulatedFleetOptions } from "./simulated/fleet-file.js";
export { loadSimulatedCluster } from "./simulated/cluster-file.js";
export type { LoadSimulatedClusterOptions } from "./simulated/cluster-file.js";
export type { Random } from "./simulated/random.js";
