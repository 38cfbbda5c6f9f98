/**
 * Durations as people write them in flags and config: `10s`, `5m`, `1h30m`, `2d`, `500ms` (Go's
 * style, plus days). A bare number is refused: whether `60` means seconds or minutes is exactly the
 * kind of guess that goes wrong in a rollout. The CLI, the hub's and the agent's configs share it.
 */

import { fail, ok, problem, type Result } from "./result.js";

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

const NOT_A_DURATION = "must be a duration like 30s, 10m, 1h30m or 2d";

/** Milliseconds of `text`, or one problem (with no path) saying what is wrong with it. */
export function parseDuration(text: string): Result<number> {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed))
    return fail([problem(`needs a unit, e.g. "${trimmed}s" or "${trimmed}m"`)]);
  let total = 0;
  PART.lastIndex = 0;
  let index = 0;
  while (index < trimmed.length) {
    PART.lastIndex = index;
    const match = PART.exec(trimmed);
    if (match === null) {
      return fail([problem(NOT_A_DURATION)]);
    }
    const [whole, amount = "0", unit = "ms"] = match;
    total += Number(amount) * (UNIT_MS[unit] ?? 1);
    index += whole.length;
  }
  if (trimmed === "") return fail([problem(NOT_A_DURATION)]);
  return ok(Math.round(total));
}
