/**
 * The flags of `flotilla-hub nats-setup` (nats-setup-command.ts), declared once for reading and
 * for usage.
 */
import { fail, ok, type Problem, type Result } from "@flotilla/core";
import {
  gatherOptions,
  onOff,
  option,
  renderOptions,
  text,
} from "@flotilla/node";
import { NATS_SETUP_FILES } from "./nats-setup-files.js";

const NATS_SETUP_OPTIONS = {
  outDir: option({
    flag: "--out",
    arg: "DIR",
    required: true,
    help: "directory to write to (created if missing)",
    parse: text,
  }),
  fromDir: option({
    flag: "--from",
    arg: "DIR",
    help: "keep the operator and the flotilla account of the setup in DIR (its\nJetStream data stays the hub's) and make every other key anew",
    parse: text,
  }),
  accountName: option({
    flag: "--account",
    arg: "NAME",
    help: "name of the flotilla account (default flotilla)",
    parse: text,
  }),
  resolverDir: option({
    flag: "--resolver-dir",
    arg: "DIR",
    help: "where nats-server keeps account JWTs (default /data/jwt)",
    parse: text,
  }),
  force: option({
    flag: "--force",
    help: "overwrite existing files",
    parse: onOff(),
  }),
  help: option({
    flag: "--help",
    short: "-h",
    help: "print this help and exit",
    parse: text,
  }),
};

/** Usage of the subcommand. */
export const NATS_SETUP_USAGE = [
  "Usage: flotilla-hub nats-setup --out DIR [--from DIR] [--account NAME] [--resolver-dir DIR] [--force]",
  "",
  "Creates a NATS operator, the system account, the flotilla account (JetStream, the hub's)",
  "and the agents' account, and writes into DIR (mode 0600):",
  `  ${Object.values(NATS_SETUP_FILES).join(", ")}.`,
  "",
  ...renderOptions(NATS_SETUP_OPTIONS, { column: 22 }),
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

const UNKNOWN = "unknown argument of nats-setup (see nats-setup --help)";

/** Parses the subcommand's arguments (after `nats-setup`); every problem names its flag. */
export function parseNatsSetupArgs(
  argv: readonly string[],
): Result<NatsSetupArgs> {
  const { values, sources, problems } = gatherOptions(
    NATS_SETUP_OPTIONS,
    argv,
    {},
    {
      positional: UNKNOWN,
      unknownFlag: () => UNKNOWN,
      missingValue: (spec) => `needs a value: ${spec.flag} VALUE`,
      emptyValue: "missing",
      switchValues: false,
      repeated: "last",
    },
  );
  // `--help=ANYTHING` asks for help too, though switches take no value here.
  if (sources.help !== undefined || problems.some((p) => p.path === "--help"))
    return ok({ help: true });
  const { outDir, accountName, resolverDir, fromDir } = values;
  if (problems.length > 0 || outDir === undefined) return fail(problems);
  if (fromDir !== undefined && accountName !== undefined) {
    const clash: Problem = {
      path: "--account",
      message:
        "cannot be given with --from: the flotilla account is the one of --from",
      value: accountName,
    };
    return fail([clash]);
  }
  return ok({
    help: false,
    outDir,
    accountName,
    resolverDir,
    fromDir,
    force: values.force === true,
  });
}
