/**
 * Retry delays: exponential backoff with jitter. The ceiling starts at an initial delay and
 * doubles after every failed attempt up to a maximum; each delay is the ceiling scaled by a
 * random factor, so many clients that failed together do not retry in step. Randomness is
 * injected, so tests know every delay.
 */

/** The ceiling after `failures` failed attempts: `initialMs` doubled that often, at most `maxMs`. */
export function backoffCeilingMs(
  failures: number,
  initialMs: number,
  maxMs: number,
): number {
  // 2 ** failures overflows to Infinity long after the cap: Math.min keeps it finite.
  return Math.min(maxMs, initialMs * 2 ** failures);
}

/** `ceilingMs` times a random factor in [0.5, 1): at least half the ceiling, never more. */
export function halfJitter(ceilingMs: number, random: () => number): number {
  return ceilingMs * (0.5 + random() / 2);
}

/**
 * Options of {@link createBackoff}; defaults 500 ms doubling to 8 s, ±50%. The ceiling is low
 * enough that 10,000 agents that lost a restarting hub are all back within about 12 s of it
 * serving again (bench/e2e.mjs measures it); the jitter spreads them over that time.
 */
export interface BackoffOptions {
  readonly initialMs?: number;
  readonly maxMs?: number;
  /** Fraction of the ceiling a delay may differ by, in [0, 1]. */
  readonly jitter?: number;
  /** Uniform in [0, 1); default Math.random. */
  readonly random?: () => number;
}

/**
 * The delays of one retrying client (the agent's reconnects to the hub, docs/agent-protocol.md):
 * each delay is the ceiling times a random factor in [1 - jitter, 1 + jitter).
 */
export interface Backoff {
  /** The delay before the next attempt, in ms; each call counts one more failure. */
  next(): number;
  /** Back to the initial ceiling (after a session got through). */
  reset(): void;
  /** Failures counted since the last reset. */
  readonly attempts: number;
}

/** Creates a {@link Backoff}. */
export function createBackoff(options: BackoffOptions = {}): Backoff {
  const {
    initialMs = 500,
    maxMs = 8_000,
    jitter = 0.5,
    random = Math.random,
  } = options;
  let attempts = 0;
  return {
    next() {
      const ceilingMs = backoffCeilingMs(attempts, initialMs, maxMs);
      attempts++;
      const factor = 1 + jitter * (2 * random() - 1);
      return Math.max(0, Math.round(ceilingMs * factor));
    },
    reset() {
      attempts = 0;
    },
    get attempts() {
      return attempts;
    },
  };
}
