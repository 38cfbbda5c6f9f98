import { setTimeout as delay } from "node:timers/promises";
import { FlotillaError, compact } from "@flotilla/core";

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** How long to keep trying before failing; default 5000 ms. */
  timeoutMs?: number;
  /** Pause between attempts; default 20 ms. */
  intervalMs?: number;
  /** Stops waiting early; the returned promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** What is being waited for, for the timeout message ("the run to complete"). */
  message?: string;
}

type Truthy<T> = Exclude<T, false | 0 | "" | null | undefined>;

/**
 * Polls `predicate` until it returns a truthy value and resolves with that value. A predicate that
 * throws counts as "not yet"; the last error becomes the timeout error's `cause`, so a failing
 * assertion inside the predicate explains the timeout. Rejects with `deadline_exceeded` after
 * `timeoutMs`. This replaces sleeps in tests: it waits exactly as long as needed.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Truthy<Awaited<T>>> {
  const { timeoutMs = 5_000, intervalMs = 20, signal, message } = options;
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  let attempts = 0;
  for (;;) {
    signal?.throwIfAborted();
    attempts++;
    try {
      const value = await predicate();
      if (value) return value as Truthy<Awaited<T>>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    const remainingMs = deadline - performance.now();
    if (remainingMs <= 0) break;
    try {
      await delay(
        Math.min(intervalMs, remainingMs),
        undefined,
        signal ? { signal } : {},
      );
    } catch (error) {
      // Node rejects an aborted delay with its own AbortError; callers expect the signal's reason.
      signal?.throwIfAborted();
      throw error;
    }
  }
  const what = message ?? "a condition";
  const why =
    lastError instanceof Error
      ? `: last attempt failed: ${lastError.message}`
      : "";
  throw new FlotillaError(
    "deadline_exceeded",
    `Timed out after ${String(timeoutMs)} ms (${String(attempts)} attempts) waiting for ${what}${why}`,
    compact({ cause: lastError }),
  );
}
