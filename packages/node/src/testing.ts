/**
 * @flotilla/node/testing: the manual clock that tests and simulations advance by hand.
 * Production code imports `@flotilla/node`.
 */

export { createManualClock } from "./clock.js";
export type { ManualClock } from "./clock.js";
