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

/** Levenshtein distance: insertions, deletions and substitutions from `a` to `b`. */
function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] ?? 0;
      row[j] = Math.min(
        cur + 1,
        (row[j - 1] ?? 0) + 1,
        prev + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      prev = cur;
    }
  }
  return row[b.length] ?? 0;
}
