/**
 * Durations as people write them in flags and config: `10s`, `5m`, `1h30m`, `2d`, `500ms` (Go's
 * style, plus days). A bare number is refused: whether `60` means seconds or minutes is exactly the
 * kind of guess that goes wrong in a rollout. The CLI, the hub's and the agent's configs share it.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/** Milliseconds of `text`, or a message saying what is wrong with it. */
export function parseDuration(
  text: string,
):
  | { readonly ok: true; readonly ms: number }
  | { readonly ok: false; readonly message: string } {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed))
    return {
      ok: false,
      message: `needs a unit, e.g. "${trimmed}s" or "${trimmed}m"`,
    };
  let total = 0;
  PART.lastIndex = 0;
  let index = 0;
  while (index < trimmed.length) {
    PART.lastIndex = index;
    const match = PART.exec(trimmed);
    if (match === null) {
      return {
        ok: false,
        message: "must be a duration like 30s, 10m, 1h30m or 2d",
      };
    }
    const [whole, amount = "0", unit = "ms"] = match;
    total += Number(amount) * (UNIT_MS[unit] ?? 1);
    index += whole.length;
  }
  if (trimmed === "")
    return {
      ok: false,
      message: "must be a duration like 30s, 10m, 1h30m or 2d",
    };
  return { ok: true, ms: Math.round(total) };
}
