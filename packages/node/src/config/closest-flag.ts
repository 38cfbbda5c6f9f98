import { editDistance } from "@flotilla/core";

/** The known flag closest to a mistyped one (at most three edits away), for "did you mean". */
export function closestFlag(
  flag: string,
  flags: readonly string[],
): string | undefined {
  const best = flags
    .map((f) => [f, editDistance(flag, f)] as const)
    .sort((x, y) => x[1] - y[1])[0];
  return best !== undefined && best[1] <= 3 ? best[0] : undefined;
}
