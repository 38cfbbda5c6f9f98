/**
 * @flotilla/testkit: helpers for flotilla's integration tests (dev only, never shipped).
 *
 * Tests run against real components: `startNatsServer` launches a real `nats-server` with JetStream
 * on a free port in a temporary directory (restartable with its data, for outage tests);
 * `startNatsCluster` launches several, routed into one JetStream cluster (replicated streams, a
 * node killed mid-test);
 * `waitFor` replaces sleeps in assertions; `freePort` finds a port for servers that cannot bind
 * port 0 themselves; `startKubeApiServer` serves the Kubernetes REST subset the agent's
 * Kubernetes backend uses (there is no real API server on the development machines);
 * `startGitServer` serves bare repositories over git://, smart HTTP (with a token check), file://
 * and, where sshd is installed, ssh://; `startPrometheus` runs a real Prometheus scraping the
 * `/metrics` of `startMetricsTarget`s, whose gauges the test sets (metric gates).
 */

export { startNatsServer } from "./nats-server.js";
export type { NatsServer, StartNatsServerOptions } from "./nats-server.js";
export { startNatsCluster } from "./nats-cluster.js";
export type {
  NatsCluster,
  NatsClusterNode,
  NatsClusterWaitOptions,
  StartNatsClusterOptions,
} from "./nats-cluster.js";
export { waitFor } from "./wait-for.js";
export type { WaitForOptions } from "./wait-for.js";
export { freePort } from "./free-port.js";
export { REPO_ROOT, startProcess, runProcess } from "./process.js";
export type { Exit, ProcessOptions, TestProcess } from "./process.js";
export { startKubeApiServer } from "./kube-api-server.js";
export type {
  JsonObject,
  KubeApiRequest,
  KubeApiServer,
  KubeApiServerOptions,
} from "./kube-api-server.js";
export { findPromtool, promtoolCheckMetrics } from "./promtool.js";
export type { PromtoolResult } from "./promtool.js";
export { startPrometheus } from "./prometheus-server.js";
export type {
  PrometheusSample,
  PrometheusServer,
  StartPrometheusOptions,
} from "./prometheus-server.js";
export { startMetricsTarget } from "./metrics-target.js";
export type { MetricLabels, MetricsTarget } from "./metrics-target.js";
export { findTool, helmEnv, unzipEntry } from "./tools.js";
export type { LayerTool } from "./tools.js";
export { startChartRepository } from "./chart-repository.js";
export type {
  ChartRepository,
  ChartRepositoryOptions,
} from "./chart-repository.js";
export { HELM_OCI_MEDIA_TYPES, startOciRegistry } from "./oci-registry.js";
export type { OciRegistry, OciRegistryOptions } from "./oci-registry.js";
export { startGitServer } from "./git-server.js";
export type {
  GitFiles,
  GitServer,
  GitServerOptions,
  GitSshAccess,
  TestGitRepo,
} from "./git-server.js";
