/**
 * Usage and help text, generated from the commands' option declarations so they cannot drift.
 */
import {
  verbOf,
  type Command,
  type Noun,
  type OptionSpec,
  type PositionalSpec,
} from "./commands/command.js";
import { renderOptions, type OptionTable } from "@flotilla/node";
import { HELP_OPTION } from "./args.js";
import { HUB_CONNECTION_OPTIONS } from "./hub/connection-options.js";

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
  const repeated = spec.multiple === true ? `${word}…` : word;
  return spec.required === true ? repeated : `[${repeated}]`;
}

function positionalWord(spec: PositionalSpec): string {
  const word = spec.variadic === true ? `${spec.name}…` : spec.name;
  return spec.optional === true ? `[${word}]` : word;
}

const isHubOption = ([, spec]: readonly [string, OptionSpec]): boolean =>
  spec.group === "hub";

/** `flotilla NAME ARG --a FILE [--b FILE] [hub options]`: required options first, as declared. */
export function synopsis(command: Command): string {
  const entries = Object.entries(command.options);
  const own = entries.filter((e) => !isHubOption(e));
  const required = own.filter(([, spec]) => spec.required === true);
  const optional = own.filter(([, spec]) => spec.required !== true);
  const words = [
    ...(command.positionals ?? []).map(positionalWord),
    ...[...required, ...optional].map(([name, spec]) =>
      synopsisWord(name, spec),
    ),
    ...(entries.some(isHubOption) ? ["[hub options]"] : []),
  ];
  return ["flotilla", command.name, ...words].join(" ");
}

/** Two aligned columns, indented by two spaces. */
function columns(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

function optionRows(
  entries: readonly (readonly [string, OptionSpec])[],
): [string, string][] {
  return entries.map(([name, spec]) => [
    optionWord(name, spec),
    spec.required === true
      ? `${spec.description} (required)`
      : spec.description,
  ]);
}

/** Full help for one command: synopsis, description, arguments and aligned option tables. */
export function commandHelp(command: Command): string {
  const entries = Object.entries(command.options);
  const own = [
    ...entries.filter((e) => !isHubOption(e)),
    ["help", HELP_OPTION] as const,
  ];
  const hub = hubConnectionTable(entries.filter(isHubOption));
  const lines = [`Usage: ${synopsis(command)}`, "", command.description, ""];
  const positionals = command.positionals ?? [];
  if (positionals.length > 0) {
    lines.push(
      "Arguments:",
      ...columns(positionals.map((p) => [p.name, p.description])),
      "",
    );
  }
  lines.push("Options:", ...columns(optionRows(own)), "");
  if (Object.keys(hub).length > 0) {
    lines.push(...renderOptions(hub, hubColumns(hub)), "");
  }
  return lines.join("\n");
}

/** The connection options a command takes, from their one table, in the table's order. */
function hubConnectionTable(
  entries: readonly (readonly [string, OptionSpec])[],
): OptionTable {
  const names = new Set(entries.map(([name]) => name));
  return Object.fromEntries(
    Object.entries(HUB_CONNECTION_OPTIONS).filter(([name]) => names.has(name)),
  );
}

/** Lays the connection options out like {@link columns}: two spaces after the widest flag. */
function hubColumns(table: OptionTable): {
  column: number;
  defaultsAndEnv: false;
} {
  const widest = Math.max(
    ...Object.values(table).map(
      (spec) =>
        `${spec.flag}${spec.arg === undefined ? "" : ` ${spec.arg}`}`.length,
    ),
  );
  return { column: widest + 3, defaultsAndEnv: false };
}

/** The short usage printed after an argument error. */
export function shortUsage(command: Command): string {
  return `Usage: ${synopsis(command)}\nRun "flotilla help ${command.name}" for details.\n`;
}

/** `flotilla help NOUN` and `flotilla NOUN --help`: the noun's verbs. */
export function nounHelp(noun: Noun): string {
  return [
    `flotilla ${noun.name}: ${noun.summary}`,
    "",
    `Usage: flotilla ${noun.name} VERB [arguments] [options]`,
    "",
    "Verbs:",
    ...columns(noun.verbs.map((v) => [verbOf(v), v.summary])),
    "",
    `Run "flotilla help ${noun.name} VERB" for a verb's arguments and options.`,
    "",
  ].join("\n");
}

/** `flotilla help`: the commands and the nouns. */
export function globalHelp(
  commands: readonly Command[],
  nouns: readonly Noun[] = [],
): string {
  const rows: [string, string][] = [
    ...commands.map((c): [string, string] => [c.name, c.summary]),
    ["help", "show help for a command (flotilla help COMMAND)"],
  ];
  const lines = [
    "flotilla: roll changes out across fleets of Kubernetes clusters",
    "",
    "Usage: flotilla COMMAND [options]",
    "       flotilla NOUN VERB [arguments] [options]",
    "",
    "Commands:",
    ...columns(rows),
  ];
  if (nouns.length > 0) {
    lines.push(
      "",
      "Hub administration (flotilla NOUN --help lists the verbs):",
      ...columns(nouns.map((n) => [n.name, n.summary])),
    );
  }
  lines.push(
    "",
    "Global options:",
    "  -h, --help     show this help",
    "  --version      print the version",
    "",
  );
  return lines.join("\n");
}
