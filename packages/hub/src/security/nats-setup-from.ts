/**
 * What `flotilla-hub nats-setup --from DIR` keeps of an earlier setup: its operator (from
 * `operator.nk`), its flotilla account's public key and, when it has one, its agents' account's
 * (from `nats-auth.conf`). The new setup's server trusts the same operator, the hub finds its
 * JetStream data (which belongs to the flotilla account's public key), and the agents' account
 * is replaced by a newer JWT rather than left trusted beside a new one. Every signing key and
 * user is made anew (nats-auth.ts): rotation, or the upgrade from a setup where agents shared the
 * hub's account (docs/security.md, "Rotation").
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { decode, fromSeed } from "@nats-io/jwt";
import { FlotillaError, showValue } from "@flotilla/core";
import { NATS_SETUP_FILES } from "./nats-setup-files.js";

/** The parts of an earlier setup a new one keeps. */
export interface KeptSetup {
  readonly operatorSeed: string;
  readonly operatorName: string;
  readonly accountPublicKey: string;
  readonly accountName: string;
  /** Absent in a setup where agents shared the hub's account. */
  readonly agentsAccount?: {
    readonly publicKey: string;
    readonly name: string;
  };
}

interface AccountClaims {
  readonly type?: string;
  readonly limits?: {
    readonly disk_storage?: number;
    readonly mem_storage?: number;
  };
  readonly imports?: readonly { readonly account?: string }[];
}

/** Reads `dir` (an earlier `nats-setup --out`); `invalid_argument` naming the file otherwise. */
export async function readSetupToKeep(dir: string): Promise<KeptSetup> {
  const seedFile = join(dir, NATS_SETUP_FILES.operatorKey);
  const confFile = join(dir, NATS_SETUP_FILES.serverConfig);
  const what = `Cannot set NATS up again from "${dir}"`;
  const read = async (file: string): Promise<string> => {
    try {
      return await readFile(file, "utf8");
    } catch (error) {
      throw new FlotillaError(
        "invalid_argument",
        `${what}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
        { cause: error },
      );
    }
  };
  const operatorSeed = (await read(seedFile)).trim();
  let operatorPublicKey: string;
  try {
    operatorPublicKey = fromSeed(
      new TextEncoder().encode(operatorSeed),
    ).getPublicKey();
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: ${seedFile} is not an nkey seed`,
      { cause: error },
    );
  }
  const conf = await read(confFile);
  const operatorJwt = /^operator:\s*"([^"]+)"/m.exec(conf)?.[1];
  const systemAccount = /^system_account:\s*"([^"]+)"/m.exec(conf)?.[1];
  if (operatorJwt === undefined || systemAccount === undefined) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: ${confFile} names no operator or system_account (is it nats-setup's?)`,
    );
  }
  const operator = decode(operatorJwt);
  if (operator.sub !== operatorPublicKey) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: ${seedFile} is the seed of operator ${operatorPublicKey}, but ${confFile} trusts ${showValue(operator.sub)}`,
    );
  }
  // The account with JetStream that is not the system account: the hub's.
  const candidates: { publicKey: string; name: string }[] = [];
  const others: {
    publicKey: string;
    name: string;
    claims: AccountClaims;
  }[] = [];
  for (const [, publicKey, jwt] of conf.matchAll(
    /"(A[A-Z2-7]{55})"\s*:\s*"([^"]+)"/g,
  )) {
    if (publicKey === undefined || jwt === undefined) continue;
    if (publicKey === systemAccount) continue;
    const claims = decode<AccountClaims>(jwt);
    const limits = claims.nats.limits ?? {};
    if ((limits.disk_storage ?? 0) !== 0 || (limits.mem_storage ?? 0) !== 0)
      candidates.push({ publicKey, name: claims.name });
    else others.push({ publicKey, name: claims.name, claims: claims.nats });
  }
  const [account, ...more] = candidates;
  if (account === undefined || more.length > 0) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: ${confFile} preloads ${String(candidates.length)} accounts with JetStream, not exactly one (the hub's)`,
    );
  }
  // The agents' account is the one that imports from the hub's.
  const agents = others.find((o) =>
    (o.claims.imports ?? []).some((i) => i.account === account.publicKey),
  );
  return {
    operatorSeed,
    operatorName: operator.name,
    accountPublicKey: account.publicKey,
    accountName: account.name,
    ...(agents === undefined
      ? {}
      : { agentsAccount: { publicKey: agents.publicKey, name: agents.name } }),
  };
}
