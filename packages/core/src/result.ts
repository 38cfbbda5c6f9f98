/**
 * Validation results. Parsers of untrusted input never throw for bad input: they return every
 * problem at once, each with the field path and the offending value, so a person can fix a file in
 * one go.
 */

/** One thing wrong with an input: where (a field path like `stages[0].maxConcurrency`), what, and the value. */
export interface Problem {
  readonly path: string;
  readonly message: string;
  readonly value?: unknown;
}

/**
 * Either the parsed value or the list of problems that prevented it. P narrows the problem type
 * where problems carry more (e.g. which input file they are in).
 */
export type Result<T, P extends Problem = Problem> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly problems: readonly P[] };

/** Wraps a value as a successful result. */
export function ok<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

/** Wraps problems as a failed result. */
export function fail<P extends Problem = Problem>(
  problems: readonly P[],
): { readonly ok: false; readonly problems: readonly P[] } {
  return { ok: false, problems };
}

/** A problem with no field path: a message about the input as a whole. */
export function problem(message: string): Problem {
  return { path: "", message };
}

/** Joins a parent path and a child key or index the way problems print them. */
export function joinPath(parent: string, child: string | number): string {
  if (typeof child === "number") return `${parent}[${String(child)}]`;
  return parent === "" ? child : `${parent}.${child}`;
}

/** Renders a value for an error message: strings quoted, everything else as JSON. */
export function showValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === undefined) return "undefined";
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  // JSON has no form for functions, symbols, bigints or cycles: say what the value is instead.
  if (text === undefined) return `<${typeof value}>`;
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Formats a problem as one line: `path: message (got VALUE)`. */
export function formatProblem(problem: Problem): string {
  const where = problem.path === "" ? "" : `${problem.path}: `;
  const got = "value" in problem ? ` (got ${showValue(problem.value)})` : "";
  return `${where}${problem.message}${got}`;
}

/** Formats every problem with {@link formatProblem}, one per line (or joined by `separator`). */
export function formatProblems(
  problems: readonly Problem[],
  separator = "\n",
): string {
  return problems.map(formatProblem).join(separator);
}
