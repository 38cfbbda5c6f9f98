/**
 * `flotilla-hub nats-setup --out DIR [--account NAME] [--resolver-dir DIR] [--force]`: what an
 * operator runs once to put NATS in operator mode for flotilla (nats-auth.ts). It writes the
 * files of {@link NATS_SETUP_FILES}, each readable by its owner only: the server configuration
 * fragment, what the hub reads with `--nats-auth-dir` (its two users, the agents' account and the
 * two signing keys), and the operator's seed, to be moved offline.
 *
 * Existing files are never overwritten without `--force`: a second run would otherwise lock out
 * every agent issued credentials by the first one.
 */
import { constants } from "node:fs";
import { access, chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { compact, FlotillaError, formatProblem } from "@flotilla/core";
import { createNatsAuthSetup } from "./nats-auth.js";
import { readSetupToKeep } from "./nats-setup-from.js";
import { HUB_NATS_AUTH_FILES, NATS_SETUP_FILES } from "./nats-setup-files.js";
import { NATS_SETUP_USAGE, parseNatsSetupArgs } from "./nats-setup-options.js";

export { NATS_SETUP_USAGE, parseNatsSetupArgs };
export type { NatsSetupArgs } from "./nats-setup-options.js";

/**
 * Creates the setup and writes its files; resolves to a summary for the operator. Throws a
 * FlotillaError (`already_exists` for files present without `force`, `invalid_argument` for a bad
 * account name) before writing anything.
 */
export async function runNatsSetup(args: {
  readonly outDir: string;
  readonly accountName?: string | undefined;
  readonly resolverDir?: string | undefined;
  readonly fromDir?: string | undefined;
  readonly force: boolean;
}): Promise<string> {
  const kept =
    args.fromDir === undefined
      ? undefined
      : await readSetupToKeep(args.fromDir);
  const setup = await createNatsAuthSetup({
    ...(kept === undefined
      ? {}
      : {
          accountName: kept.accountName,
          operatorName: kept.operatorName,
          ...(kept.agentsAccount === undefined
            ? {}
            : { agentsAccountName: kept.agentsAccount.name }),
          from: {
            operatorSeed: kept.operatorSeed,
            accountPublicKey: kept.accountPublicKey,
            ...(kept.agentsAccount === undefined
              ? {}
              : { agentsAccountPublicKey: kept.agentsAccount.publicKey }),
          },
        }),
    ...compact({
      accountName: args.accountName,
      resolverDir: args.resolverDir,
    }),
  });
  const files: readonly (readonly [string, string])[] = [
    [NATS_SETUP_FILES.serverConfig, setup.serverConfig],
    [NATS_SETUP_FILES.hubCreds, setup.hubCreds],
    [NATS_SETUP_FILES.hubSystemCreds, setup.hubSystemCreds],
    [NATS_SETUP_FILES.agentsAccount, `${setup.agentsAccount.jwt}\n`],
    [NATS_SETUP_FILES.agentsSigningKey, `${setup.agentsAccount.signingSeed}\n`],
    [NATS_SETUP_FILES.operatorSigningKey, `${setup.operator.signingSeed}\n`],
    [NATS_SETUP_FILES.operatorKey, `${setup.operator.seed}\n`],
  ];
  await mkdir(args.outDir, { recursive: true, mode: 0o700 });
  if (!args.force) {
    const present: string[] = [];
    for (const [name] of files) {
      if (await exists(join(args.outDir, name))) present.push(name);
    }
    if (present.length > 0) {
      throw new FlotillaError(
        "already_exists",
        `Cannot write the NATS setup to "${args.outDir}": ${present.join(", ")} already exist; pass --force to replace them (agents issued credentials by the old setup will be refused)`,
      );
    }
  }
  for (const [name, content] of files) {
    const file = join(args.outDir, name);
    // `wx` still guards against a file appearing since the check. The mode applies only when
    // a file is created, so a replaced file is narrowed explicitly.
    await writeFile(file, content, {
      mode: 0o600,
      flag: args.force ? "w" : "wx",
    });
    await chmod(file, 0o600);
  }
  return [
    `Wrote ${files.map(([name]) => name).join(", ")} to ${args.outDir}.`,
    `Account ${setup.account.name} (the hub's): ${setup.account.publicKey}`,
    `Account ${setup.agentsAccount.name} (agents'): ${setup.agentsAccount.publicKey}`,
    `Operator: ${setup.operator.publicKey}`,
    `Next: include ${NATS_SETUP_FILES.serverConfig} in nats-server's configuration (JetStream enabled) and restart it;`,
    `run the hub with --nats-auth-dir ${args.outDir} (it reads ${HUB_NATS_AUTH_FILES.map((f) => NATS_SETUP_FILES[f]).join(", ")});`,
    `move ${NATS_SETUP_FILES.operatorKey} offline.`,
  ].join("\n");
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/** Runs `flotilla-hub nats-setup ARGS`; resolves to the exit code (2: bad arguments or files). */
export async function natsSetupMain(argv: readonly string[]): Promise<number> {
  const parsed = parseNatsSetupArgs(argv);
  if (!parsed.ok) {
    for (const problem of parsed.problems) {
      process.stderr.write(
        `flotilla-hub nats-setup: ${formatProblem(problem)}\n`,
      );
    }
    process.stderr.write(
      "Run flotilla-hub nats-setup --help for the options.\n",
    );
    return 2;
  }
  if (parsed.value.help) {
    process.stdout.write(`${NATS_SETUP_USAGE}\n`);
    return 0;
  }
  try {
    process.stdout.write(`${await runNatsSetup(parsed.value)}\n`);
    return 0;
  } catch (error) {
    const e = FlotillaError.from(error);
    process.stderr.write(`flotilla-hub nats-setup: ${e.message}\n`);
    return e.code === "internal" ? 1 : 2;
  }
}
