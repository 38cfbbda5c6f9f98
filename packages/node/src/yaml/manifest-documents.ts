/**
 * Splitting a manifest file into its YAML documents (JSON is YAML too), with the line each starts
 * on, for messages. YAML 1.2 core schema, as Kubernetes reads it: duplicate keys are errors,
 * merge keys (`<<`) are allowed, aliases are capped (no "billion laughs"), and each document is
 * held to core's input bounds (nesting depth, refused keys).
 */
import {
  boundsProblems,
  compact,
  fail,
  formatProblem,
  ok,
  tooDeepProblem,
  type Problem,
  type Result,
} from "@flotilla/core";
import { LineCounter, parseAllDocuments } from "yaml";
import { documentValue } from "./document-value.js";

/** One document of a file: its value and the 1-based line of its first content. */
export interface ManifestDocument {
  readonly value: unknown;
  readonly line: number;
}

/** Why a file could not be read, and where: a problem of the file as a whole, at a line (and column). */
export interface DocumentProblem extends Problem {
  readonly line: number;
  readonly column?: number;
}

function documentProblem(
  line: number,
  message: string,
  column?: number,
): DocumentProblem {
  return { path: "", message, line, ...compact({ column }) };
}

/** Aliases one document may expand, at most (the yaml package's default, made explicit). */
const MAX_ALIAS_COUNT = 100;

/** The documents of `text` in order (empty documents skipped), or the first problem. */
export function parseDocuments(
  text: string,
): Result<ManifestDocument[], DocumentProblem> {
  const lines = new LineCounter();
  const documents: ManifestDocument[] = [];
  for (const doc of parseAllDocuments(text, {
    lineCounter: lines,
    merge: true,
  })) {
    const [error] = doc.errors;
    if (error !== undefined) {
      const at = error.linePos?.[0];
      // The message repeats the position and quotes the source: keep its first sentence. The
      // parser gives up on deep nesting when its stack runs out: say what the limit is instead.
      const message =
        error.code === "RESOURCE_EXHAUSTION"
          ? tooDeepProblem("").message
          : (error.message.split("\n")[0] ?? "").replace(
              / at line \d+, column \d+:?$/,
              "",
            );
      return fail([documentProblem(at?.line ?? 1, message, at?.col)]);
    }
    // A document of only comments (or nothing) has no contents: nothing to apply.
    if (doc.contents === null) continue;
    const line = lines.linePos(doc.contents.range[0]).line;
    const converted = documentValue(doc, MAX_ALIAS_COUNT);
    if (!converted.ok) return fail([documentProblem(line, converted.message)]);
    const { value } = converted;
    const [outOfBounds] = boundsProblems(value, "");
    if (outOfBounds !== undefined) {
      return fail([documentProblem(line, formatProblem(outOfBounds))]);
    }
    documents.push({ value, line });
  }
  return ok(documents);
}
