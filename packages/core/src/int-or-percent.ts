/**
 * Int-or-percent values (docs/semantics.md#int-or-percent) and the three rules that turn them into
 * counts.
 *
 * A value is an integer or a string `"N%"`; a numeric string without `%` is the integer it spells.
 * Each field uses exactly one rule: {@link fleetLimit} for Fleet's maxUnavailable,
 * maxUnavailablePartitions and autoPartitionSize; {@link concurrency} for maxConcurrency;
 * {@link failureBudget} for maxAllowedFailures. Fleet's fields accept negative values, as Fleet does
 * (docs/semantics.md#negative-values); the other two rules refuse them.
 */
import { fail, ok, type Problem, type Result } from "./result.js";

/** A parsed int-or-percent. `percent` may be fractional (`"12.5%"`) for Fleet fields. */
export type IntOrPercent =
  | { readonly kind: "int"; readonly value: number }
  | { readonly kind: "percent"; readonly value: number };

/** The raw shapes accepted in YAML/JSON. */
export type IntOrPercentInput = number | string;

/** Which rule a field follows; decides which values are acceptable. */
export type IntOrPercentRule = "fleetLimit" | "concurrency" | "failureBudget";

const INTEGER = /^-?(0|[1-9][0-9]*)$/;
const PERCENT = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?%$/;

// "-0" is 0: a negative zero would print as "0" yet compare differently in tests and JSON.
const number = (text: string): number => Number(text) || 0;

/** Parses a raw value for a field that follows `rule`; every problem names `path`. */
export function parseIntOrPercent(
  raw: unknown,
  path: string,
  rule: IntOrPercentRule,
): Result<IntOrPercent> {
  const parsed = parseShape(raw, path);
  if (!parsed.ok) return parsed;
  const problem = checkRange(parsed.value, raw, path, rule);
  return problem === undefined ? parsed : fail([problem]);
}

function parseShape(raw: unknown, path: string): Result<IntOrPercent> {
  if (typeof raw === "number") {
    if (!Number.isInteger(raw)) {
      return fail([
        {
          path,
          message: 'must be an integer or a percentage like "25%"',
          value: raw,
        },
      ]);
    }
    return ok({ kind: "int", value: raw || 0 });
  }
  if (typeof raw !== "string") {
    return fail([
      {
        path,
        message: 'must be an integer or a percentage like "25%"',
        value: raw,
      },
    ]);
  }
  const text = raw.trim();
  if (INTEGER.test(text)) return ok({ kind: "int", value: number(text) });
  if (PERCENT.test(text))
    return ok({ kind: "percent", value: number(text.slice(0, -1)) });
  let message = 'must be an integer or a percentage like "25%"';
  if (/^-?0[0-9]/.test(text))
    message = 'must not have a leading zero (write "5", not "05")';
  else if (/^-?[0-9]+\.[0-9]+$/.test(text))
    message = 'a fraction needs a "%" sign (e.g. "10.5%")';
  return fail([{ path, message, value: raw }]);
}

function checkRange(
  value: IntOrPercent,
  raw: unknown,
  path: string,
  rule: IntOrPercentRule,
): Problem | undefined {
  // Only Fleet's own fields take negative values (Fleet clamps them); AKS's numbers never do.
  if (rule !== "fleetLimit" && value.value < 0)
    return { path, message: "must not be negative", value: raw };
  switch (rule) {
    case "fleetLimit":
      return undefined;
    case "concurrency":
      if (value.kind === "int") {
        return value.value >= 1
          ? undefined
          : { path, message: "must be at least 1", value: raw };
      }
      if (
        !Number.isInteger(value.value) ||
        value.value < 1 ||
        value.value > 100
      ) {
        return {
          path,
          message: "must be a whole percentage from 1% to 100%",
          value: raw,
        };
      }
      return undefined;
    case "failureBudget":
      if (value.kind === "int") return undefined;
      if (!Number.isInteger(value.value) || value.value > 100) {
        return {
          path,
          message: "must be a whole percentage from 0% to 100%",
          value: raw,
        };
      }
      return undefined;
    default: {
      const never: never = rule;
      return never;
    }
  }
}

/** Renders a parsed value back to its canonical text (`5`, `"25%"`). */
export function intOrPercentToString(value: IntOrPercent): string {
  return value.kind === "int" ? String(value.value) : `${String(value.value)}%`;
}

/**
 * Rancher Fleet's limit rule. count ≤ 0 → 1; integers clamp to [0, count] (so a
 * negative integer gives 0); percentages are `floor(trunc(count × p) / 100)` in floating point,
 * then at least 1 (so a negative percentage gives 1), at most count. Truncating the product first
 * reproduces Go's float64 result: "18.4%" of 375 → 68, not 69.
 */
export function fleetLimit(count: number, value: IntOrPercent): number {
  if (count <= 0) return 1;
  if (value.kind === "int") return Math.min(Math.max(value.value, 0), count);
  const scaled = Math.trunc(Math.trunc(count * value.value) / 100);
  if (scaled <= 0) return 1;
  return Math.min(scaled, count);
}

/**
 * maxConcurrency (docs/semantics.md#int-or-percent, rule 2): integers as given; percent →
 * floor(count × p / 100), at least 1.
 */
export function concurrency(count: number, value: IntOrPercent): number {
  if (value.kind === "int") return Math.max(value.value, 1);
  return Math.max(Math.floor((count * value.value) / 100), 1);
}

/**
 * maxAllowedFailures (docs/semantics.md#int-or-percent, rule 3): integers as given; percent →
 * ceil(count × p / 100).
 */
export function failureBudget(count: number, value: IntOrPercent): number {
  if (value.kind === "int") return value.value;
  // count × p is exact for the whole percentages this rule accepts, so ceil sees no float noise.
  return Math.ceil((count * value.value) / 100);
}
