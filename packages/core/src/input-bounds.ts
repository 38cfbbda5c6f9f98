/**
 * Bounds on every document flotilla reads from outside (API fields, files, messages) that no
 * schema can express: how deeply objects and arrays nest, and keys that must never become object
 * properties. One iterative walk checks both, so a value nested 10,000 deep is refused without
 * overflowing the stack, and the recursive code behind it (merge patches, canonical JSON, YAML,
 * zod, `JSON.stringify`) only ever sees values at most {@link MAX_NESTING_DEPTH} deep.
 */
import { fail, joinPath, ok, type Problem, type Result } from "./result.js";

/**
 * Deepest nesting of objects and arrays in a document from outside. Kubernetes objects are the
 * deepest flotilla carries: a CRD whose schema embeds a PodTemplateSpec nests about 60 levels.
 * 128 leaves room for those and stays far below where recursion in Node overflows (YAML composition
 * gives up near 800 levels).
 */
export const MAX_NESTING_DEPTH = 128;

/**
 * Keys refused in every object from outside, free-form maps (labels, Kubernetes objects, merge
 * patches) included: JavaScript turns `obj["__proto__"] = v` into a change of prototype, so such a
 * key is silently dropped or, worse, makes every other key of the object inherited. (`constructor`
 * and `prototype` are refused as unknown fields wherever a schema lists the fields; in free-form
 * maps they are ordinary keys, as Kubernetes allows, and flotilla reads those maps by own keys.)
 */
export const REFUSED_KEYS: readonly string[] = ["__proto__"];

/** Most problems one walk reports: as many as travel with an error. */
const MAX_PROBLEMS = 20;

/** Longest path a problem names; a deeper one is cut and ends in "…". */
const MAX_PATH_LENGTH = 200;

interface Frame {
  readonly value: object;
  readonly depth: number;
  readonly parent: Frame | undefined;
  readonly key: string | number;
}

function pathOf(root: string, frame: Frame | undefined): string {
  const keys: (string | number)[] = [];
  for (let f = frame; f !== undefined; f = f.parent) keys.push(f.key);
  let path = root;
  for (let i = keys.length - 2; i >= 0; i--) {
    path = joinPath(path, keys[i] ?? "");
    if (path.length > MAX_PATH_LENGTH)
      return `${path.slice(0, MAX_PATH_LENGTH)}…`;
  }
  return path;
}

/** The problem of a value nested too deeply at `path` (also for parsers that gave up on it). */
export function tooDeepProblem(path: string): Problem {
  return {
    path,
    message: `is nested more than ${String(MAX_NESTING_DEPTH)} levels deep (objects and arrays)`,
  };
}

/**
 * What is out of bounds in `value` (a document read from outside whose problems are reported
 * under `path`): objects or arrays nested deeper than {@link MAX_NESTING_DEPTH}, and keys in
 * {@link REFUSED_KEYS}. Iterative, in document order, at most 20 problems.
 */
export function boundsProblems(value: unknown, path: string): Problem[] {
  if (typeof value !== "object" || value === null) return [];
  const problems: Problem[] = [];
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: "" }];
  while (stack.length > 0 && problems.length < MAX_PROBLEMS) {
    const frame = stack.pop();
    if (frame === undefined) break;
    if (frame.depth > MAX_NESTING_DEPTH) {
      problems.push(tooDeepProblem(pathOf(path, frame)));
      continue;
    }
    const children: Frame[] = [];
    const visit = (child: unknown, key: string | number): void => {
      if (typeof child === "object" && child !== null) {
        children.push({
          value: child,
          depth: frame.depth + 1,
          parent: frame,
          key,
        });
      }
    };
    if (Array.isArray(frame.value)) {
      frame.value.forEach(visit);
    } else {
      for (const [key, child] of Object.entries(frame.value)) {
        if (REFUSED_KEYS.includes(key)) {
          problems.push({
            path: pathOf(path, { value: {}, depth: 0, parent: frame, key }),
            message: `is not allowed: "${key}" is never a field name and is refused as a key`,
          });
          continue;
        }
        visit(child, key);
      }
    }
    // Pushed in reverse, so the walk pops them in document order.
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i];
      if (child !== undefined) stack.push(child);
    }
  }
  return problems;
}

/**
 * Parses JSON text from outside and checks its bounds; problems are under `path` (the field or
 * file that held the text).
 */
export function parseJsonText(text: string, path: string): Result<unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8's JSON parser does not recurse, but an engine whose parser does overflows here.
    if (error instanceof RangeError) return fail([tooDeepProblem(path)]);
    return fail([
      {
        path,
        message: `is not valid JSON (${error instanceof Error ? error.message : String(error)})`,
        value: text.length > 200 ? `${text.slice(0, 199)}…` : text,
      },
    ]);
  }
  const problems = boundsProblems(value, path);
  return problems.length > 0 ? fail(problems) : ok(value);
}
