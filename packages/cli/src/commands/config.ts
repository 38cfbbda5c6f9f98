/**
 * `flotilla config view|get-contexts|use-context|set-context`: the CLI's config file
 * (hub/cli-config.ts), kubeconfig-style. These commands never talk to the hub. Tokens kept in the
 * file are never printed.
 */
import { resolve } from "node:path";
import { fail, formatProblem, ok, problem, type Result } from "@flotilla/core";
import {
  EXIT_ERROR,
  EXIT_OK,
  EXIT_USAGE,
  useColor,
  type CliIo,
} from "../io.js";
import {
  cliConfigText,
  parseCliConfig,
  readCliConfig,
  writeCliConfig,
  type CliConfig,
  type CliContext,
} from "../hub/cli-config.js";
import { addressProblem } from "../hub/hub-config.js";
import { OUTPUT_OPTION } from "../hub/options.js";
import { printJson, printLines } from "../hub/output.js";
import { createStyle } from "../render/style.js";
import { renderTable } from "../render/table.js";
import type { Command, Noun, ParsedArgs } from "./command.js";

/** The config file a command shows or edits, and whether it exists yet. */
interface LoadedConfig {
  readonly file: string;
  readonly config: CliConfig;
  readonly exists: boolean;
}

/** Reads the file for a command; on failure prints the problems and returns undefined (exit 2). */
async function load(io: CliIo): Promise<LoadedConfig | undefined> {
  const read = await readCliConfig(io);
  if (!read.ok) {
    io.stderr(
      read.problems.map((p) => `flotilla: ${formatProblem(p)}\n`).join(""),
    );
    return undefined;
  }
  const { file, config, exists } = read.value;
  if (file === undefined) {
    io.stderr(
      "flotilla: cannot tell where the config file is: set FLOTILLA_CONFIG or HOME\n",
    );
    return undefined;
  }
  return { file, config, exists };
}

function redacted(context: CliContext): CliContext {
  return context.token === undefined
    ? context
    : { ...context, token: "REDACTED" };
}

function authOf(context: CliContext): string {
  const parts = [
    context.insecurePlaintext === true
      ? "plaintext"
      : context.certFile !== undefined
        ? "client certificate"
        : "TLS",
  ];
  if (context.tokenFile !== undefined || context.token !== undefined)
    parts.push("token");
  return parts.join(" + ");
}

const view: Command = {
  name: "config view",
  summary: "print the config file (tokens redacted)",
  description:
    "Prints the config file ($FLOTILLA_CONFIG, else ~/.config/flotilla/config.yaml) with any\n" +
    "token in clear replaced by REDACTED.",
  options: { ...OUTPUT_OPTION },
  run: async (args, io) => {
    const loaded = await load(io);
    if (loaded === undefined) return EXIT_USAGE;
    const shown: CliConfig = {
      ...loaded.config,
      contexts: loaded.config.contexts.map(redacted),
    };
    if (args.string("output") === "json") printJson(io, shown);
    else if (!loaded.exists)
      printLines(io, [`No config file at ${loaded.file}.`]);
    else io.stdout(cliConfigText(shown));
    return EXIT_OK;
  },
};

const getContexts: Command = {
  name: "config get-contexts",
  summary: "list the contexts, the current one marked",
  description:
    "Lists the contexts of the config file; * marks the current one.",
  options: { ...OUTPUT_OPTION },
  run: async (args, io) => {
    const loaded = await load(io);
    if (loaded === undefined) return EXIT_USAGE;
    const { config } = loaded;
    if (args.string("output") === "json") {
      printJson(io, {
        currentContext: config.currentContext ?? "",
        contexts: config.contexts.map(redacted),
      });
      return EXIT_OK;
    }
    if (config.contexts.length === 0) {
      printLines(io, [
        `No contexts in ${loaded.file}. Add one with flotilla config set-context NAME --hub HOST:PORT.`,
      ]);
      return EXIT_OK;
    }
    printLines(
      io,
      renderTable(
        [
          {
            header: "CURRENT",
            cell: (c: CliContext) =>
              c.name === config.currentContext ? "*" : "",
          },
          { header: "NAME", cell: (c) => c.name },
          { header: "HUB", cell: (c) => c.hub },
          { header: "AUTH", cell: authOf },
        ],
        config.contexts,
        createStyle(useColor(io)),
      ),
    );
    return EXIT_OK;
  },
};

const useContext: Command = {
  name: "config use-context",
  summary: "make a context the current one",
  description:
    "Sets the config file's current context; hub commands use it by default.",
  positionals: [{ name: "NAME", description: "the context's name" }],
  options: {},
  run: async (args, io) => {
    const loaded = await load(io);
    if (loaded === undefined) return EXIT_USAGE;
    const name = args.positional("NAME") ?? "";
    if (!loaded.config.contexts.some((c) => c.name === name)) {
      const known = loaded.config.contexts.map((c) => c.name);
      io.stderr(
        `flotilla: config use-context: no context "${name}" in ${loaded.file}` +
          (known.length === 0 ? "\n" : ` (contexts: ${known.join(", ")})\n`),
      );
      return EXIT_ERROR;
    }
    await writeCliConfig(io, loaded.file, {
      ...loaded.config,
      currentContext: name,
    });
    printLines(io, [`Switched to context "${name}".`]);
    return EXIT_OK;
  },
};

