/**
 * Splitting a manifest file into its YAML documents (JSON is YAML too), with the line each starts
 * on, for messages. YAML 1.2 core schema, as Kubernetes reads it: duplicate keys are errors,
 * merge keys (`<<`) are allowed, aliases are capped (no "billion laughs"), and each document is
 * held to core's input bounds (nesting depth, refused keys).
 */
import { boundsProblems, formatProblem, tooDeepProblem } from "@flotilla/core";
import { LineCounter, parseAllDocuments } from "yaml";

/** One document of a file: its value and the 1-based line of its first content. */
export interface ManifestDocument {
  readonly value: unknown;
  readonly line: number;
}

/** Why a file could not be read, and where. */
export interface DocumentError {
  readonly line: number;
  readonly column?: number;
  readonly message: string;
}

/** Aliases one document may expand, at most (the yaml package's default, made explicit). */
const MAX_ALIAS_COUNT = 100;

/** The documents of `text` in order (empty documents skipped), or the first error. */
export function parseDocuments(
  text: string,
):
  | { ok: true; documents: ManifestDocument[] }
  | { ok: false; error: DocumentError } {
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
      return {
        ok: false,
        error: {
          line: at?.line ?? 1,
          ...(at === undefined ? {} : { column: at.col }),
          message,
        },
      };
    }
    // A document of only comments (or nothing) has no contents: nothing to apply.
    if (doc.contents === null) continue;
    const line = lines.linePos(doc.contents.range[0]).line;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (e) {
      const message =
        e instanceof RangeError
          ? tooDeepProblem("").message
          : e instanceof Error
            ? e.message
            : String(e);
      return { ok: false, error: { line, message } };
    }
    const [outOfBounds] = boundsProblems(value, "");
    if (outOfBounds !== undefined) {
      return {
        ok: false,
        error: { line, message: formatProblem(outOfBounds) },
      };
    }
    documents.push({ value, line });
  }
  return { ok: true, documents };
}
