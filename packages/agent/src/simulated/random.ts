/**
 * Injected randomness: a seedable generator so simulated failures and durations are the same on
 * every run with the same seed, and a seed derivation so each simulated cluster has its own stream
 * whatever order a fleet lists them in.
 */

/** A source of uniform numbers in [0, 1), like `Math.random`. */
export type Random = () => number;

/** mulberry32: a small, fast 32-bit PRNG; deterministic for a given seed (not for cryptography). */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed derived from `parts` (FNV-1a over their text), e.g. `seedFrom(fleetSeed, name)`. */
export function seedFrom(...parts: readonly (string | number)[]): number {
  let hash = 0x811c9dc5;
  for (const char of parts.map(String).join("\u0000")) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** An independent stream split off `random`, so one purpose's draws do not shift another's. */
export function forkRandom(random: Random): Random {
  return mulberry32(Math.floor(random() * 4294967296));
}
