/**
 * Reads an option table from argv and the environment. Flags are `--flag value`, `--flag=value`,
 * a switch bare or `--switch=VALUE`, one-letter aliases `-h`; a flag wins over its variable, an
 * empty variable counts as unset, and the default is parsed like a given value. A value that
 * starts with `--` is never taken as the previous flag's value: that flag needs a value and the
 * `--` word is read as a flag of its own. Every problem is reported at once, argv problems first,
 * then value problems in table order; each names where the text came from, both spellings of the
 * option, and the text.
 */
import { parseArgs } from "node:util";
import { fail, ok, type Problem, type Result } from "@flotilla/core";
import { closestFlag } from "./closest-flag.js";
import {
  spelled,
  type OptionSource,
  type OptionSpec,
  type OptionTable,
  type OptionValues,
} from "./option-table.js";

/** How argv mistakes are worded, and how strict the reading is; every field has a default. */
export interface ReadSettings {
  /** The message of an argument that is not a flag. */
  readonly positional?: string;
  /** The message of an unknown flag, with the closest known flag when there is one. */
  readonly unknownFlag?: (guess: string | undefined) => string;
  /** Flags of earlier versions and what to say instead of "unknown flag". */
  readonly retiredFlags?: Readonly<Record<string, string>>;
  /** The message of a flag without its value. */
  readonly missingValue?: (spec: OptionSpec<unknown>) => string;
  /**
   * An empty flag value (`--flag=`): parsed like any other (default), a missing value, or unset
   * (the variable and the default apply).
   */
  readonly emptyValue?: "parse" | "missing" | "unset";
  /** Trim variables' values (a blank one counts as unset). Default: taken as they are. */
  readonly trimEnv?: boolean;
  /**
   * Refuse argv as node:util parseArgs does in strict mode: its first error is the only argv
   * problem (path `argv`, the message parseArgs gives) and no flag is read.
   */
  readonly strict?: boolean;
  /** A switch may be given a value, `--switch=no` (default); false: such a word is unknown. */
  readonly switchValues?: boolean;
  /** A repeated flag: refused (default), or the last one wins. */
  readonly repeated?: "refuse" | "last";
}

/** What {@link gatherOptions} found: the values that parsed, where each came from, and problems. */
export interface GatheredOptions<Table extends OptionTable> {
  readonly values: Partial<OptionValues<Table>>;
  readonly sources: Partial<Record<keyof Table, OptionSource>>;
  readonly problems: readonly Problem[];
}

/** Reads `table` from `argv` (without node and the script) and `env`: every value, or every problem. */
export function readOptions<Table extends OptionTable>(
  table: Table,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  settings: ReadSettings = {},
): Result<GatheredOptions<Table>> {
  const gathered = gatherOptions(table, argv, env, settings);
  return gathered.problems.length === 0
    ? ok(gathered)
    : fail(gathered.problems);
}

/**
 * Like {@link readOptions}, but keeps the values that parsed next to the problems, for callers that
 * check options against each other and report those problems in the same go.
 */
export function gatherOptions<Table extends OptionTable>(
  table: Table,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  settings: ReadSettings = {},
): GatheredOptions<Table> {
  const problems: Problem[] = [];
  const given = readArgv(table, argv, settings, problems);
  const values: Partial<Record<keyof Table, unknown>> = {};
  const sources: Partial<Record<keyof Table, OptionSource>> = {};
  for (const name of Object.keys(table) as (keyof Table & string)[]) {
    const spec = table[name] as OptionSpec<unknown>;
    const envText = spec.env === undefined ? undefined : env[spec.env];
    const fromEnv = settings.trimEnv === true ? envText?.trim() : envText;
    const source: OptionSource | undefined =
      given.get(name) ??
      (fromEnv !== undefined && fromEnv !== "" && spec.env !== undefined
        ? { text: fromEnv, from: spec.env, defaulted: false }
        : spec.default === undefined
          ? undefined
          : {
              text: spec.default,
              from: `the default of ${spec.flag}`,
              defaulted: true,
            });
    if (source === undefined) {
      if (
        spec.required === true &&
        !problems.some((p) => p.path === spec.flag)
      ) {
        problems.push({
          path: spec.flag,
          message: `is required: ${spec.flag} ${spec.arg ?? ""}`.trimEnd(),
        });
      }
      continue;
    }
    sources[name] = source;
    const parsed = spec.parse(source.text);
    if (parsed.ok) values[name] = parsed.value;
    else {
      for (const problem of parsed.problems) {
        problems.push({
          path: source.from,
          message: `${problem.message} (${spelled(spec)})`,
          value: source.text,
        });
      }
    }
  }
  return {
    values: values as Partial<OptionValues<Table>>,
    sources,
    problems,
  };
}

