/**
 * @flotilla/node: the small Node.js-side helpers that the hub, the agent and the CLI share, each
 * with one home (docs/architecture.md). Nothing here knows about runs, bundles or clusters.
 */
export { systemClock } from "./clock.js";
export type { Clock } from "./clock.js";
