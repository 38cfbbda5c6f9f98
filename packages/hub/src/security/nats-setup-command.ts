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
import {
  fail,
  FlotillaError,
  formatProblem,
  ok,
  type Problem,
  type Result,
  compact,
} from "@flotilla/core";
import { createNatsAuthSetup } from "./nats-auth.js";
import { readSetupToKeep } from "./nats-setup-from.js";
import { HUB_NATS_AUTH_FILES, NATS_SETUP_FILES } from "./nats-setup-files.js";

/** Usage of the subcommand. */
export const NATS_SETUP_USAGE = [
  "Usage: flotilla-hub nats-setup --out DIR [--from DIR] [--account NAME] [--resolver-dir DIR] [--force]",
  "",
  "Creates a NATS operator, the system account, the flotilla account (JetStream, the hub's)",
  "and the agents' account, and writes into DIR (mode 0600):",
  `  ${Object.values(NATS_SETUP_FILES).join(", ")}.`,
  "",
  "  --out DIR            directory to write to (created if missing)",
  "  --from DIR           keep the operator and the flotilla account of the setup in DIR (its",
  "                       JetStream data stays the hub's) and make every other key anew",
  "  --account NAME       name of the flotilla account (default flotilla)",
  "  --resolver-dir DIR   where nats-server keeps account JWTs (default /data/jwt)",
  "  --force              overwrite existing files",
  "  --help               print this help and exit",
].join("\n");

/** Parsed arguments of the subcommand. */
export type NatsSetupArgs =
  | { readonly help: true }
  | {
      readonly help: false;
      readonly outDir: string;
      readonly accountName: string | undefined;
      readonly resolverDir: string | undefined;
      readonly fromDir: string | undefined;
      readonly force: boolean;
    };

/** Parses the subcommand's arguments (after `nats-setup`); every problem names its flag. */
export function parseNatsSetupArgs(
  argv: readonly string[],
): Result<NatsSetupArgs> {
  const problems: Problem[] = [];
  let outDir: string | undefined;
  let accountName: string | undefined;
  let resolverDir: string | undefined;
  let fromDir: string | undefined;
  let force = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    if (flag === "--help" || flag === "-h") return ok({ help: true });
    if (flag === "--force" && inline === undefined) {
      force = true;
      continue;
    }
    if (
      flag === "--out" ||
      flag === "--account" ||
      flag === "--resolver-dir" ||
      flag === "--from"
    ) {
      const value =
        inline ??
        (argv[i + 1]?.startsWith("--") === false ? argv[++i] : undefined);
      if (value === undefined || value === "") {
        problems.push({ path: flag, message: `needs a value: ${flag} VALUE` });
      } else if (flag === "--out") outDir = value;
      else if (flag === "--account") accountName = value;
      else if (flag === "--from") fromDir = value;
      else resolverDir = value;
      continue;
    }
    problems.push({
      path: arg.startsWith("-") ? flag : "argv",
      message: "unknown argument of nats-setup (see nats-setup --help)",
      value: arg,
    });
  }
  if (outDir === undefined && !problems.some((p) => p.path === "--out")) {
    problems.push({ path: "--out", message: "is required: --out DIR" });
  }
  if (problems.length > 0 || outDir === undefined) return fail(problems);
  if (fromDir !== undefined && accountName !== undefined) {
    problems.push({
      path: "--account",
      message:
        "cannot be given with --from: the flotilla account is the one of --from",
      value: accountName,
    });
  }
  if (problems.length > 0) return fail(problems);
  return ok({ help: false, outDir, accountName, resolverDir, fromDir, force });
}

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
