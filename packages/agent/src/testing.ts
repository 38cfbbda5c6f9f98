/**
 * @flotilla/agent/testing: what only tests and benchmarks use of the agent. The parts inside an
 * agent driven on their own (hub session, intent watcher, identity registration and keeping,
 * gauges), the in-memory progress store, window checks, and the simulated clusters' seeded
 * randomness and config parsers, for building fixtures. Production code imports `@flotilla/agent`.
 */

// The hub session and its events
export { createHubSession } from "./hub/hub-session.js";
export type { SessionEvent, SyncReason } from "./hub/session-events.js";
export type { StatusReportInput } from "./hub/status-outbox.js";

// Identity: the stored identity, its stores, and the keeper that registers and renews it
export {
  checkIdentity,
  certificateValidity,
} from "./identity/agent-identity.js";
export type { AgentIdentity } from "./identity/agent-identity.js";
export { createFileIdentityStore } from "./identity/identity-store.js";
export type { IdentityStore } from "./identity/identity-store.js";
export { createSecretIdentityStore } from "./identity/secret-identity-store.js";
export { createIdentityKeeper } from "./identity/identity-keeper.js";
export type {
  IdentityKeeper,
  IdentityKeeperOptions,
} from "./identity/identity-keeper.js";
export {
  startIdentityKeepers,
  identityNatsOptions,
} from "./identity/fleet-identities.js";

// Intents: the watcher on its own and bundle content by digest
export { createIntentWatcher } from "./intents/intent-watcher.js";
export type { IntentEvent } from "./intents/intent-watcher.js";
export { getBundleContent } from "./intents/bundle-content.js";
export { agentInboxPrefix } from "./intents/nats-credentials.js";

// Metrics gauges
export { registerAgentGauges } from "./metrics/agent-gauges.js";

// Local progress in memory, and the check of a handled generation
export {
  createMemoryProgressStore,
  isGenerationHandled,
} from "./runtime/progress-store.js";

// Maintenance window checks
export { checkWindow, upgradeScope } from "./upgrade/check-window.js";

// Simulated clusters: seeded randomness, durations, config parsing and the maintenance file
export { mulberry32, seedFrom } from "./simulated/random.js";
export { sampleMs, distributionField } from "./simulated/distribution.js";
export type { Distribution } from "./simulated/distribution.js";
export {
  parseSimulatedFleet,
  parseSimulatedCluster,
} from "./simulated/config.js";
export { createMaintenanceFile } from "./simulated/maintenance-file.js";
