/**
 * Options every hub command shares (the connection options and `-o`) may come before the command
 * words as well as after them: `flotilla --hub h:7070 -o json run list` is `flotilla run list --hub
 * h:7070 -o json`. They are moved behind the command words here; the command's own parser then
 * reads them as usual (docs/cli.md#global-options).
 */
import { findNoun } from "./commands/index.js";
import { HUB_OPTIONS, OUTPUT_OPTION } from "./hub/options.js";
import type { OptionSpec } from "./commands/command.js";

const GLOBAL: Readonly<Record<string, OptionSpec>> = {
  ...HUB_OPTIONS,
  ...OUTPUT_OPTION,
};

/** The global option a word starts, and whether its value is the next word. */
function globalOption(word: string): { takesNext: boolean } | undefined {
  if (word.startsWith("--")) {
    const eq = word.indexOf("=");
    const name = word.slice(2, eq === -1 ? undefined : eq);
    const spec = GLOBAL[name];
    if (spec === undefined) return undefined;
    return { takesNext: spec.type === "string" && eq === -1 };
  }
  if (word.length < 2 || word[0] !== "-") return undefined;
  const spec = Object.values(GLOBAL).find((s) => s.short === word[1]);
  if (spec === undefined) return undefined;
  return { takesNext: spec.type === "string" && word.length === 2 };
}

/**
 * `argv` with the global options found before the command words (a top-level command, or a noun
 * and its verb) moved behind them. Anything else before the command words stops the search and
 * leaves `argv` as it is, for the usual messages.
 */
export function hoistGlobalOptions(argv: readonly string[]): string[] {
  const words: string[] = [];
  const moved: string[] = [];
  let index = 0;
  const wanted = (): number =>
    words.length > 0 && findNoun(words[0] ?? "") !== undefined ? 2 : 1;
  while (index < argv.length && words.length < wanted()) {
    const word = argv[index] ?? "";
    if (!word.startsWith("-")) {
      words.push(word);
      index += 1;
      continue;
    }
    const option = globalOption(word);
    if (option === undefined) return [...argv];
    moved.push(word);
    index += 1;
    if (option.takesNext && index < argv.length) {
      moved.push(argv[index] ?? "");
      index += 1;
    }
  }
  return [...words, ...moved, ...argv.slice(index)];
}
