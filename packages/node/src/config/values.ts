/**
 * Value parsers for option tables: text in, typed value out, and on bad text a message that says
 * what a good value looks like.
 */
import { readFileSync } from "node:fs";
import { fail, ok, parseDuration, type Result } from "@flotilla/core";
import { parseByteSize } from "./byte-size.js";
import { unreadableFile } from "./files.js";
import type { ValueParser } from "./option-table.js";

/** A failed value with one message. */
export function refuse<T = never>(message: string): Result<T> {
  return fail([{ path: "", message }]);
}

/** Any text, as given. */
export const text: ValueParser<string> = (value) => ok(value);

/**
 * A whole number from `min` to `max`, written without a sign or separators in at most `digits`
 * digits (default 9).
 */
export function wholeNumber(
  min: number,
  max: number,
  digits = 9,
): ValueParser<number> {
  const message = `must be a whole number from ${String(min)} to ${String(max)}`;
  const pattern = new RegExp(`^\\d{1,${String(digits)}}$`);
  return (value) => {
    const n = Number(value);
    return pattern.test(value) && n >= min && n <= max
      ? ok(n)
      : refuse(message);
  };
}

/**
 * A duration (`500ms`, `10s`, `1m30s`) from `minMs` to `maxMs`, in milliseconds. The default
 * message states the bounds with the upper one in hours.
 */
export function duration(
  minMs: number,
  maxMs: number,
  message = `must be a duration from ${String(minMs)}ms to ${String(maxMs / 3_600_000)}h, like 500ms, 10s or 1m`,
): ValueParser<number> {
  return (value) => {
    const parsed = parseDuration(value);
    return parsed.ok && parsed.value >= minMs && parsed.value <= maxMs
      ? ok(parsed.value)
      : refuse(message);
  };
}

/** A size in bytes of at least `minBytes` (byte-size.ts), with the message for anything else. */
export function byteSize(
  minBytes: number,
  message: string,
): ValueParser<number> {
  return (value) => {
    const bytes = parseByteSize(value);
    return bytes !== undefined && bytes >= minBytes
      ? ok(bytes)
      : refuse(message);
  };
}

/** The words a switch's value may be, case aside, and the message for any other word. */
export interface SwitchWords {
  readonly truthy: readonly string[];
  readonly falsy: readonly string[];
  /** Default: `Invalid option: expected one of "true"|"1"|...`. */
  readonly message?: string;
}

/** Words read as true and false by {@link onOff} unless told otherwise. */
export const SWITCH_WORDS: SwitchWords = {
  truthy: ["true", "1", "yes", "on", "y", "enabled"],
  falsy: ["false", "0", "no", "off", "n", "disabled"],
};

/** A yes/no value: one of `words.truthy` or `words.falsy`, in any case. */
export function onOff(words: SwitchWords = SWITCH_WORDS): ValueParser<boolean> {
  const message =
    words.message ??
    `Invalid option: expected one of ${[...words.truthy, ...words.falsy]
      .map((w) => JSON.stringify(w))
      .join("|")}`;
  return (value) => {
    const word = value.toLowerCase();
    if (words.truthy.includes(word)) return ok(true);
    if (words.falsy.includes(word)) return ok(false);
    return refuse(message);
  };
}

/** One of `choices`, exactly as spelled. */
export function oneOf<const C extends string>(
  choices: readonly C[],
  message = `must be one of ${choices.join(", ")}`,
): ValueParser<C> {
  return (value) =>
    (choices as readonly string[]).includes(value)
      ? ok(value as C)
      : refuse(message);
}

/** Comma-separated items, each trimmed and parsed by `item`; every bad item is reported. */
export function list<T>(item: ValueParser<T>): ValueParser<T[]> {
  return (value) => {
    const items: T[] = [];
    const problems = [];
    for (const part of value.split(",").map((p) => p.trim())) {
      const parsed = item(part);
      if (parsed.ok) items.push(parsed.value);
      else problems.push(...parsed.problems);
    }
    return problems.length === 0 ? ok(items) : fail(problems);
  };
}

/** The path of a readable regular file. */
export const readableFile: ValueParser<string> = (value) => {
  const problem = unreadableFile(value);
  return problem === undefined ? ok(value) : refuse(problem);
};

/** The content of a readable regular file (UTF-8) and its path. */
export const fileContent: ValueParser<{
  readonly file: string;
  readonly content: string;
}> = (value) => {
  const problem = unreadableFile(value);
  if (problem !== undefined) return refuse(problem);
  try {
    return ok({ file: value, content: readFileSync(value, "utf8") });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return refuse(`cannot be read (${code ?? String(error)})`);
  }
};
