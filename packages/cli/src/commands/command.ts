/**
 * The shape every `flotilla` subcommand has. A command declares its options (the parser, the usage
 * text and the help all come from that one declaration) and runs with parsed arguments.
 */
import type { CliIo } from "../io.js";

/** Parsed options of one command. */
export interface ParsedArgs {
  /** A string option's value, or undefined when not given. */
  readonly string: (name: string) => string | undefined;
  /** Whether a boolean option was given. */
  readonly flag: (name: string) => boolean;
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
  /** One line of help. */
  readonly description: string;
}

/** A subcommand: its name, help, options and behaviour. */
export interface Command {
  readonly name: string;
  /** One line shown in `flotilla help`. */
  readonly summary: string;
  /** Paragraphs shown in `flotilla help NAME`, after the synopsis. */
  readonly description: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Runs the command and resolves to the process exit code. */
  readonly run: (args: ParsedArgs, io: CliIo) => Promise<number>;
}
