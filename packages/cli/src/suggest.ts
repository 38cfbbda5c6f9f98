/**
 * "Did you mean" for names typed on the command line or in a file the CLI reads itself. Core's
 * schema helpers do the same for the documents core parses; this covers what never reaches core
 * (fleet.yaml's top-level keys are checked here, before anything is sent).
 */

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] ?? 0;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(above + 1, (row[j - 1] ?? 0) + 1, diagonal + cost);
      diagonal = above;
    }
  }
  return row[b.length] ?? 0;
}

/** The known name closest to `name` (case-insensitively), when close enough to be a typo. */
export function closestName(
  name: string,
  known: readonly string[],
): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of known) {
    const score = distance(name.toLowerCase(), candidate.toLowerCase());
    if (score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return bestScore <= Math.max(2, Math.floor(name.length / 3))
    ? best
    : undefined;
}
