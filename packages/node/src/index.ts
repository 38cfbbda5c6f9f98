/**
 * @flotilla/node: the small Node.js-side helpers that the hub, the agent and the CLI share, each
 * with one home (docs/architecture.md). Nothing here knows about runs, bundles or clusters.
 */
export { systemClock, createManualClock } from "./clock.js";
export type { Clock, ManualClock } from "./clock.js";
export * from "./config/index.js";
