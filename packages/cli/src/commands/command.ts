/**
 * The shape every `flotilla` subcommand has. A command declares its options and positional
 * arguments (the parser, the usage text and the help all come from that one declaration) and runs
 * with parsed arguments. Admin commands are grouped under nouns (`flotilla cluster list`).
 */
import type { CliIo } from "../io.js";

/** Parsed options and positional arguments of one command. */
export interface ParsedArgs {
  /** A string option's value (the last one when repeated), or undefined when not given. */
  readonly string: (name: string) => string | undefined;
  /** Every value of a string option, in the order given (empty when not given). */
  readonly strings: (name: string) => readonly string[];
  /** Whether a boolean option was given. */
  readonly flag: (name: string) => boolean;
  /** A single positional argument, by its declared name; undefined when optional and absent. */
  readonly positional: (name: string) => string | undefined;
  /** Every value of a variadic positional argument (empty when absent). */
  readonly positionals: (name: string) => readonly string[];
}

/** One `--name` option of a command. */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  /** One-letter alias, without the dash (`o` for `-o`). */
  readonly short?: string;
  /** Placeholder shown in usage for a string option (`FILE`). */
  readonly valueName?: string;
  /** Allowed values of a string option. */
  readonly choices?: readonly string[];
  readonly required?: boolean;
  /** A string option that may be given several times (`--label a=1 --label b=2`). */
  readonly multiple?: boolean;
  /** Options shared by every admin command are listed apart in the help ("Hub connection"). */
  readonly group?: "hub";
  /** One line of help. */
  readonly description: string;
}

/** One positional argument of a command, e.g. `NAME`. */
export interface PositionalSpec {
  /** Upper-case placeholder shown in usage and named in messages. */
  readonly name: string;
  /** Absent: required. */
  readonly optional?: boolean;
  /** Takes every remaining argument (must be the last one declared). */
  readonly variadic?: boolean;
  readonly description: string;
}

/** A subcommand: its name, help, options and behaviour. */
export interface Command {
  /** The words that invoke it: `plan`, or `cluster list` for a verb of a noun. */
  readonly name: string;
  /** One line shown in `flotilla help` (or the noun's help). */
  readonly summary: string;
  /** Paragraphs shown in `flotilla help NAME`, after the synopsis. */
  readonly description: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Positional arguments in order; absent: the command takes none. */
  readonly positionals?: readonly PositionalSpec[];
  /** Runs the command and resolves to the process exit code. */
  readonly run: (args: ParsedArgs, io: CliIo) => Promise<number>;
}

/** A noun grouping verbs: `flotilla cluster list|get|label|remove`. */
export interface Noun {
  readonly name: string;
  /** One line shown in `flotilla help`. */
  readonly summary: string;
  /** The verbs, in the order help lists them; each named `NOUN VERB`. */
  readonly verbs: readonly Command[];
}

/** The verb word of a noun's command (`list` of `cluster list`). */
export function verbOf(command: Command): string {
  const space = command.name.lastIndexOf(" ");
  return space === -1 ? command.name : command.name.slice(space + 1);
}
