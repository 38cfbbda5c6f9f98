/**
 * zod helpers shared by every parser in core: strict objects that name unknown fields and suggest
 * the closest known one, int-or-percent and selector fields, and the conversion of zod issues into
 * {@link Problem}s with printable field paths.
 */
import { z } from "zod";
import {
  parseIntOrPercent,
  type IntOrPercent,
  type IntOrPercentRule,
} from "./int-or-percent.js";
import {
  parseSelectorString,
  parseSelectorStruct,
  type LabelSelector,
} from "./label-selector.js";
import { fail, ok, type Problem, type Result } from "./result.js";

/**
 * Levenshtein distance (insertions, deletions and substitutions from `a` to `b`), for "did you
 * mean" suggestions.
 */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] ?? 0;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((row[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, prev + cost);
      prev = cur;
    }
  }
  return row[b.length] ?? 0;
}

/** The known name closest to `name`, when it is close enough to be a likely typo. */
export function closestName(
  name: string,
  known: readonly string[],
): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  const lower = name.toLowerCase();
  for (const candidate of known) {
    const score =
      candidate.toLowerCase() === lower
        ? 0
        : editDistance(lower, candidate.toLowerCase());
    if (score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  const allowed = Math.max(2, Math.floor(name.length / 3));
  return bestScore <= allowed ? best : undefined;
}

/** Message for an unknown field, with a suggestion when one is close. */
export function unknownFieldMessage(
  name: string,
  known: readonly string[],
): string {
  const guess = closestName(name, known);
  return guess === undefined
    ? `unknown field (known fields: ${known.join(", ")})`
    : `unknown field; did you mean "${guess}"?`;
}

/** An object schema that rejects unknown keys, suggesting the closest known one. */
// Its type is zod's pipe of the loose object into the key-dropping transform, generic in `Shape`:
// only inference spells it usefully.
// eslint-disable-next-line @typescript-eslint/explicit-module-boundary-types
export function strictObject<Shape extends z.ZodRawShape>(shape: Shape) {
  const known = Object.keys(shape);
  return z
    .object(shape)
    .loose()
    .superRefine(
      (value, ctx) => {
        if (typeof value !== "object" || value === null) return;
        for (const key of Object.keys(value)) {
          if (!known.includes(key)) {
            ctx.addIssue({
              code: "custom",
              path: [key],
              message: unknownFieldMessage(key, known),
            });
          }
        }
      },
      { when: () => true },
    )
    .transform((value) => {
      // Drop unknown keys from the parsed value (they were reported above).
      const out: Record<string, unknown> = {};
      for (const key of known)
        if (key in value) out[key] = (value as Record<string, unknown>)[key];
      return out as z.infer<z.ZodObject<Shape>>;
    });
}

function pathString(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${String(part)}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

function prefixPath(prefix: string, path: string): string {
  if (prefix === "") return path;
  if (path === "") return prefix;
  return path.startsWith("[") ? `${prefix}${path}` : `${prefix}.${path}`;
}

/** Converts zod issues to problems; paths are prefixed with `prefix`. */
export function zodProblems(error: z.ZodError, prefix = ""): Problem[] {
  const problems: Problem[] = [];
  for (const issue of error.issues) {
    const path = prefixPath(prefix, pathString(issue.path));
    let message = issue.message;
    if (issue.code === "invalid_type") {
      message =
        issue.input === undefined ? "is required" : `must be ${issue.expected}`;
    }
    if (issue.code === "invalid_value" && "values" in issue) {
      message = `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    }
    if (issue.input === undefined || issue.code === "custom") {
      problems.push(
        issue.code === "custom" &&
          issue.input !== undefined &&
          !message.startsWith("unknown field")
          ? { path, message, value: issue.input }
          : { path, message },
      );
    } else {
      problems.push({ path, message, value: issue.input });
    }
  }
  return problems;
}

/** Runs a schema on untrusted input and returns a Result with path-prefixed problems. */
export function parseWith<T>(
  schema: z.ZodType<T>,
  raw: unknown,
  prefix = "",
): Result<T> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (parsed.success) return ok(parsed.data);
  return fail(zodProblems(parsed.error, prefix));
}

/** A field holding an int-or-percent that follows `rule`. */
export function intOrPercentField(
  rule: IntOrPercentRule,
): z.ZodPipe<
  z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>,
  z.ZodTransform<IntOrPercent, number | string>
> {
  return z
    .union([z.number(), z.string()])
    .transform((raw, ctx): IntOrPercent => {
      const parsed = parseIntOrPercent(raw, "", rule);
      if (parsed.ok) return parsed.value;
      for (const problem of parsed.problems) {
        ctx.addIssue({ code: "custom", message: problem.message, input: raw });
      }
      return z.NEVER;
    });
}

/** A field holding a selector in the string form (`env=prod,tier in (a,b)`). */
export const selectorStringField = z
  .string()
  .transform((raw, ctx): LabelSelector => {
    const parsed = parseSelectorString(raw, "");
    if (parsed.ok) return parsed.value;
    for (const problem of parsed.problems) {
      ctx.addIssue({ code: "custom", message: problem.message, input: raw });
    }
    return z.NEVER;
  });

/** A field holding a selector in the struct form (`{matchLabels, matchExpressions}`). */
export const selectorStructField = z
  .unknown()
  .transform((raw, ctx): LabelSelector => {
    const parsed = parseSelectorStruct(raw, "");
    if (parsed.ok) return parsed.value;
    for (const problem of parsed.problems) {
      ctx.addIssue({
        code: "custom",
        message: problem.message,
        path:
          problem.path === ""
            ? []
            : problem.path.split(/[.[\]]+/).filter((p) => p !== ""),
        input: problem.value,
      });
    }
    return z.NEVER;
  });

/**
 * A DNS label (RFC 1123, as Kubernetes names): lower-case letters, digits and '-', starting and
 * ending alphanumeric. Names of stages, groups, partitions, clusters and the objects operators
 * create; the length bound is each caller's (63 for a label, less for some names).
 */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Whether `value` is a DNS label of at most `max` characters. */
export function isDnsLabel(value: string, max = 63): boolean {
  return value.length <= max && DNS_LABEL.test(value);
}
