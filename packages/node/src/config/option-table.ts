/**
 * The shape of a process's options: each declared once with its flag, its environment variable,
 * how its text becomes a value, its default and its line of usage. read-options.ts reads a table
 * from argv and the environment; render-options.ts prints it.
 */
import type { Result } from "@flotilla/core";

/**
 * Turns the text of a flag, variable or default into a value. Problems carry messages only (the
 * loader fills in where the text came from); their paths are ignored.
 */
export type ValueParser<T> = (text: string) => Result<T>;

/** One option: a flag with an environment fallback, parsed by `parse`. */
export interface OptionSpec<T> {
  /** The long flag, with its dashes: `--listen`. */
  readonly flag: string;
  /** A one-letter alias, with its dash: `-h`. */
  readonly short?: string;
  /** The variable read when the flag is absent (an empty one counts as unset). */
  readonly env?: string;
  /** The value's placeholder in usage, `HOST:PORT`; absent: a switch that takes no value. */
  readonly arg?: string;
  /** The text used when neither flag nor variable is given; parsed like a given value. */
  readonly default?: string;
  /** The line of usage. */
  readonly help: string;
  /** The heading the option is listed under in usage. */
  readonly group?: string;
  /** The flag may be given again; its values are joined with commas, as its variable holds them. */
  readonly repeatable?: boolean;
  /** Absent from flag, variable and default is a problem. */
  readonly required?: boolean;
  readonly parse: ValueParser<T>;
}

/** Options by the name their values are returned under. */
export type OptionTable = Readonly<Record<string, OptionSpec<unknown>>>;

/** The value type of each option of a table. */
export type OptionValues<Table extends OptionTable> = {
  -readonly [K in keyof Table]: Table[K] extends OptionSpec<infer T>
    ? T
    : never;
};

/** Where a value came from: its text, and the flag, the variable or `the default of --flag`. */
export interface OptionSource {
  readonly text: string;
  readonly from: string;
  /** True when the text is the option's default. */
  readonly defaulted: boolean;
}

/** Declares an option, inferring its value type from `parse`. */
export function option<T>(spec: OptionSpec<T>): OptionSpec<T> {
  return spec;
}

/** How an option is named in messages: `--flag or ENV`, or the flag alone. */
export function spelled(spec: OptionSpec<unknown>): string {
  return spec.env === undefined ? spec.flag : `${spec.flag} or ${spec.env}`;
}
