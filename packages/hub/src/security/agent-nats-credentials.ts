/**
 * The port through which agent registration obtains an agent's NATS credentials (docs/security.md,
 * "NATS: two accounts"). The adapter (agent-nats-issuer.ts) mints a user JWT in the agents'
 * account, signed with the signing key the hub holds, allowing exactly what an agent's intent
 * watcher and bundle-content reader need for its own cluster and nothing else. Without it (a NATS
 * server without authorization, development only) registration returns no NATS credentials and
 * agents use the NATS URL they are configured with.
 */

/** What an agent gets: the wire message `NatsCredentials` (agent.proto). */
export interface AgentNatsCredentials {
  /** NATS server URLs the agent should connect to. */
  readonly servers: readonly string[];
  /** A NATS `.creds` file's content: the user JWT and its nkey seed. */
  readonly creds: string;
  /** The intents KV bucket and this cluster's key in it. */
  readonly intentBucket: string;
  readonly intentKey: string;
  /** The user's public key (`U…`): what a revocation names. Not sent to the agent. */
  readonly userPublicKey: string;
}

/** Mints agent NATS credentials. */
export interface AgentNatsCredentialsIssuer {
  /** Credentials for `cluster`'s agent that stop working at `expiresAtMs`. */
  issue(cluster: string, expiresAtMs: number): Promise<AgentNatsCredentials>;
}
