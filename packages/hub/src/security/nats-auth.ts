/**
 * NATS decentralized JWT authorization for a flotilla deployment (issue 6, "NATS authorization").
 *
 * {@link createNatsAuthSetup} makes, once, everything a nats-server 2.9 needs to run in operator
 * mode: an operator, a system account, and the flotilla account (JetStream enabled) whose users
 * are signed by a separate account signing key. The hub holds that signing key and mints a user
 * per agent (agent-nats-issuer.ts) whose permissions allow reading only its own cluster's intent;
 * the hub's own user has every permission in the account. The account's identity key is thrown
 * away: users are signed by the signing key, and the account JWT is re-signed by the operator.
 *
 * The server configuration uses the memory resolver with both account JWTs preloaded, so the
 * server needs no account server; changing an account (a revocation, new limits) means
 * re-rendering the configuration and reloading the server.
 */
import {
  createAccount,
  createOperator,
  createUser,
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
  type OperatorLimits,
} from "@nats-io/jwt";
import { FlotillaError } from "@flotilla/core";

/** JetStream limits of the flotilla account; -1 is unlimited. */
export interface NatsJetStreamLimits {
  readonly memoryBytes: number;
  readonly diskBytes: number;
  readonly streams: number;
  readonly consumers: number;
}

/** Options of {@link createNatsAuthSetup}. */
export interface NatsAuthSetupOptions {
  /** Name of the account flotilla runs in; default `flotilla`. */
  readonly accountName?: string;
  /** Operator name; default `flotilla-operator`. */
  readonly operatorName?: string;
  /** JetStream limits of the account; default unlimited. */
  readonly jetStream?: Partial<NatsJetStreamLimits>;
}

/** What {@link createNatsAuthSetup} made: keys, JWTs, the hub's creds and the server config. */
export interface NatsAuthSetup {
  readonly operator: {
    readonly publicKey: string;
    readonly jwt: string;
    /** Kept offline: only needed to sign accounts again. */
    readonly seed: string;
  };
  readonly systemAccount: { readonly publicKey: string; readonly jwt: string };
  readonly account: {
    readonly name: string;
    readonly publicKey: string;
    readonly jwt: string;
    /** The signing key's public key, listed in the account JWT. */
    readonly signingKey: string;
    /** The signing key's seed: the hub mints agent users with it. */
    readonly signingSeed: string;
  };
  /** The hub user's `.creds` file (every permission in the account, no expiry). */
  readonly hubCreds: string;
  /** A nats-server configuration fragment: operator, system account, memory resolver. */
  readonly serverConfig: string;
}

const ACCOUNT_NAME_PATTERN = /^[A-Za-z0-9][-_A-Za-z0-9]{0,63}$/;
const UNLIMITED = -1;

/** Name of the hub's NATS user. */
export const HUB_NATS_USER = "flotilla-hub";

/** Creates an operator, a system account and the flotilla account with its hub user. */
export async function createNatsAuthSetup(
  options: NatsAuthSetupOptions = {},
): Promise<NatsAuthSetup> {
  const accountName = options.accountName ?? "flotilla";
  const operatorName = options.operatorName ?? "flotilla-operator";
  for (const [field, value] of [
    ["accountName", accountName],
    ["operatorName", operatorName],
  ] as const) {
    if (!ACCOUNT_NAME_PATTERN.test(value) || value === "SYS") {
      throw new FlotillaError(
        "invalid_argument",
        `Cannot create the NATS authorization setup: ${field} ${JSON.stringify(value)} must be 1 to 64 of A-Z, a-z, 0-9, - and _, starting alphanumeric, and not SYS`,
      );
    }
  }
  const jetStream = jetStreamLimits(options.jetStream ?? {});

  const operator = createOperator();
  const system = createAccount();
  const account = createAccount();
  const signing = createAccount();
  const hub = createUser();
  const seed = (kp: { getSeed(): Uint8Array }): string =>
    new TextDecoder().decode(kp.getSeed());

  const operatorJwt = await encodeOperator(operatorName, operator, {
    system_account: system.getPublicKey(),
  });
  const systemJwt = await encodeAccount(
    "SYS",
    system,
    { limits: connectionLimits() },
    { signer: operator },
  );
  const accountJwt = await encodeAccount(
    accountName,
    account,
    {
      limits: { ...connectionLimits(), ...jetStream },
      signing_keys: [signing.getPublicKey()],
    },
    { signer: operator },
  );
  const hubJwt = await encodeUser(
    HUB_NATS_USER,
    hub,
    account.getPublicKey(),
    {},
    { signer: signing },
  );
  return {
    operator: {
      publicKey: operator.getPublicKey(),
      jwt: operatorJwt,
      seed: seed(operator),
    },
    systemAccount: { publicKey: system.getPublicKey(), jwt: systemJwt },
    account: {
      name: accountName,
      publicKey: account.getPublicKey(),
      jwt: accountJwt,
      signingKey: signing.getPublicKey(),
      signingSeed: seed(signing),
    },
    hubCreds: new TextDecoder().decode(fmtCreds(hubJwt, hub)),
    serverConfig: renderServerConfig({
      operatorJwt,
      accounts: [
        { name: "SYS", publicKey: system.getPublicKey(), jwt: systemJwt },
        {
          name: accountName,
          publicKey: account.getPublicKey(),
          jwt: accountJwt,
        },
      ],
    }),
  };
}

function connectionLimits(): OperatorLimits {
  return {
    subs: UNLIMITED,
    data: UNLIMITED,
    payload: UNLIMITED,
    imports: UNLIMITED,
    exports: UNLIMITED,
    wildcards: true,
    conn: UNLIMITED,
    leaf: UNLIMITED,
  };
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
  readonly accounts: readonly {
    readonly name: string;
    readonly publicKey: string;
    readonly jwt: string;
  }[];
}): string {
  const [system] = input.accounts;
  if (system === undefined) throw new Error("no system account");
  return [
    "# NATS decentralized authorization for flotilla (flotilla-hub nats-setup).",
    "# Include it in the server's configuration; keep operator.nk offline.",
    `operator: ${JSON.stringify(input.operatorJwt)}`,
    `system_account: ${JSON.stringify(system.publicKey)}`,
    "resolver: MEMORY",
    "resolver_preload: {",
    ...input.accounts.flatMap((a) => [
      `  # ${a.name}`,
      `  ${JSON.stringify(a.publicKey)}: ${JSON.stringify(a.jwt)}`,
    ]),
    "}",
    "",
  ].join("\n");
}