/** The fields `set-context` sets from its flags; problems as printable lines. */
function contextChanges(args: ParsedArgs): Result<Partial<CliContext>> {
  const problems: string[] = [];
  const path = (flag: string): string | undefined => {
    const value = args.string(flag);
    return value === undefined || value === "" ? undefined : resolve(value);
  };
  const changes: Record<string, unknown> = {};
  const hub = args.string("hub");
  if (hub !== undefined) {
    const wrong = addressProblem(hub);
    if (wrong !== undefined) problems.push(wrong);
    changes["hub"] = hub;
  }
  const files = {
    caFile: path("ca"),
    certFile: path("cert"),
    keyFile: path("key"),
    tokenFile: path("token-file"),
  };
  for (const [key, value] of Object.entries(files)) {
    if (value !== undefined) changes[key] = value;
  }
  if ((files.certFile === undefined) !== (files.keyFile === undefined))
    problems.push("--cert and --key go together");
  if (args.flag("insecure-plaintext")) {
    if (files.caFile !== undefined || files.certFile !== undefined)
      problems.push(
        "--insecure-plaintext cannot be combined with --ca, --cert or --key",
      );
    changes["insecurePlaintext"] = true;
  }
  return problems.length > 0 ? fail(problems.map(problem)) : ok(changes);
}

const setContext: Command = {
  name: "config set-context",
  summary: "add or change a context",
  description:
    "Adds the context NAME or changes the fields given (file paths are stored absolute). The\n" +
    "first context becomes the current one. The file is written with mode 0600.",
  positionals: [{ name: "NAME", description: "the context's name" }],
  options: {
    hub: {
      type: "string",
      valueName: "HOST:PORT",
      description: "the hub's gRPC address (required for a new context)",
    },
    ca: {
      type: "string",
      valueName: "FILE",
      description:
        "CA certificate (PEM) the hub's certificate is checked against",
    },
    cert: {
      type: "string",
      valueName: "FILE",
      description:
        "client certificate (PEM), e.g. from flotilla admin-cert issue",
    },
    key: {
      type: "string",
      valueName: "FILE",
      description: "its private key (PEM)",
    },
    "token-file": {
      type: "string",
      valueName: "FILE",
      description: "file holding a bearer token",
    },
    "insecure-plaintext": {
      type: "boolean",
      description: "talk to this hub without TLS (development only)",
    },
  },
  run: async (args, io) => {
    const name = args.positional("NAME") ?? "";
    const wanted = contextChanges(args);
    if (!wanted.ok) {
      io.stderr(
        wanted.problems
          .map((p) => `flotilla: config set-context: ${formatProblem(p)}\n`)
          .join(""),
      );
      return EXIT_USAGE;
    }
    const loaded = await load(io);
    if (loaded === undefined) return EXIT_USAGE;
    const { config } = loaded;
    const existing = config.contexts.find((c) => c.name === name);
    const changes = wanted.value;
    if (existing === undefined && changes.hub === undefined) {
      io.stderr(
        `flotilla: config set-context: context "${name}" is new: give --hub HOST:PORT\n`,
      );
      return EXIT_USAGE;
    }
    // TLS settings and plaintext exclude each other: choosing one drops the other.
    const base: Record<string, unknown> = { ...existing, name };
    if (changes.insecurePlaintext === true) {
      delete base["caFile"];
      delete base["certFile"];
      delete base["keyFile"];
    } else if (changes.caFile !== undefined || changes.certFile !== undefined) {
      delete base["insecurePlaintext"];
    }
    if (changes.tokenFile !== undefined) delete base["token"];
    const candidate = { ...base, ...changes };
    const next: CliConfig = {
      currentContext: config.currentContext ?? name,
      contexts:
        existing === undefined
          ? [...config.contexts, candidate as unknown as CliContext]
          : config.contexts.map((c) =>
              c.name === name ? (candidate as unknown as CliContext) : c,
            ),
    };
    // The result is checked like a file read back, so set-context never writes a bad one.
    const checked = parseCliConfig(cliConfigText(next), loaded.file);
    if (!checked.ok) {
      io.stderr(
        checked.problems
          .map((p) => `flotilla: config set-context: ${formatProblem(p)}\n`)
          .join(""),
      );
      return EXIT_USAGE;
    }
    await writeCliConfig(io, loaded.file, checked.value);
    printLines(io, [
      `Context "${name}" ${existing === undefined ? "created" : "updated"} in ${loaded.file}.`,
    ]);
    return EXIT_OK;
  },
};

/** `flotilla config …`. */
export const configNoun: Noun = {
  name: "config",
  summary: "manage the CLI's contexts (hub address and credentials)",
  verbs: [view, getContexts, useContext, setContext],
};
