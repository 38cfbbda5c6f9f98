/**
 * Time for the agent's components, injected so tests and simulations control it: the system clock
 * for real processes, a manual clock that only moves when told to (no real sleeps in tests).
 */
import {
  setImmediate as macrotask,
  setTimeout as delay,
} from "node:timers/promises";

/** The time source every time-dependent agent component takes. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, options?: { readonly signal?: AbortSignal }): Promise<void>;
}

/** Wall-clock time and real timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  async sleep(ms, options = {}) {
    const { signal } = options;
    try {
      await delay(Math.max(0, ms), undefined, signal ? { signal } : {});
    } catch (error) {
      // Node rejects with its own AbortError; callers expect the signal's reason.
      signal?.throwIfAborted();
      throw error;
    }
  },
};

/** A clock for tests and simulations: time stands still until {@link ManualClock.advance}. */
export interface ManualClock extends Clock {
  /**
   * Moves time forward by `ms`, waking sleepers in due order (ties in the order they slept) and
   * letting each one's continuation run before the next, so chains of sleeps behave as in real time.
   */
  advance(ms: number): Promise<void>;
  /** How many sleepers are waiting (a test can check that nothing was left behind). */
  pending(): number;
}

interface Sleeper {
  readonly dueMs: number;
  readonly order: number;
  readonly wake: () => void;
}

/** A manual clock starting at `startMs` (default 2025-01-01T00:00:00Z). */
export function createManualClock(startMs = Date.UTC(2025, 0, 1)): ManualClock {
  let nowMs = startMs;
  let order = 0;
  const sleepers = new Set<Sleeper>();
  // One macrotask turn runs every continuation already queued, however many awaits deep.
  const settle = (): Promise<void> => macrotask();
  return {
    now: () => nowMs,
    sleep(ms, options = {}) {
      const { signal } = options;
      return new Promise<void>((resolve, reject) => {
        signal?.throwIfAborted();
        if (ms <= 0) {
          resolve();
          return;
        }
        const onAbort = (): void => {
          sleepers.delete(sleeper);
          reject(signal?.reason as Error);
        };
        const sleeper: Sleeper = {
          dueMs: nowMs + ms,
          order: order++,
          wake: () => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
          },
        };
        sleepers.add(sleeper);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    async advance(ms) {
      const targetMs = nowMs + Math.max(0, ms);
      for (;;) {
        await settle();
        let next: Sleeper | undefined;
        for (const s of sleepers) {
          if (s.dueMs > targetMs) continue;
          if (
            next === undefined ||
            s.dueMs < next.dueMs ||
            (s.dueMs === next.dueMs && s.order < next.order)
          )
            next = s;
        }
        if (next === undefined) break;
        sleepers.delete(next);
        nowMs = next.dueMs;
        next.wake();
      }
      nowMs = targetMs;
      await settle();
    },
    pending: () => sleepers.size,
  };
}
