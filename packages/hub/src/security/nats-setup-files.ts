/** The files `flotilla-hub nats-setup` writes, and which of them the hub reads (`--nats-auth-dir`). */

/** File names written by `nats-setup`. */
export const NATS_SETUP_FILES = {
  /** The nats-server configuration fragment. */
  serverConfig: "nats-auth.conf",
  /** The hub's user in the flotilla account. */
  hubCreds: "hub.creds",
  /** The hub's user in the system account: pushes the agents' account. */
  hubSystemCreds: "hub-system.creds",
  /** The agents' account JWT as the operator signed it: the hub's template. */
  agentsAccount: "agents-account.jwt",
  /** The seed agents' users are signed with. */
  agentsSigningKey: "agents-signing.nk",
  /** The operator signing key's seed: the hub re-signs the agents' account with it. */
  operatorSigningKey: "operator-signing.nk",
  /** The operator's own seed: move it offline. */
  operatorKey: "operator.nk",
} as const;

/** The files of a `nats-setup` directory the hub reads. */
export const HUB_NATS_AUTH_FILES = [
  "hubCreds",
  "hubSystemCreds",
  "agentsAccount",
  "agentsSigningKey",
  "operatorSigningKey",
] as const satisfies readonly (keyof typeof NATS_SETUP_FILES)[];
