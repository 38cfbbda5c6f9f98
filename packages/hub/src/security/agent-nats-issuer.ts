/**
 * The AgentNatsCredentialsIssuer adapter (agent-nats-credentials.ts): mints, per registration or
 * renewal, a NATS user for one cluster's agent in the agents' account, signed with that account's
 * signing key (nats-auth.ts). The user may do exactly what `agentNatsPermissions` of
 * @flotilla/protocol lists (its own intent, sealed bundle content, its own inbox) and expires with
 * the agent's identity: the server refuses it at connect after that and closes connections still
 * using it. Removing the cluster revokes it earlier (agents-account.ts).
 */
import { createUser, encodeUser, fmtCreds, fromSeed } from "@nats-io/jwt";
import { FlotillaError, showValue } from "@flotilla/core";
import {
  agentNatsPermissions,
  DEFAULT_INTENTS_PREFIX,
  intentKey,
  intentsBucket,
} from "@flotilla/protocol";
import type {
  AgentNatsCredentials,
  AgentNatsCredentialsIssuer,
} from "./agent-nats-credentials.js";

/** Options of {@link createAgentNatsCredentialsIssuer}. */
export interface AgentNatsCredentialsIssuerOptions {
  /** The agents' account signing key's seed (`SA…`, the content of `agents-signing.nk`). */
  readonly signingKeySeed: string;
  /** The agents' account's public key (`A…`), the issuer account of every agent user. */
  readonly accountPublicKey: string;
  /** NATS URLs agents are told to connect to. */
  readonly servers: readonly string[];
  /** Intents prefix (buckets and subjects); default `flotilla`. */
  readonly intentsPrefix?: string;
  /** The clock, for refusing expiries in the past; default Date.now. */
  readonly now?: () => number;
}

/** The NATS user name of cluster `cluster`'s agent. */
export function agentNatsUserName(cluster: string): string {
  return `cluster:${cluster}`;
}

/** Creates the issuer; throws `invalid_argument` for a bad seed, account key or server list. */
export function createAgentNatsCredentialsIssuer(
  options: AgentNatsCredentialsIssuerOptions,
): AgentNatsCredentialsIssuer {
  const what = "Cannot create the agent NATS credentials issuer";
  const seed = options.signingKeySeed.trim();
  let signer: ReturnType<typeof fromSeed>;
  try {
    signer = fromSeed(new TextEncoder().encode(seed));
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: signingKeySeed is not an nkey seed`,
      { cause: error },
    );
  }
  if (!signer.getPublicKey().startsWith("A")) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: signingKeySeed must be an account signing key (its public key starts with "A"), not ${showValue(signer.getPublicKey())}`,
    );
  }
  if (!/^A[A-Z2-7]{55}$/.test(options.accountPublicKey)) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: accountPublicKey ${showValue(options.accountPublicKey)} must be an account public key ("A" and 55 base32 characters)`,
    );
  }
  if (options.servers.length === 0) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: servers must list at least one NATS URL`,
    );
  }
  const prefix = options.intentsPrefix ?? DEFAULT_INTENTS_PREFIX;
  const bucket = intentsBucket(prefix);
  const now = options.now ?? Date.now;
  const servers = [...options.servers];
  const account = options.accountPublicKey;

  return {
    async issue(
      cluster: string,
      expiresAtMs: number,
    ): Promise<AgentNatsCredentials> {
      const key = intentKey(cluster);
      if (!Number.isSafeInteger(expiresAtMs) || expiresAtMs <= now()) {
        throw new FlotillaError(
          "invalid_argument",
          `Cannot issue NATS credentials for cluster ${showValue(cluster)}: expiresAtMs ${String(expiresAtMs)} must be a time in the future`,
        );
      }
      const permissions = agentNatsPermissions(key, prefix);
      const user = createUser();
      const jwt = await encodeUser(
        agentNatsUserName(key),
        user,
        account,
        {
          pub: { allow: [...permissions.publish] },
          sub: { allow: [...permissions.subscribe] },
          // A bearer token would let anyone holding the JWT connect without the seed.
          bearer_token: false,
        },
        // JWT expiry is in whole seconds; rounding down never outlives the identity.
        { signer, exp: Math.floor(expiresAtMs / 1000) },
      );
      return {
        servers,
        creds: new TextDecoder().decode(fmtCreds(jwt, user)),
        intentBucket: bucket,
        intentKey: key,
        userPublicKey: user.getPublicKey(),
      };
    },
  };
}
