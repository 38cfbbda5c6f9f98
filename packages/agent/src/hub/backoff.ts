/**
 * Reconnect delays (docs/agent-protocol.md, Session 7): jittered exponential backoff. The ceiling
 * starts at `initialMs` and doubles after every failed attempt up to `maxMs`; each delay is the
 * ceiling times a random factor in [1 - jitter, 1 + jitter), so thousands of agents that lost the
 * same hub do not come back in step. Randomness is injected, so tests know every delay.
 */

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

/** The delays of one reconnecting client. */
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
      // 2 ** attempts overflows to Infinity long after the cap: Math.min keeps it finite.
      const ceilingMs = Math.min(maxMs, initialMs * 2 ** attempts);
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
