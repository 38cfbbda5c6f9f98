/**
 * Connecting an agent to NATS with the credentials the hub issued at registration (docs/security.md):
 * the user JWT and seed of a `.creds` file, and the inbox prefix the agent's user
 * may subscribe under. Without that prefix every request (the intent's direct get, the bundle
 * content reads) would wait for a reply on `_INBOX.…`, which the server does not let it hear.
 */
import {
  credsAuthenticator,
  type Authenticator,
} from "@nats-io/transport-node";
import { FlotillaError, showValue } from "@flotilla/core";
import { agentInboxPrefix, intentKeyProblem } from "@flotilla/protocol";

export { agentInboxPrefix };

/** Options of {@link natsConnectOptions}. */
export interface AgentNatsCredentialsOptions {
  /**
   * The `.creds` content (NatsCredentials.creds), or a function returning the current one: the
   * function form lets renewed credentials take effect on the next reconnect.
   */
  readonly creds: string | (() => string);
  /** The agent's cluster; its inbox prefix follows from it. */
  readonly cluster: string;
}

/** What to add to nats.js `connect()` options for an agent with issued credentials. */
export interface AgentNatsConnectOptions {
  readonly authenticator: Authenticator;
  readonly inboxPrefix: string;
}

const CREDS_PATTERN =
  /-----BEGIN NATS USER JWT-----\s*\S+\s*-+END NATS USER JWT-+[\s\S]*-----BEGIN USER NKEY SEED-----\s*SU[A-Z2-7]+\s*-+END USER NKEY SEED-+/;

/** Whether `creds` looks like a NATS `.creds` file (a user JWT and a user seed). */
export function isNatsCreds(creds: string): boolean {
  return CREDS_PATTERN.test(creds);
}

/**
 * The connect options of cluster `cluster`'s agent: `{ authenticator, inboxPrefix }`. Throws
 * `invalid_argument` for a cluster name that is not an intent key or creds that are not a `.creds`
 * file (checked now for a string, at each connect for a function).
 */
export function natsConnectOptions(
  options: AgentNatsCredentialsOptions,
): AgentNatsConnectOptions {
  const { cluster, creds } = options;
  const problem = intentKeyProblem(cluster);
  if (problem !== undefined) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot use NATS credentials for cluster ${showValue(cluster)}: the name ${problem}`,
    );
  }
  const read = (): Uint8Array => {
    const text = typeof creds === "string" ? creds : creds();
    if (!isNatsCreds(text)) {
      throw new FlotillaError(
        "invalid_argument",
        `Cannot use NATS credentials for cluster ${showValue(cluster)}: creds is not a NATS .creds file (a user JWT and a user nkey seed)`,
      );
    }
    return new TextEncoder().encode(text);
  };
  if (typeof creds === "string") read();
  return {
    authenticator: credsAuthenticator(read),
    inboxPrefix: agentInboxPrefix(cluster),
  };
}
