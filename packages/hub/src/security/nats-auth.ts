/**
 * NATS decentralized JWT authorization for a flotilla deployment (docs/security.md, "NATS: two
 * accounts").
 *
 * {@link createNatsAuthSetup} makes, once, everything a nats-server 2.9 needs to run in operator
 * mode:
 *
 * * an operator, with a signing key the hub holds to re-sign the agents' account when it revokes
 *   an agent's user (the operator's own key goes offline);
 * * the system account, with a user for the hub allowed only to push account updates;
 * * the flotilla account (JetStream enabled), the hub's alone: state, audit stream, intents and
 *   bundle content. It exports the few reads agents need (agent-nats-permissions.ts in
 *   @flotilla/protocol);
 * * the agents' account (no JetStream), which imports those reads. Its users, one per agent, are
 *   signed by a signing key the hub holds (agent-nats-issuer.ts).
 *
 * The server configuration uses the full (directory) account resolver with the three accounts
 * preloaded, so that the hub can push a new agents' account JWT at run time (a revocation) with
 * no reload; the server keeps it in the resolver directory.
 */
import {
  createAccount,
  createOperator,
  createUser,
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
  fromSeed,
  type OperatorLimits,
} from "@nats-io/jwt";
import { FlotillaError } from "@flotilla/core";
import {
  agentsAccountExports,
  DEFAULT_INTENTS_PREFIX,
} from "@flotilla/protocol";
import { agentsAccountClaims } from "./agents-account-claims.js";
import { unlimitedConnections } from "./nats-limits.js";

/** JetStream limits of the flotilla account; -1 is unlimited. */
export interface NatsJetStreamLimits {
  readonly memoryBytes: number;
  readonly diskBytes: number;
  readonly streams: number;
  readonly consumers: number;
}

/** Options of {@link createNatsAuthSetup}. */
export interface NatsAuthSetupOptions {
  /** Name of the account the hub runs in; default `flotilla`. */
  readonly accountName?: string;
  /** Name of the agents' account; default `flotilla-agents`. */
  readonly agentsAccountName?: string;
  /** Operator name; default `flotilla-operator`. */
  readonly operatorName?: string;
  /** JetStream limits of the flotilla account; default unlimited. */
  readonly jetStream?: Partial<NatsJetStreamLimits>;
  /** Where nats-server keeps account JWTs (the full resolver's directory); default `/data/jwt`. */
  readonly resolverDir?: string;
  /** The intents prefix the exports name; default `flotilla`. */
  readonly intentsPrefix?: string;
  /**
   * Keep the operator, the flotilla account (its JetStream data belongs to the account's public
   * key) and the agents' account of an earlier setup, each re-signed with new signing keys, and
   * make every other key anew: rotation, or an upgrade from a setup where agents shared the hub's
   * account (nats-setup-from.ts). Users signed with the old signing keys are refused from then on.
   */
  readonly from?: {
    /** The operator's seed (`operator.nk`). */
    readonly operatorSeed: string;
    /** The flotilla account's public key. */
    readonly accountPublicKey: string;
    /** The agents' account's public key; absent: a new agents' account. */
    readonly agentsAccountPublicKey?: string;
  };
}

/** What {@link createNatsAuthSetup} made: keys, JWTs, the hub's credentials, the server config. */
export interface NatsAuthSetup {
  readonly operator: {
    readonly publicKey: string;
    readonly jwt: string;
    /** Kept offline: only needed to change the operator or the system and flotilla accounts. */
    readonly seed: string;
    /** The hub re-signs the agents' account with it (revocations). */
    readonly signingSeed: string;
  };
  readonly systemAccount: { readonly publicKey: string; readonly jwt: string };
  readonly account: {
    readonly name: string;
    readonly publicKey: string;
    readonly jwt: string;
  };
  readonly agentsAccount: {
    readonly name: string;
    readonly publicKey: string;
    /** Signed by the operator; the hub's template for the JWTs it pushes. */
    readonly jwt: string;
    /** The hub mints agent users with it. */
    readonly signingSeed: string;
  };
  /** The hub's user in the flotilla account (every permission there, no expiry). */
  readonly hubCreds: string;
  /** The hub's user in the system account: may push account JWTs, nothing else. */
  readonly hubSystemCreds: string;
  /** A nats-server configuration fragment: operator, system account, full resolver, preload. */
  readonly serverConfig: string;
}

