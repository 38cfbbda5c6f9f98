/**
 * Reading a local JSON or YAML document (fleet files, maintenance files). JSON is parsed here;
 * YAML needs a parser passed in (`parseText`, e.g. the `yaml` package's `parse`), which the
 * agent's composition root supplies, so this module has no YAML dependency of its own. Documents
 * are held to core's input bounds (nesting depth, refused keys).
 */
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import {
  boundsProblems,
  fail,
  FlotillaError,
  ok,
  problem,
  tooDeepProblem,
  type Result,
} from "@flotilla/core";

/** Parses a document's text; throws on syntax errors. `file` is for messages. */
export type TextParser = (text: string, file: string) => unknown;

/** Whether `file` is YAML by its extension. */
export function isYamlFile(file: string): boolean {
  const ext = extname(file).toLowerCase();
  return ext === ".yaml" || ext === ".yml";
}

/**
 * The parser for `file`: `parseText` when given, else JSON.parse. Throws `invalid_argument` for a
 * YAML file without a parser, at set-up time rather than on every read.
 */
export function parserFor(file: string, parseText?: TextParser): TextParser {
  if (parseText !== undefined) return parseText;
  if (isYamlFile(file))
    throw new FlotillaError(
      "invalid_argument",
      `Cannot read "${file}": YAML files need a parseText option (for example the yaml package's parse)`,
    );
  return (text) => JSON.parse(text) as unknown;
}

/**
 * The outcome of reading a document: its content, or why it could not be read (shown with
 * `formatProblems(problems, "; ")`).
 */
export type ReadDocumentResult = Result<unknown>;

/** Reads and parses `file`; I/O and syntax errors are values. Rejects only when `signal` aborts. */
export async function readDocument(
  file: string,
  parse: TextParser,
  options: { readonly signal?: AbortSignal } = {},
): Promise<ReadDocumentResult> {
  const { signal } = options;
  let text: string;
  try {
    text = await readFile(file, {
      encoding: "utf8",
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    signal?.throwIfAborted();
    const code = (error as { code?: unknown }).code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : error instanceof Error
          ? error.message
          : String(error);
    return fail([problem(why)]);
  }
  let value: unknown;
  try {
    value = parse(text, file);
  } catch (error) {
    // A parser that runs out of stack on deep nesting: the yaml package reports it by this code.
    if (
      error instanceof RangeError ||
      (error as { code?: unknown }).code === "RESOURCE_EXHAUSTION"
    ) {
      return fail([problem(tooDeepProblem("").message)]);
    }
    const why = error instanceof Error ? error.message : String(error);
    return fail([
      problem(`not valid ${isYamlFile(file) ? "YAML" : "JSON"}: ${why}`),
    ]);
  }
  const problems = boundsProblems(value, "");
  if (problems.length > 0) {
    return fail(problems);
  }
  return ok(value);
}
