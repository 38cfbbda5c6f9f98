/**
 * @flotilla/core/testing: engine entry points and limits that only tests and benchmarks reach for
 * (building fixtures, asserting against a bound). Production code imports `@flotilla/core`.
 */

export { MAX_NESTING_DEPTH } from "./input-bounds.js";
export { parseSelectorStruct } from "./label-selector.js";
export { parseClusters } from "./cluster.js";
export { parseRolloutStrategy } from "./fleet/strategy.js";
export { MAX_STAGES } from "./update-strategy-rules.js";
export { simulateStagedRun } from "./preview/simulate-staged.js";