const ACCOUNT_NAME_PATTERN = /^[A-Za-z0-9][-_A-Za-z0-9]{0,63}$/;
const UNLIMITED = -1;

/** Name of the hub's NATS user. */
export const HUB_NATS_USER = "flotilla-hub";

/** The subjects a system-account user publishes account JWTs to (full resolver). */
export const CLAIMS_UPDATE_SUBJECT = "$SYS.REQ.CLAIMS.UPDATE";

/** Creates an operator, the system, flotilla and agents' accounts, and the hub's users. */
export async function createNatsAuthSetup(
  options: NatsAuthSetupOptions = {},
): Promise<NatsAuthSetup> {
  const accountName = options.accountName ?? "flotilla";
  const agentsAccountName = options.agentsAccountName ?? "flotilla-agents";
  const operatorName = options.operatorName ?? "flotilla-operator";
  const resolverDir = options.resolverDir ?? "/data/jwt";
  const prefix = options.intentsPrefix ?? DEFAULT_INTENTS_PREFIX;
  const what = "Cannot create the NATS authorization setup";
  for (const [field, value] of [
    ["accountName", accountName],
    ["agentsAccountName", agentsAccountName],
    ["operatorName", operatorName],
  ] as const) {
    if (!ACCOUNT_NAME_PATTERN.test(value) || value === "SYS") {
      throw new FlotillaError(
        "invalid_argument",
        `${what}: ${field} ${JSON.stringify(value)} must be 1 to 64 of A-Z, a-z, 0-9, - and _, starting alphanumeric, and not SYS`,
      );
    }
  }
  if (accountName === agentsAccountName) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: agentsAccountName must differ from accountName, both are ${JSON.stringify(accountName)}`,
    );
  }
  if (resolverDir === "" || /["\n\r]/.test(resolverDir)) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: resolverDir ${JSON.stringify(resolverDir)} must be a non-empty path without quotes or line breaks`,
    );
  }
  const jetStream = jetStreamLimits(options.jetStream ?? {});

  const operator =
    options.from === undefined
      ? createOperator()
      : operatorOfSeed(options.from.operatorSeed);
  const operatorSigning = createOperator();
  const system = createAccount();
  const accountPublicKey =
    options.from?.accountPublicKey ?? createAccount().getPublicKey();
  // The hub's user is signed with a signing key of the account; the account's own key, and this
  // signing key, are not kept: a later setup `from` this one lists a new signing key instead.
  const accountSigning = createAccount();
  // Kept from an earlier setup, its JWT replaces the one the server holds (a newer one, with a
  // new signing key), so users of the old one are refused; a new account would leave the old
  // one trusted in the server's resolver directory.
  const agentsPublicKey =
    options.from?.agentsAccountPublicKey ?? createAccount().getPublicKey();
  const agentsSigning = createAccount();
  const hub = createUser();
  const hubSystem = createUser();
  const seed = (kp: { getSeed(): Uint8Array }): string =>
    new TextDecoder().decode(kp.getSeed());

  const operatorJwt = await encodeOperator(operatorName, operator, {
    system_account: system.getPublicKey(),
    signing_keys: [operatorSigning.getPublicKey()],
  });
  const systemJwt = await encodeAccount(
    "SYS",
    system,
    { limits: unlimitedConnections() },
    { signer: operator },
  );
  const accountJwt = await encodeAccount(
    accountName,
    accountPublicKey,
    {
      limits: { ...unlimitedConnections(), ...jetStream },
      signing_keys: [accountSigning.getPublicKey()],
      exports: agentsAccountExports(prefix).map((e) => ({
        name: e.name,
        subject: e.subject,
        type: e.type,
        ...(e.type === "service"
          ? { response_type: "Singleton" as const }
          : {}),
      })),
    },
    { signer: operator },
  );
  const agentsJwt = await encodeAccount(
    agentsAccountName,
    agentsPublicKey,
    agentsAccountClaims({
      flotillaAccount: accountPublicKey,
      signingKey: agentsSigning.getPublicKey(),
      prefix,
      revocations: {},
    }),
    { signer: operator },
  );
  const hubJwt = await encodeUser(
    HUB_NATS_USER,
    hub,
    accountPublicKey,
    {},
    { signer: accountSigning },
  );
  const hubSystemJwt = await encodeUser(
    `${HUB_NATS_USER}-system`,
    hubSystem,
    system,
    {
      pub: {
        allow: [CLAIMS_UPDATE_SUBJECT, "$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE"],
      },
      sub: { allow: ["_INBOX.>"] },
    },
  );
  const creds = (jwt: string, kp: Parameters<typeof fmtCreds>[1]): string =>
    new TextDecoder().decode(fmtCreds(jwt, kp));
  return {
    operator: {
      publicKey: operator.getPublicKey(),
      jwt: operatorJwt,
      seed: seed(operator),
      signingSeed: seed(operatorSigning),
    },
    systemAccount: { publicKey: system.getPublicKey(), jwt: systemJwt },
    account: {
      name: accountName,
      publicKey: accountPublicKey,
      jwt: accountJwt,
    },
    agentsAccount: {
      name: agentsAccountName,
      publicKey: agentsPublicKey,
      jwt: agentsJwt,
      signingSeed: seed(agentsSigning),
    },
    hubCreds: creds(hubJwt, hub),
    hubSystemCreds: creds(hubSystemJwt, hubSystem),
    serverConfig: renderServerConfig({
      operatorJwt,
      systemAccount: system.getPublicKey(),
      resolverDir,
      accounts: [
        { name: "SYS", publicKey: system.getPublicKey(), jwt: systemJwt },
        {
          name: accountName,
          publicKey: accountPublicKey,
          jwt: accountJwt,
        },
        {
          name: agentsAccountName,
          publicKey: agentsPublicKey,
          jwt: agentsJwt,
        },
      ],
    }),
  };
}