/** Texts given on the command line, by option name; argv mistakes go to `problems`. */
function readArgv(
  table: OptionTable,
  argv: readonly string[],
  settings: ReadSettings,
  problems: Problem[],
): Map<string, OptionSource> {
  const byName = new Map<string, string>();
  const options: Record<
    string,
    { type: "string" | "boolean"; short?: string }
  > = {};
  for (const [name, spec] of Object.entries(table)) {
    const long = spec.flag.replace(/^--/, "");
    byName.set(long, name);
    options[long] = {
      type: spec.arg === undefined ? "boolean" : "string",
      ...(spec.short === undefined ? {} : { short: spec.short.slice(1) }),
    };
  }
  const given = new Map<string, OptionSource>();
  if (settings.strict === true) {
    try {
      parseArgs({
        args: [...argv],
        options: Object.fromEntries(
          Object.entries(options).map(([long, o]) => [
            long,
            {
              ...o,
              multiple: table[byName.get(long) ?? ""]?.repeatable === true,
            },
          ]),
        ),
        strict: true,
        allowPositionals: false,
      });
    } catch (error) {
      problems.push({
        path: "argv",
        message: error instanceof Error ? error.message : String(error),
      });
      return given;
    }
  }
  const unknown = (arg: string): void => {
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    const isFlag = arg.startsWith("-");
    const guess = isFlag
      ? closestFlag(
          flag,
          Object.values(table).map((s) => s.flag),
        )
      : undefined;
    problems.push({
      path: isFlag ? flag : "argv",
      message:
        settings.retiredFlags?.[flag] ??
        (isFlag
          ? (settings.unknownFlag?.(guess) ??
            `unknown flag${guess === undefined ? "" : `; did you mean ${guess}?`} (see --help)`)
          : (settings.positional ?? "unexpected argument (see --help)")),
      value: arg,
    });
  };

  let start = 0;
  while (start < argv.length) {
    const args = argv.slice(start);
    const { tokens } = parseArgs({
      args: [...args],
      options,
      strict: false,
      allowPositionals: true,
      tokens: true,
    });
    let restart: number | undefined;
    let lastIndex = -1;
    for (const token of tokens) {
      if (token.index === lastIndex) continue;
      lastIndex = token.index;
      const arg = args[token.index] ?? "";
      if (token.kind === "option-terminator") {
        // `--` is not special here: it is an unknown flag, and flags go on after it.
        unknown(arg);
        restart = start + token.index + 1;
        break;
      }
      if (token.kind === "positional") {
        unknown(arg);
        continue;
      }
      const name = byName.get(token.name);
      const spec = name === undefined ? undefined : table[name];
      // Grouped one-letter flags (`-hx`) are not read apart: the word is unknown.
      const grouped = !token.rawName.startsWith("--") && token.rawName !== arg;
      const switchValue = spec?.arg === undefined && token.value !== undefined;
      if (
        name === undefined ||
        spec === undefined ||
        grouped ||
        (switchValue && settings.switchValues === false)
      ) {
        unknown(arg);
        continue;
      }
      let value = token.value;
      if (
        spec.arg !== undefined &&
        token.inlineValue === false &&
        value?.startsWith("--") === true
      ) {
        // A flag is not a value: this one has none, and reading goes on at that flag.
        value = undefined;
        restart = start + token.index + 1;
      }
      if (spec.arg === undefined && value === undefined) value = "true";
      if (
        value === "" &&
        settings.emptyValue === "unset" &&
        spec.repeatable !== true
      )
        continue;
      if (value === "" && settings.emptyValue === "missing") value = undefined;
      const earlier = given.get(name);
      if (value === undefined) {
        problems.push({
          path: spec.flag,
          message:
            settings.missingValue?.(spec) ??
            `needs a value: ${spec.flag} ${spec.arg ?? ""}`.trimEnd(),
        });
      } else if (earlier !== undefined && spec.repeatable === true) {
        given.set(name, { ...earlier, text: `${earlier.text},${value}` });
      } else if (earlier !== undefined && settings.repeated !== "last") {
        problems.push({
          path: spec.flag,
          message: "is given more than once",
          value,
        });
      } else {
        given.set(name, { text: value, from: spec.flag, defaulted: false });
      }
      if (restart !== undefined) break;
    }
    start = restart ?? argv.length;
  }
  return given;
}
