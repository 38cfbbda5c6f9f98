/**
 * Reading YAML and JSON input text with problems a person can act on. YAML and JSON are told apart
 * by content, not by name: the `yaml` parser reads both (JSON is YAML's flow syntax). Every
 * problem's path is the file name, so its printed line (formatProblem) starts with it: `FILE:LINE:COL:
 * message` for syntax errors, with the source line and a caret under the spot on the lines after.
 * Documents are held to core's input bounds (nesting depth, refused keys). The CLI reads its input
 * files with these, and so do bundle directories (readBundleDir), in the CLI and in the hub.
 */
import {
  boundsProblems,
  fail,
  formatProblem,
  ok,
  tooDeepProblem,
  type Problem,
  type Result,
} from "@flotilla/core";
import {
  LineCounter,
  parseAllDocuments,
  parseDocument,
  type YAMLError,
} from "yaml";
import { documentValue } from "../yaml/document-value.js";

/** A problem with file `file` (its path), printed `FILE: message`. */
export function fileProblem(file: string, message: string): Problem {
  return { path: file, message };
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error))
    return undefined;
  return typeof error.code === "string" ? error.code : undefined;
}

const READ_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: "no such file",
  EISDIR: "is a directory",
  ENOTDIR: "is not a directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
};

/** Why a file could not be read, in words (Node's message repeats the path and the syscall). */
export function describeReadError(error: unknown): string {
  const code = errorCode(error);
  const known = code === undefined ? undefined : READ_ERRORS[code];
  if (known !== undefined) return known;
  return error instanceof Error ? error.message : String(error);
}

function caretLines(source: string, line: number, col: number): string[] {
  const text = source.split(/\r?\n/)[line - 1];
  if (text === undefined || text.trim() === "") return [];
  // Tabs keep their width in the caret line so the caret lines up under the character.
  const pad = text.slice(0, col - 1).replace(/[^\t]/g, " ");
  return [`  ${text}`, `  ${pad}^`];
}

/**
 * The errors worth showing of a document: the parser reports running out of stack on deep
 * nesting once per level it unwinds, so only the first of those is kept, in the limit's words.
 */
function shownErrors(
  errors: readonly YAMLError[],
): { readonly pos: number; readonly message: string }[] {
  const deep = errors.find((e) => e.code === "RESOURCE_EXHAUSTION");
  const rest = errors.filter((e) => e.code !== "RESOURCE_EXHAUSTION");
  return [
    ...(deep === undefined
      ? []
      : [{ pos: deep.pos[0], message: tooDeepProblem("").message }]),
    ...rest.map((e) => ({ pos: e.pos[0], message: e.message })),
  ];
}

/** Each shown error as a problem at `FILE:LINE:COL`, its message followed by the caret lines. */
function syntaxProblems(
  file: string,
  source: string,
  lineCounter: LineCounter,
  errors: readonly YAMLError[],
): Problem[] {
  return shownErrors(errors).map((error) => {
    const { line, col } = lineCounter.linePos(error.pos);
    return {
      path: `${file}:${String(line)}:${String(col)}`,
      message: [error.message, ...caretLines(source, line, col)].join("\n"),
    };
  });
}

/**
 * The syntax errors of a YAML stream (a manifest file may hold several documents), as
 * `FILE:LINE:COL: message` problems with a caret under the spot; empty when it parses.
 */
export function yamlStreamErrors(file: string, source: string): Problem[] {
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(source, {
    lineCounter,
    prettyErrors: false,
  });
  const docs = Array.isArray(parsed) ? parsed : [parsed];
  return docs.flatMap((doc) =>
    syntaxProblems(file, source, lineCounter, doc.errors),
  );
}

/**
 * Parses YAML or JSON text; `file` names the source in messages. An empty document is a problem
 * unless `allowEmpty`, when it reads as null.
 */
export function parseDocumentText(
  file: string,
  source: string,
  options: { readonly allowEmpty?: boolean } = {},
): Result<unknown> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0)
    return fail(syntaxProblems(file, source, lineCounter, doc.errors));
  const converted = documentValue(doc, 1000);
  if (!converted.ok) return fail([fileProblem(file, converted.message)]);
  const { value } = converted;
  const outOfBounds = boundsProblems(value, "");
  if (outOfBounds.length > 0) {
    return fail(outOfBounds.map((p) => fileProblem(file, formatProblem(p))));
  }
  if ((value === null || value === undefined) && options.allowEmpty === true)
    return ok(null);
  if (value === null || value === undefined) {
    return fail([
      fileProblem(file, "is empty (expected a YAML or JSON document)"),
    ]);
  }
  return ok(value);
}
