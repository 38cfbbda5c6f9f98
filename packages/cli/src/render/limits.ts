/**
 * Words for resolved limits, shared by the plan and the simulation renderers.
 */

/** `maxAllowedFailures` as people read it: 0 fails on the first failure; null imposes no limit. */
export function describeMaxAllowedFailures(value: number | null): string {
  if (value === null) return "maxAllowedFailures none (no limit of its own)";
  if (value === 0) return "maxAllowedFailures 0 (fail-fast)";
  return `maxAllowedFailures ${String(value)}`;
}

/** The limits an object sets, in a fixed order, for a `·`-separated label. */
export function limitWords(limits: {
  readonly maxUnavailable?: number;
  readonly maxConcurrency?: number;
  readonly maxAllowedFailures?: number | null;
}): string[] {
  const words: string[] = [];
  if (limits.maxUnavailable !== undefined)
    words.push(`maxUnavailable ${String(limits.maxUnavailable)}`);
  if (limits.maxConcurrency !== undefined)
    words.push(`maxConcurrency ${String(limits.maxConcurrency)}`);
  if (limits.maxAllowedFailures !== undefined)
    words.push(describeMaxAllowedFailures(limits.maxAllowedFailures));
  return words;
}

/** `1 cluster`, `3 clusters`. */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${String(n)} ${n === 1 ? noun : plural}`;
}

/** Separator between the facts on one line. */
export const DOT = " · ";
