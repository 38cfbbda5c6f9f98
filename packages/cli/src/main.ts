#!/usr/bin/env node
/**
 * The `flotilla` command line. `run` does everything and is what tests call; the process entry at
 * the bottom only wires it to the real process (the one place that reads `process.env`).
 */
import { realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { parseCommandArgs } from "./args.js";
import { COMMANDS, findCommand } from "./commands/index.js";
import { EXIT_ERROR, EXIT_OK, EXIT_USAGE, type CliIo } from "./io.js";
import { commandHelp, globalHelp, shortUsage } from "./usage.js";
import { VERSION } from "./version.js";

export type { CliIo } from "./io.js";

function usageError(
  io: CliIo,
  messages: readonly string[],
  usage: string,
): number {
  io.stderr(`${messages.map((m) => `flotilla: ${m}`).join("\n")}\n\n${usage}`);
  return EXIT_USAGE;
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined)
    return usageError(io, ["no command given"], globalHelp(COMMANDS));
  if (first === "--help" || first === "-h") {
    io.stdout(globalHelp(COMMANDS));
    return EXIT_OK;
  }
  if (first === "--version" || first === "-V") {
    io.stdout(`flotilla ${VERSION}\n`);
    return EXIT_OK;
  }
  if (first === "help") {
    const [topic, ...extra] = rest;
    if (topic === undefined) {
      io.stdout(globalHelp(COMMANDS));
      return EXIT_OK;
    }
    const command = findCommand(topic);
    if (command === undefined)
      return usageError(
        io,
        [`unknown command "${topic}"`],
        globalHelp(COMMANDS),
      );
    if (extra.length > 0)
      return usageError(
        io,
        [`help takes one command (got ${String(rest.length)})`],
        globalHelp(COMMANDS),
      );
    io.stdout(commandHelp(command));
    return EXIT_OK;
  }
  if (first.startsWith("-"))
    return usageError(io, [`unknown option "${first}"`], globalHelp(COMMANDS));
  const command = findCommand(first);
  if (command === undefined)
    return usageError(io, [`unknown command "${first}"`], globalHelp(COMMANDS));

  const parsed = parseCommandArgs(command, rest);
  if (!parsed.ok)
    return usageError(
      io,
      parsed.problems.map((p) => `${command.name}: ${p}`),
      shortUsage(command),
    );
  if (parsed.help) {
    io.stdout(commandHelp(command));
    return EXIT_OK;
  }
  return command.run(parsed.args, io);
}

/**
 * Runs `flotilla` with `argv` (the words after the program name) and resolves to the exit code:
 * 0 success, 2 bad input or usage, 1 unexpected error.
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

function isProcessEntry(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    // npm/pnpm install the bin as a symlink; compare real paths.
    return (
      realpathSync(script) === realpathSync(fileURLToPath(import.meta.url))
    );
  } catch {
    return false;
  }
}

if (isProcessEntry()) {
  // `flotilla plan … | head` closes the pipe early; that is not an error worth a stack trace.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
  const io: CliIo = {
    stdout: (text) => {
      process.stdout.write(text);
    },
    stderr: (text) => {
      process.stderr.write(text);
    },
    readFile: (path) => readFile(path, "utf8"),
    isTTY: process.stdout.isTTY,
    ...(process.stdout.columns === undefined
      ? {}
      : { columns: process.stdout.columns }),
    env: process.env,
  };
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
