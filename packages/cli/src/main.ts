#!/usr/bin/env node
/**
 * The `flotilla` command line. `run` does everything and is what tests call; the process entry at
 * the bottom only wires it to the real process (the one place that reads `process.env`).
 */
import { parseCommandArgs } from "./args.js";
import type { Command, Noun } from "./commands/command.js";
import { COMMANDS, findCommand, findNoun, NOUNS } from "./commands/index.js";
import { EXIT_ERROR, EXIT_OK, EXIT_USAGE, type CliIo } from "./io.js";
import { hoistGlobalOptions } from "./global-options.js";
import { createProcessIo } from "./process-io.js";
import { commandHelp, globalHelp, nounHelp, shortUsage } from "./usage.js";
import { VERSION } from "./version.js";
import { silenceIpServernameWarning } from "@flotilla/protocol";
import { compact } from "@flotilla/core";
import { isProcessEntry } from "@flotilla/node";

export type { CliIo } from "./io.js";

function usageError(
  io: CliIo,
  messages: readonly string[],
  usage: string,
): number {
  io.stderr(`${messages.map((m) => `flotilla: ${m}`).join("\n")}\n\n${usage}`);
  return EXIT_USAGE;
}

const mainHelp = (): string => globalHelp(COMMANDS, NOUNS);

/** The command `words` name: a top-level command, or a noun and one of its verbs. */
type Lookup =
  | {
      readonly kind: "command";
      readonly command: Command;
      readonly rest: readonly string[];
    }
  | {
      readonly kind: "noun";
      readonly noun: Noun;
      readonly rest: readonly string[];
    }
  | {
      readonly kind: "unknown";
      readonly message: string;
      readonly usage: string;
    };

function lookup(words: readonly string[]): Lookup {
  const [first = "", second, ...rest] = words;
  const command = findCommand(first);
  if (command !== undefined)
    return { kind: "command", command, rest: words.slice(1) };
  const noun = findNoun(first);
  if (noun === undefined)
    return {
      kind: "unknown",
      message: `unknown command "${first}"`,
      usage: mainHelp(),
    };
  if (second === undefined || second.startsWith("-"))
    return { kind: "noun", noun, rest: words.slice(1) };
  const verb = noun.verbs.find((v) => v.name === `${noun.name} ${second}`);
  if (verb === undefined)
    return {
      kind: "unknown",
      message: `unknown verb "${second}" for "${noun.name}"`,
      usage: nounHelp(noun),
    };
  return { kind: "command", command: verb, rest };
}

function help(io: CliIo, topic: readonly string[]): number {
  if (topic.length === 0) {
    io.stdout(mainHelp());
    return EXIT_OK;
  }
  const found = lookup(topic);
  switch (found.kind) {
    case "unknown":
      return usageError(io, [found.message], found.usage);
    case "noun":
      if (found.rest.length > 0)
        return usageError(
          io,
          [`help takes a command (got "${topic.join(" ")}")`],
          nounHelp(found.noun),
        );
      io.stdout(nounHelp(found.noun));
      return EXIT_OK;
    case "command":
      if (found.rest.length > 0)
        return usageError(
          io,
          [`help takes one command (got ${String(topic.length)})`],
          mainHelp(),
        );
      io.stdout(commandHelp(found.command));
      return EXIT_OK;
  }
}

async function dispatch(given: readonly string[], io: CliIo): Promise<number> {
  const argv = hoistGlobalOptions(given);
  const [first] = argv;
  if (first === undefined)
    return usageError(io, ["no command given"], mainHelp());
  if (first === "--help" || first === "-h") {
    io.stdout(mainHelp());
    return EXIT_OK;
  }
  if (first === "--version" || first === "-V") {
    io.stdout(`flotilla ${VERSION}\n`);
    return EXIT_OK;
  }
  if (first === "help") return help(io, argv.slice(1));
  if (first.startsWith("-"))
    return usageError(io, [`unknown option "${first}"`], mainHelp());
  const found = lookup(argv);
  if (found.kind === "unknown")
    return usageError(io, [found.message], found.usage);
  if (found.kind === "noun") {
    const [option] = found.rest;
    if (option === "--help" || option === "-h") {
      io.stdout(nounHelp(found.noun));
      return EXIT_OK;
    }
    return usageError(
      io,
      [
        option === undefined
          ? `${found.noun.name}: no verb given`
          : `${found.noun.name}: unknown verb "${option}"`,
      ],
      nounHelp(found.noun),
    );
  }
  const { command, rest } = found;
  const parsed = parseCommandArgs(command, rest);
  if (parsed.type === "problems")
    return usageError(
      io,
      parsed.problems.map((p) => `${command.name}: ${p}`),
      shortUsage(command),
    );
  if (parsed.type === "help") {
    io.stdout(commandHelp(command));
    return EXIT_OK;
  }
  return command.run(parsed.args, io);
}

/**
 * Runs `flotilla` with `argv` (the words after the program name) and resolves to the exit code:
 * 0 success, 1 refused or failed (and unexpected errors), 2 bad input or usage, 3 hub unreachable.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    io.stderr(`flotilla: unexpected error: ${detail}\n`);
    const debug = io.env["FLOTILLA_DEBUG"];
    if (
      debug !== undefined &&
      debug !== "" &&
      error instanceof Error &&
      error.stack !== undefined
    ) {
      io.stderr(`${error.stack}\n`);
    }
    return EXIT_ERROR;
  }
}

if (isProcessEntry(import.meta.url)) {
  // `flotilla plan … | head` closes the pipe early; that is not an error worth a stack trace.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
  const io = createProcessIo(
    {
      stdout: (text) => {
        process.stdout.write(text);
      },
      stderr: (text) => {
        process.stderr.write(text);
      },
      isTTY: process.stdout.isTTY,
      ...compact({ columns: process.stdout.columns }),
    },
    process.env,
  );
  silenceIpServernameWarning();
  run(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`flotilla: unexpected error: ${String(error)}\n`);
      process.exitCode = EXIT_ERROR;
    },
  );
}