function operatorOfSeed(seed: string): ReturnType<typeof createOperator> {
  let kp;
  try {
    kp = fromSeed(new TextEncoder().encode(seed.trim()));
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      "Cannot create the NATS authorization setup: from.operatorSeed is not an nkey seed",
      { cause: error },
    );
  }
  if (!kp.getPublicKey().startsWith("O")) {
    throw new FlotillaError(
      "invalid_argument",
      "Cannot create the NATS authorization setup: from.operatorSeed is not an operator's seed",
    );
  }
  return kp;
}

function jetStreamLimits(given: Partial<NatsJetStreamLimits>): OperatorLimits {
  const limits: NatsJetStreamLimits = {
    memoryBytes: UNLIMITED,
    diskBytes: UNLIMITED,
    streams: UNLIMITED,
    consumers: UNLIMITED,
    ...given,
  };
  for (const [field, value] of Object.entries(limits)) {
    // 0 would switch JetStream off for the account (storage) or forbid every stream.
    if (!Number.isSafeInteger(value) || (value < 1 && value !== UNLIMITED)) {
      throw new FlotillaError(
        "invalid_argument",
        `Cannot create the NATS authorization setup: jetStream.${field} must be a positive whole number or -1 (unlimited), not ${String(value)}`,
      );
    }
  }
  return {
    mem_storage: limits.memoryBytes,
    disk_storage: limits.diskBytes,
    streams: limits.streams,
    consumer: limits.consumers,
  };
}

/** Renders the nats-server configuration fragment of an operator setup. */
function renderServerConfig(input: {
  readonly operatorJwt: string;
  readonly systemAccount: string;
  readonly resolverDir: string;
  readonly accounts: readonly {
    readonly name: string;
    readonly publicKey: string;
    readonly jwt: string;
  }[];
}): string {
  return [
    "# NATS decentralized authorization for flotilla (flotilla-hub nats-setup).",
    "# Include it in the server's configuration; keep operator.nk offline.",
    `operator: ${JSON.stringify(input.operatorJwt)}`,
    `system_account: ${JSON.stringify(input.systemAccount)}`,
    "# The hub pushes the agents' account (revocations) at run time; the server keeps the",
    "# newest JWT of each account in this directory. Deletes are not allowed.",
    "resolver: {",
    "  type: full",
    `  dir: ${JSON.stringify(input.resolverDir)}`,
    "  allow_delete: false",
    '  interval: "2m"',
    "}",
    "resolver_preload: {",
    ...input.accounts.flatMap((a) => [
      `  # ${a.name}`,
      `  ${JSON.stringify(a.publicKey)}: ${JSON.stringify(a.jwt)}`,
    ]),
    "}",
    "",
  ].join("\n");
}
