/**
 * The hub's side of NATS authorization at start-up (main.ts): connecting as its own NATS user, and
 * with `--nats-auth-dir` (the directory `flotilla-hub nats-setup` wrote) what it needs to mint
 * agents' users in their own account and to revoke them (docs/security.md, "NATS: two accounts").
 * Every file is checked before the hub connects: a directory from an older setup (agents in the
 * hub's account) or one whose agents' account imports something else than this hub expects is
 * refused, naming the file.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  decode,
  fromSeed,
  parseCreds,
  type Account,
  type KeyPair,
} from "@nats-io/jwt";
import {
  credsAuthenticator,
  type Authenticator,
} from "@nats-io/transport-node";
import { canonicalJson, FlotillaError, showValue } from "@flotilla/core";
import { DEFAULT_INTENTS_PREFIX } from "@flotilla/protocol";
import type { AgentNatsCredentialsIssuer } from "./agent-nats-credentials.js";
import { createAgentNatsCredentialsIssuer } from "./agent-nats-issuer.js";
import type { AgentsAccountTemplate } from "./agents-account.js";
import {
  agentsAccountClaims,
  agentsAccountImports,
} from "./agents-account-claims.js";
import { NATS_SETUP_FILES } from "./nats-setup-files.js";

/** What {@link loadNatsAuth} reads. */
export interface NatsAuthConfig {
  readonly natsCredsFile: string | undefined;
  readonly natsAuthDir: string | undefined;
  readonly agentNatsServers: readonly string[];
  /** Intents prefix agents' permissions are scoped to; default `flotilla`. */
  readonly intentsPrefix?: string;
}

/** What the hub needs to keep the agents' account (agents-account.ts). */
export interface AgentsAccountAuth {
  /** Connect options of the hub's system-account user. */
  readonly systemConnectOptions: { readonly authenticator: Authenticator };
  readonly signer: KeyPair;
  readonly template: AgentsAccountTemplate;
}

/** The hub's NATS connection options and, with a setup directory, what agents' users need. */
export interface NatsAuth {
  /** Spread into nats.js `connect()` options. */
  readonly connectOptions: { readonly authenticator?: Authenticator };
  /** The flotilla account's public key, when the hub has credentials. */
  readonly accountPublicKey: string | undefined;
  readonly agentNatsCredentials: AgentNatsCredentialsIssuer | undefined;
  readonly agentsAccount: AgentsAccountAuth | undefined;
}

/** Reads the configured files; throws `invalid_argument` naming the file for bad content. */
export async function loadNatsAuth(config: NatsAuthConfig): Promise<NatsAuth> {
  const dir = config.natsAuthDir;
  const credsFile =
    dir === undefined
      ? config.natsCredsFile
      : join(dir, NATS_SETUP_FILES.hubCreds);
  if (credsFile === undefined) {
    return {
      connectOptions: {},
      accountPublicKey: undefined,
      agentNatsCredentials: undefined,
      agentsAccount: undefined,
    };
  }
  const creds = await readFile(credsFile);
  const accountPublicKey = await accountOfCreds(credsFile, creds);
  const connectOptions = { authenticator: credsAuthenticator(creds) };
  if (dir === undefined) {
    return {
      connectOptions,
      accountPublicKey,
      agentNatsCredentials: undefined,
      agentsAccount: undefined,
    };
  }
  const prefix = config.intentsPrefix ?? DEFAULT_INTENTS_PREFIX;
  const file = (name: keyof typeof NATS_SETUP_FILES): string =>
    join(dir, NATS_SETUP_FILES[name]);
  const systemCredsFile = file("hubSystemCreds");
  const systemCreds = await readFile(systemCredsFile);
  await accountOfCreds(systemCredsFile, systemCreds);
  const agentsSigning = await seedFile(file("agentsSigningKey"), "A");
  const signer = await seedFile(file("operatorSigningKey"), "O");
  const template = await readTemplate(file("agentsAccount"), {
    flotillaAccount: accountPublicKey,
    signingKey: agentsSigning.getPublicKey(),
    prefix,
  });
  let issuer: AgentNatsCredentialsIssuer;
  try {
    issuer = createAgentNatsCredentialsIssuer({
      signingKeySeed: new TextDecoder().decode(agentsSigning.getSeed()),
      accountPublicKey: template.publicKey,
      servers: config.agentNatsServers,
      intentsPrefix: prefix,
    });
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot use the agents' signing key "${file("agentsSigningKey")}": ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return {
    connectOptions,
    accountPublicKey,
    agentNatsCredentials: issuer,
    agentsAccount: {
      systemConnectOptions: {
        authenticator: credsAuthenticator(systemCreds),
      },
      signer,
      template,
    },
  };
}

async function accountOfCreds(
  file: string,
  creds: Uint8Array,
): Promise<string> {
  try {
    return (await parseCreds(creds)).aid;
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot use NATS credentials "${file}": it is not a .creds file with a valid user JWT`,
      { cause: error },
    );
  }
}

/** The key pair of a seed file whose public key starts with `kind` (A: account, O: operator). */
async function seedFile(file: string, kind: "A" | "O"): Promise<KeyPair> {
  const seed = (await readFile(file, "utf8")).trim();
  let kp: KeyPair;
  try {
    kp = fromSeed(new TextEncoder().encode(seed));
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot use the seed file "${file}": it is not an nkey seed`,
      { cause: error },
    );
  }
  if (!kp.getPublicKey().startsWith(kind)) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot use the seed file "${file}": it must hold an ${kind === "A" ? "account" : "operator"} signing key, not ${showValue(kp.getPublicKey().slice(0, 1))}-key`,
    );
  }
  return kp;
}

/** The agents' account JWT, checked against what this hub grants agents. */
async function readTemplate(
  file: string,
  expected: {
    readonly flotillaAccount: string;
    readonly signingKey: string;
    readonly prefix: string;
  },
): Promise<AgentsAccountTemplate> {
  const what = `Cannot use the agents' account "${file}"`;
  let claims;
  try {
    claims = decode<Account>((await readFile(file, "utf8")).trim());
  } catch (error) {
    throw new FlotillaError("invalid_argument", `${what}: it is not a JWT`, {
      cause: error,
    });
  }
  const account = claims.nats as Partial<Account> & { type?: string };
  if (account.type !== "account" || !/^A[A-Z2-7]{55}$/.test(claims.sub)) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: it is not an account JWT`,
    );
  }
  if (claims.sub === expected.flotillaAccount) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: it is the hub's own account; agents need an account of their own (run flotilla-hub nats-setup again)`,
    );
  }
  const signingKeys = (account.signing_keys ?? []).map((k) =>
    typeof k === "string" ? k : k.key,
  );
  if (!signingKeys.includes(expected.signingKey)) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: it does not list the agents' signing key ${expected.signingKey} (the files come from different setups)`,
    );
  }
  const imports = agentsAccountImports(
    expected.flotillaAccount,
    expected.prefix,
  );
  if (canonicalJson(account.imports ?? []) !== canonicalJson(imports)) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: its imports are ${showValue(account.imports ?? [])}, not the ${showValue(imports)} this hub grants agents (run flotilla-hub nats-setup again)`,
    );
  }
  // What the hub pushes is made the way the setup made it; only revocations are added.
  return {
    name: claims.name,
    publicKey: claims.sub,
    issuedAtS: claims.iat,
    claims: agentsAccountClaims({
      flotillaAccount: expected.flotillaAccount,
      signingKey: expected.signingKey,
      prefix: expected.prefix,
      revocations: {},
    }),
  };
}
