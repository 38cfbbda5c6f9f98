/**
 * Argument parsing for one command, on top of node:util's tokenizer. Problems are returned as
 * values with messages written for people; the caller prints them with the usage text and exits 2.
 * Positional arguments are matched to the command's declared ones in order; a command that
 * declares none refuses them.
 */
import { parseArgs } from "node:util";
import type { Command, OptionSpec, ParsedArgs } from "./commands/command.js";

/**
 * The outcome of parsing: the arguments; a request for the command's help (`--help`, with no
 * problems); or every problem found (one message each).
 */
export type ParseOutcome =
  | { readonly type: "args"; readonly args: ParsedArgs }
  | { readonly type: "help" }
  | { readonly type: "problems"; readonly problems: readonly string[] };

/** The `--help` option every command accepts. */
export const HELP_OPTION: OptionSpec = {
  type: "boolean",
  short: "h",
  description: "show this help",
};

/** Parses `argv` (the words after the command name) against the command's declared options. */
export function parseCommandArgs(
  command: Command,
  argv: readonly string[],
): ParseOutcome {
  const specs: Record<string, OptionSpec> = {
    ...command.options,
    help: HELP_OPTION,
  };
  const config: Record<string, { type: "string" | "boolean"; short?: string }> =
    {};
  for (const [name, spec] of Object.entries(specs)) {
    config[name] =
      spec.short === undefined
        ? { type: spec.type }
        : { type: spec.type, short: spec.short };
  }
  const { tokens } = parseArgs({
    args: [...argv],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });

  const strings = new Map<string, string[]>();
  const flags = new Set<string>();
  const words: string[] = [];
  const problems: string[] = [];
  for (const token of tokens) {
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      words.push(token.value);
      continue;
    }
    const spec = specs[token.name];
    if (spec === undefined) {
      problems.push(`unknown option "${token.rawName}"`);
      continue;
    }
    if (spec.type === "boolean") {
      if (token.value !== undefined)
        problems.push(`option "${token.rawName}" does not take a value`);
      else flags.add(token.name);
      continue;
    }
    const value = token.value;
    // `--clusters --strategy x` would otherwise read "--strategy" as the file; `--clusters=-f` still works.
    // A lone "-" is a value: standard input (`--token-file -`).
    if (
      value === undefined ||
      (!token.inlineValue && value.startsWith("-") && value !== "-")
    ) {
      problems.push(
        `option "${token.rawName}" needs a value${spec.valueName === undefined ? "" : ` (${spec.valueName})`}`,
      );
      continue;
    }
    if (spec.choices !== undefined && !spec.choices.includes(value)) {
      problems.push(
        `option "${token.rawName}" must be one of ${spec.choices.join(", ")} (got "${value}")`,
      );
      continue;
    }
    const values = strings.get(token.name);
    if (values === undefined) strings.set(token.name, [value]);
    else if (spec.multiple === true) values.push(value);
    else values.splice(0, values.length, value);
  }

  const help = flags.has("help");
  const positionals = matchPositionals(command, words, problems, help);
  if (!help) {
    for (const [name, spec] of Object.entries(command.options)) {
      if (
        spec.required === true &&
        spec.type === "string" &&
        !strings.has(name)
      ) {
        problems.push(`missing required option --${name}`);
      }
    }
  }
  if (problems.length > 0) return { type: "problems", problems };
  if (help) return { type: "help" };
  return {
    type: "args",
    args: {
      string: (name) => strings.get(name)?.at(-1),
      strings: (name) => strings.get(name) ?? [],
      flag: (name) => flags.has(name),
      positional: (name) => positionals.get(name)?.[0],
      positionals: (name) => positionals.get(name) ?? [],
    },
  };
}

/** Assigns `words` to the declared positionals in order, adding a problem for each misfit. */
function matchPositionals(
  command: Command,
  words: readonly string[],
  problems: string[],
  help: boolean,
): Map<string, string[]> {
  const matched = new Map<string, string[]>();
  let index = 0;
  for (const spec of command.positionals ?? []) {
    const taken =
      spec.variadic === true
        ? words.slice(index)
        : words.slice(index, index + 1);
    index += taken.length;
    if (taken.length > 0) matched.set(spec.name, taken);
    else if (spec.optional !== true && !help)
      problems.push(`missing argument ${spec.name}`);
  }
  for (const extra of words.slice(index))
    problems.push(`unexpected argument "${extra}"`);
  return matched;
}
