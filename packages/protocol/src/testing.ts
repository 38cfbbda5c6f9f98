/**
 * @flotilla/protocol/testing: what only tests and benchmarks reach for: the proto file list, the
 * AgentService registration fake hubs use, wire limits to assert against, and the error-mapping
 * internals. Production code imports `@flotilla/protocol`.
 */

export { PROTO_FILES } from "./load.js";
export { addAgentService } from "./services.js";
export {
  MAX_LABELS,
  MAX_WINDOWS_PER_SCOPE,
  MAX_WIRE_PROBLEMS,
  MAX_PROBLEMS_BYTES,
} from "./limits.js";
export { intentsRepublish } from "./intents.js";
export {
  PROBLEMS_METADATA_KEY,
  grpcStatusOf,
  problemsToWire,
  problemsFromWire,
} from "./errors.js";
export type { Heartbeat } from "./codecs/session.js";
export {
  TEST_SSH_ENCRYPTED_KEY,
  TEST_SSH_PRIVATE_KEY,
  TEST_SSH_PUBLIC_KEY,
} from "./git-test-keys.js";
