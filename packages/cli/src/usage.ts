/**
 * Usage and help text, generated from the commands' option declarations so they cannot drift.
 */
import type { Command, OptionSpec } from "./commands/command.js";
import { HELP_OPTION } from "./args.js";

function optionWord(name: string, spec: OptionSpec): string {
  const flag =
    spec.short === undefined ? `--${name}` : `-${spec.short}, --${name}`;
  if (spec.type === "boolean") return flag;
  const value =
    spec.choices === undefined
      ? (spec.valueName ?? "VALUE")
      : spec.choices.join("|");
  return `${flag} ${value}`;
}

function synopsisWord(name: string, spec: OptionSpec): string {
  const flag = spec.short === undefined ? `--${name}` : `-${spec.short}`;
  const value =
    spec.choices === undefined
      ? (spec.valueName ?? "VALUE")
      : spec.choices.join("|");
  const word = spec.type === "boolean" ? flag : `${flag} ${value}`;
  return spec.required === true ? word : `[${word}]`;
}

/** `flotilla NAME --a FILE [--b FILE]`: required options first, as declared. */
export function synopsis(command: Command): string {
  const entries = Object.entries(command.options);
  const required = entries.filter(([, spec]) => spec.required === true);
  const optional = entries.filter(([, spec]) => spec.required !== true);
  const words = [...required, ...optional].map(([name, spec]) =>
    synopsisWord(name, spec),
  );
  return ["flotilla", command.name, ...words].join(" ");
}

/** Full help for one command: synopsis, description and an aligned option table. */
export function commandHelp(command: Command): string {
  const rows = [
    ...Object.entries(command.options),
    ["help", HELP_OPTION] as const,
  ].map(
    ([name, spec]) =>
      [
        optionWord(name, spec),
        spec.required === true
          ? `${spec.description} (required)`
          : spec.description,
      ] as const,
  );
  const width = Math.max(...rows.map(([left]) => left.length));
  const table = rows.map(
    ([left, right]) => `  ${left.padEnd(width)}  ${right}`,
  );
  return [
    `Usage: ${synopsis(command)}`,
    "",
    command.description,
    "",
    "Options:",
    ...table,
    "",
  ].join("\n");
}

/** The short usage printed after an argument error. */
export function shortUsage(command: Command): string {
  return `Usage: ${synopsis(command)}\nRun "flotilla help ${command.name}" for details.\n`;
}

/** `flotilla help`: the list of commands. */
export function globalHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length), "help".length);
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    "flotilla: roll changes out across fleets of Kubernetes clusters",
    "",
    "Usage: flotilla COMMAND [options]",
    "",
    "Commands:",
    ...lines,
    `  ${"help".padEnd(width)}  show help for a command (flotilla help COMMAND)`,
    "",
    "Global options:",
    "  -h, --help     show this help",
    "  --version      print the version",
    "",
  ].join("\n");
}
