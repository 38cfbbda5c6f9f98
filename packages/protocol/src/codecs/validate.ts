/**
 * zod helpers for decoding untrusted wire objects: bounded leaf fields with messages that name the
 * bound, and the conversion of zod issues into core's {@link Problem}s with field paths in the
 * wire's camelCase names (`status.reasons[3].message`).
 */
import {
  DNS_LABEL,
  fail,
  joinPath,
  ok,
  type Problem,
  type Result,
} from "@flotilla/core";
import { z } from "zod";
import { MAX_WIRE_INTEGER } from "../limits.js";

/** A string of at most `max` characters (and at least `min`). */
export function boundedString(max: number, min = 0): z.ZodString {
  const base = z.string().max(max, `must be at most ${String(max)} characters`);
  return min === 0
    ? base
    : base.min(
        min,
        min === 1
          ? "must not be empty"
          : `must be at least ${String(min)} characters`,
      );
}

/** A list of at most `max` items. */
export function boundedList<T extends z.ZodType>(
  item: T,
  max: number,
): z.ZodArray<T> {
  return z.array(item).max(max, `must have at most ${String(max)} items`);
}

/** A whole number from `min` up to `max` (default: the largest exact 64-bit value). */
export function wholeNumber(min = 0, max = MAX_WIRE_INTEGER): z.ZodNumber {
  // Not zod's .int(): it also refuses unsafe integers, saying "whole number" about 2^53.
  return z
    .number()
    .min(min, `must be at least ${String(min)}`)
    .max(max, `must be at most ${String(max)}`)
    .refine(Number.isInteger, "must be a whole number");
}

/** An optional wire field: absent (undefined) or null both read as undefined. */
export function optional<T extends z.ZodType>(
  schema: T,
): z.ZodPipe<
  z.ZodOptional<z.ZodNullable<T>>,
  z.ZodTransform<z.output<T> | undefined, z.output<T> | null | undefined>
> {
  return schema.nullish().transform((v) => v ?? undefined);
}

/** A DNS-label name: lower-case letters, digits and '-', starting and ending alphanumeric. */
export function dnsLabel(max = 63): z.ZodString {
  return boundedString(max, 1).regex(
    DNS_LABEL,
    "must be a DNS label: lower-case letters, digits and '-', starting and ending alphanumeric",
  );
}

function pathOf(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const part of path) {
    out = joinPath(out, typeof part === "number" ? part : String(part));
  }
  return out;
}

/** Converts zod issues to problems; paths start at `prefix`. */
export function issuesToProblems(error: z.ZodError, prefix: string): Problem[] {
  return error.issues.map((issue) => {
    const path = pathOf(prefix, issue.path);
    const input = (issue as { input?: unknown }).input;
    let message = issue.message;
    if (issue.code === "invalid_type") {
      message =
        input === undefined || input === null
          ? "is required"
          : `must be ${issue.expected}`;
    } else if (issue.code === "invalid_value") {
      message = `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    }
    return input === undefined
      ? { path, message }
      : { path, message, value: input };
  });
}

/** Runs `schema` on untrusted `raw`; problems carry paths starting at `prefix`. */
export function parseWire<T>(
  schema: z.ZodType<T>,
  raw: unknown,
  prefix: string,
): Result<T> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (parsed.success) return ok(parsed.data);
  return fail(issuesToProblems(parsed.error, prefix));
}
