/**
 * The hub connection options every admin command shares, declared once: flag, environment
 * variable, placeholder and line of help. Commands accept them from this table (options.ts), their
 * help lists them from it (usage.ts), and hub-config.ts reads them with the shared option loader,
 * flags and environment apart so each layer is weighed on its own against the config file's
 * context. Values are read as text; hub-config.ts checks them, so its messages say which layer
 * was wrong.
 */
import { compact, type Result } from "@flotilla/core";
import {
  option,
  readOptions,
  text,
  type GatheredOptions,
  type OptionTable,
  type OptionValues,
} from "@flotilla/node";
import type { ParsedArgs } from "../commands/command.js";

/** Default hub address (the hub's default gRPC port on this machine). */
export const DEFAULT_HUB_ADDRESS = "127.0.0.1:7070";

/** The heading of the connection options in a command's help. */
export const HUB_CONNECTION_GROUP =
  "Hub connection (flags win over the environment)";

const group = HUB_CONNECTION_GROUP;

/** The connection options, by the name a command's parsed arguments know them under. */
export const HUB_CONNECTION_OPTIONS = {
  hub: option({
    flag: "--hub",
    env: "FLOTILLA_HUB",
    arg: "HOST:PORT",
    group,
    help: `the hub's gRPC address (env FLOTILLA_HUB; default ${DEFAULT_HUB_ADDRESS})`,
    parse: text,
  }),
  "tls-ca": option({
    flag: "--tls-ca",
    env: "FLOTILLA_TLS_CA",
    arg: "FILE",
    group,
    help: "CA certificate (PEM) the hub's certificate is checked against (env FLOTILLA_TLS_CA)",
    parse: text,
  }),
  "tls-cert": option({
    flag: "--tls-cert",
    env: "FLOTILLA_TLS_CERT",
    arg: "FILE",
    group,
    help: "client certificate (PEM) for mutual TLS (env FLOTILLA_TLS_CERT)",
    parse: text,
  }),
  "tls-key": option({
    flag: "--tls-key",
    env: "FLOTILLA_TLS_KEY",
    arg: "FILE",
    group,
    help: "client private key (PEM) for mutual TLS (env FLOTILLA_TLS_KEY)",
    parse: text,
  }),
  "insecure-plaintext": option({
    flag: "--insecure-plaintext",
    env: "FLOTILLA_INSECURE_PLAINTEXT",
    group,
    help: "talk to the hub without TLS (env FLOTILLA_INSECURE_PLAINTEXT=1)",
    parse: text,
  }),
  context: option({
    flag: "--context",
    env: "FLOTILLA_CONTEXT",
    arg: "NAME",
    group,
    help: "the config file's context to use (env FLOTILLA_CONTEXT; default its current context)",
    parse: text,
  }),
  "token-file": option({
    flag: "--token-file",
    env: "FLOTILLA_TOKEN_FILE",
    arg: "FILE",
    group,
    help: "file holding a bearer token for the hub (env FLOTILLA_TOKEN_FILE, or the token in FLOTILLA_TOKEN)",
    parse: text,
  }),
  actor: option({
    flag: "--actor",
    env: "FLOTILLA_ACTOR",
    arg: "NAME",
    group,
    help: "who is acting, for a hub in insecure development mode (env FLOTILLA_ACTOR; default the OS user)",
    parse: text,
  }),
  timeout: option({
    flag: "--timeout",
    arg: "DURATION",
    group,
    help: "how long one call may take, e.g. 10s, 1m (default 10s)",
    parse: text,
  }),
} as const satisfies OptionTable;

/** The texts of the connection options one layer gave; absent: that layer did not set it. */
export type ConnectionTexts = Partial<
  OptionValues<typeof HUB_CONNECTION_OPTIONS>
>;

/**
 * The bearer token itself, in clear. It has no flag (a flag would show it in the process list),
 * so it is a variable beside the table rather than an option of it.
 */
export const TOKEN_ENV = "FLOTILLA_TOKEN";

/**
 * The connection options as the command line gave them, and as the environment did (with the
 * token of {@link TOKEN_ENV}).
 */
export interface ConnectionLayers {
  readonly flags: ConnectionTexts;
  readonly env: ConnectionTexts & { readonly token?: string };
}

type Name = keyof typeof HUB_CONNECTION_OPTIONS;

/**
 * Reads the connection options from a command's parsed arguments and from `env` (empty variables
 * count as unset). `actorFlag: false` for a command whose `--actor` means something else: that
 * flag is then not a connection option.
 */
export function readConnectionLayers(
  args: ParsedArgs,
  env: Readonly<Record<string, string | undefined>>,
  settings: { readonly actorFlag?: boolean } = {},
): ConnectionLayers {
  const argv: string[] = [];
  for (const [name, spec] of Object.entries(HUB_CONNECTION_OPTIONS) as [
    Name,
    (typeof HUB_CONNECTION_OPTIONS)[Name],
  ][]) {
    if (name === "actor" && settings.actorFlag === false) continue;
    if (!("arg" in spec)) {
      if (args.flag(name)) argv.push(spec.flag);
      continue;
    }
    const value = args.string(name);
    if (value !== undefined) argv.push(`${spec.flag}=${value}`);
  }
  return {
    flags: valuesOf(readOptions(HUB_CONNECTION_OPTIONS, argv, {})),
    env: {
      ...valuesOf(readOptions(HUB_CONNECTION_OPTIONS, [], env)),
      ...compact({ token: env[TOKEN_ENV] || undefined }),
    },
  };
}

// Every value is text as given and every flag comes from a parsed command line, so a read
// cannot fail; a failed one would be a table mistake.
function valuesOf(
  read: Result<GatheredOptions<typeof HUB_CONNECTION_OPTIONS>>,
): ConnectionTexts {
  if (!read.ok)
    throw new Error(
      `hub connection options: ${read.problems.map((p) => p.message).join("; ")}`,
    );
  return read.value.values;
}
