/**
 * Reading input files. YAML and JSON are told apart by content, not by name: the `yaml` parser
 * reads both (JSON is YAML's flow syntax). Every problem's path is the file name, so its printed
 * line (formatProblem) starts with it and a person can jump to it: `FILE:LINE:COL: message` for
 * syntax errors, with the source line and a caret under the spot on the lines after. Documents are
 * held to core's input bounds (nesting depth, refused keys), as the hub holds what it is sent. The
 * parsing itself is @flotilla/node's (bundle directories are read with it in the hub too).
 */
import { fail, ok, type Problem, type Result } from "@flotilla/core";
import {
  describeReadError,
  fileProblem,
  parseDocumentText,
} from "@flotilla/node";
import type { CliIo } from "./io.js";

/** A parsed document, or the problems (each naming the file) that explain why it could not be read. */
export type LoadResult = Result<unknown>;

export {
  describeReadError,
  fileProblem,
  parseDocumentText,
  yamlStreamErrors,
} from "@flotilla/node";

/** Reads and parses one input file. */
export async function loadDocument(
  io: CliIo,
  file: string,
): Promise<LoadResult> {
  let source: string;
  try {
    source = await io.readFile(file);
  } catch (error) {
    return fail([
      fileProblem(file, `cannot read: ${describeReadError(error)}`),
    ]);
  }
  return parseDocumentText(file, source);
}

/** Loads several named files, all of them even when some fail, so every problem is shown at once. */
export async function loadDocuments<K extends string>(
  io: CliIo,
  files: Readonly<Partial<Record<K, string>>>,
): Promise<Result<Partial<Record<K, unknown>>>> {
  const entries = Object.entries(files) as [K, string | undefined][];
  const loaded = await Promise.all(
    entries.map(
      async ([key, file]) =>
        [
          key,
          file === undefined ? undefined : await loadDocument(io, file),
        ] as const,
    ),
  );
  const value: Partial<Record<K, unknown>> = {};
  const problems: Problem[] = [];
  for (const [key, result] of loaded) {
    if (result === undefined) continue;
    if (result.ok) value[key] = result.value;
    else problems.push(...result.problems);
  }
  return problems.length > 0 ? fail(problems) : ok(value);
}
