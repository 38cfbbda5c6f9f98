/**
 * The claims of the agents' NATS account (docs/security.md, "NATS: two accounts"): what
 * `nats-setup` signs with the operator key, and what the hub signs again with the operator's
 * signing key whenever it revokes an agent's user. One function makes both, so the account the
 * hub pushes never differs from the one the setup made except in its revocations.
 */
import type { Account, Import, RevocationList } from "@nats-io/jwt";
import { agentsAccountExports } from "@flotilla/protocol";
import { unlimitedConnections } from "./nats-limits.js";

/** What the agents' account is made of. */
export interface AgentsAccountInput {
  /** The flotilla account's public key: it exports what agents import. */
  readonly flotillaAccount: string;
  /** The public key of the signing key agents' users are signed with. */
  readonly signingKey: string;
  readonly prefix: string;
  /** User public key → revoke users issued before this time (unix seconds). */
  readonly revocations: RevocationList;
}

/** The imports the agents' account must have, from the flotilla account. */
export function agentsAccountImports(
  flotillaAccount: string,
  prefix: string,
): Import[] {
  return agentsAccountExports(prefix).map((e) => ({
    name: e.name,
    subject: e.subject,
    account: flotillaAccount,
    type: e.type,
  }));
}

/** The agents' account claims (no JetStream: its limits leave storage at 0). */
export function agentsAccountClaims(
  input: AgentsAccountInput,
): Partial<Account> {
  return {
    limits: unlimitedConnections(),
    signing_keys: [input.signingKey],
    imports: agentsAccountImports(input.flotillaAccount, input.prefix),
    // A user signed without permissions may do nothing (every agent's user carries its own).
    default_permissions: {
      pub: { deny: [">"] },
      sub: { deny: [">"] },
    },
    ...(Object.keys(input.revocations).length === 0
      ? {}
      : { revocations: input.revocations }),
  };
}
