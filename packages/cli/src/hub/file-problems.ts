/**
 * The hub validates user-written documents (strategies, fleet.yaml fields) with core's parsers, so
 * its problem paths are paths inside the user's file. These helpers print them against the file,
 * `FILE: PATH: MESSAGE (got VALUE)`, after removing the request field a hub may have prefixed
 * (`strategyJson.stages[0]` → `stages[0]`).
 */
import { formatProblem, type Problem } from "@flotilla/core";
import type { ProblemLines } from "./hub-errors.js";

/** `path` without a leading request field from `fields`, or undefined when it has none of them. */
export function stripField(
  path: string,
  fields: readonly string[],
): string | undefined {
  for (const field of fields) {
    if (path === field) return "";
    if (path.startsWith(`${field}.`)) return path.slice(field.length + 1);
    if (path.startsWith(`${field}[`)) return path.slice(field.length);
  }
  return undefined;
}

/** Problems of a document sent in request field(s) `fields`, printed against `file`. */
export function fileProblemLines(
  file: string,
  fields: readonly string[],
): ProblemLines {
  return (problems: readonly Problem[]) =>
    problems.map((p) => {
      const path = stripField(p.path, fields) ?? p.path;
      return `${file}: ${formatProblem({ ...p, path })}`;
    });
}
