/**
 * The hub's side of NATS authorization at start-up (main.ts): connecting as its own NATS user
 * (`--nats-creds`) and, with `--nats-account-signing-key`, the issuer of agents' NATS credentials.
 * The agents' account is read from the hub's own user JWT (its issuer account), so the two files
 * written by `flotilla-hub nats-setup` are all the hub needs.
 */
import { readFile } from "node:fs/promises";
import { parseCreds } from "@nats-io/jwt";
import {
  credsAuthenticator,
  type Authenticator,
} from "@nats-io/transport-node";
import { FlotillaError } from "@flotilla/core";
import type { AgentNatsCredentialsIssuer } from "./agent-nats-credentials.js";
import { createAgentNatsCredentialsIssuer } from "./agent-nats-issuer.js";

/** What {@link loadNatsAuth} reads. */
export interface NatsAuthConfig {
  readonly natsCredsFile: string | undefined;
  readonly natsAccountSigningKeyFile: string | undefined;
  readonly agentNatsServers: readonly string[];
  /** Intents prefix agents' permissions are scoped to; default `flotilla`. */
  readonly intentsPrefix?: string;
}

/** The hub's NATS connection options and, when configured, the agent credentials issuer. */
export interface NatsAuth {
  /** Spread into nats.js `connect()` options. */
  readonly connectOptions: { readonly authenticator?: Authenticator };
  /** The flotilla account's public key, when the hub has credentials. */
  readonly accountPublicKey: string | undefined;
  readonly agentNatsCredentials: AgentNatsCredentialsIssuer | undefined;
}

/** Reads the configured files; throws `invalid_argument` naming the file for bad content. */
export async function loadNatsAuth(config: NatsAuthConfig): Promise<NatsAuth> {
  if (config.natsCredsFile === undefined) {
    if (config.natsAccountSigningKeyFile !== undefined) {
      throw new FlotillaError(
        "invalid_argument",
        "Cannot issue agents' NATS credentials: --nats-account-signing-key needs --nats-creds (the account is the hub user's)",
      );
    }
    return {
      connectOptions: {},
      accountPublicKey: undefined,
      agentNatsCredentials: undefined,
    };
  }
  const credsFile = config.natsCredsFile;
  const creds = await readFile(credsFile);
  let accountPublicKey: string;
  try {
    accountPublicKey = (await parseCreds(creds)).aid;
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot use NATS credentials "${credsFile}": it is not a .creds file with a valid user JWT`,
      { cause: error },
    );
  }
  const connectOptions = { authenticator: credsAuthenticator(creds) };
  const keyFile = config.natsAccountSigningKeyFile;
  if (keyFile === undefined) {
    return {
      connectOptions,
      accountPublicKey,
      agentNatsCredentials: undefined,
    };
  }
  const seed = (await readFile(keyFile, "utf8")).trim();
  let issuer: AgentNatsCredentialsIssuer;
  try {
    issuer = createAgentNatsCredentialsIssuer({
      signingKeySeed: seed,
      accountPublicKey,
      servers: config.agentNatsServers,
      ...(config.intentsPrefix === undefined
        ? {}
        : { intentsPrefix: config.intentsPrefix }),
    });
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot use the account signing key "${keyFile}": ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return { connectOptions, accountPublicKey, agentNatsCredentials: issuer };
}
