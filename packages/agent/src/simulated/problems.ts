/**
 * zod issues as core {@link Problem}s with printable field paths (`clusters[2].failures.applyRate`),
 * so simulated-cluster config errors read like every other flotilla input error.
 */
import { fail, joinPath, ok, type Problem, type Result } from "@flotilla/core";
import type { z } from "zod";

function pathOf(prefix: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (at, part) => joinPath(at, typeof part === "number" ? part : String(part)),
    prefix,
  );
}

/** Converts zod issues to problems, every path starting at `prefix`. */
export function zodProblems(error: z.ZodError, prefix = ""): Problem[] {
  return error.issues.flatMap((issue): Problem[] => {
    const path = pathOf(prefix, issue.path);
    if (issue.code === "unrecognized_keys")
      return issue.keys.map((key) => ({
        path: joinPath(path, key),
        message: "unknown field",
      }));
    if (issue.code === "invalid_type" && issue.input === undefined)
      return [{ path, message: "is required" }];
    const message =
      issue.code === "invalid_type"
        ? `must be ${issue.expected}`
        : issue.code === "invalid_value"
          ? `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`
          : issue.message;
    return issue.input === undefined
      ? [{ path, message }]
      : [{ path, message, value: issue.input }];
  });
}

/** Runs `schema` on untrusted input; problems carry paths prefixed with `prefix`. */
export function parseWithSchema<T>(
  schema: z.ZodType<T>,
  raw: unknown,
  prefix = "",
): Result<T> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  return parsed.success
    ? ok(parsed.data)
    : fail(zodProblems(parsed.error, prefix));
}
