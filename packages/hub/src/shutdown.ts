/**
 * Stopping what the hub process opened, in reverse order, within one deadline (docs/running.md,
 * "Stopping"). A graceful stop may wait on something that never answers: draining a NATS
 * connection whose server is gone, a gRPC call that does not end. So every step gets what is
 * left of the deadline; a step that has not finished by then is abandoned and its `force`
 * (closing at once) runs instead, briefly. The caller exits afterwards whatever was left behind.
 */

/** One thing to stop. */
export interface StopStep {
  /** For the log: what did not stop in time. */
  readonly name: string;
  /** The graceful stop. */
  readonly stop: () => Promise<void> | void;
  /** Closes at once; run when `stop` did not finish within the deadline. */
  readonly force?: () => Promise<void> | void;
}

/** What {@link stopWithin} could not do cleanly. */
export interface StopOutcome {
  /** Steps whose graceful stop was still running at the deadline. */
  readonly unfinished: readonly string[];
  /** Steps whose stop (or force) threw. */
  readonly failed: readonly { readonly name: string; readonly err: unknown }[];
  /** How long each step took (its force included), in the order run: what made a stop slow. */
  readonly tookMs: readonly { readonly name: string; readonly ms: number }[];
}

/** How long a `force` may take once the deadline has passed. */
export const FORCE_GRACE_MS = 1_000;

/**
 * Runs `steps` one after the other (pass them in reverse order of start), all within `timeoutMs`.
 * Never rejects and never takes much longer than `timeoutMs` plus {@link FORCE_GRACE_MS} per
 * unfinished step.
 */
export async function stopWithin(
  steps: readonly StopStep[],
  timeoutMs: number,
): Promise<StopOutcome> {
  const deadline = performance.now() + timeoutMs;
  const unfinished: string[] = [];
  const failed: { name: string; err: unknown }[] = [];
  const tookMs: { name: string; ms: number }[] = [];
  for (const step of steps) {
    const started = performance.now();
    const remainingMs = Math.max(0, deadline - performance.now());
    const result = await settleWithin(step.stop, remainingMs);
    if (result.type === "failed")
      failed.push({ name: step.name, err: result.err });
    if (result.type === "timedOut") {
      unfinished.push(step.name);
      const forced =
        step.force === undefined
          ? undefined
          : await settleWithin(step.force, FORCE_GRACE_MS);
      if (forced?.type === "failed")
        failed.push({ name: step.name, err: forced.err });
    }
    tookMs.push({ name: step.name, ms: performance.now() - started });
  }
  return { unfinished, failed, tookMs };
}

type Settled =
  | { readonly type: "done" }
  | { readonly type: "failed"; readonly err: unknown }
  | { readonly type: "timedOut" };

/** Runs `run` and waits for it at most `timeoutMs` (0: only what settles at once). */
async function settleWithin(
  run: () => Promise<void> | void,
  timeoutMs: number,
): Promise<Settled> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Settled>((resolve) => {
    timer = setTimeout(() => {
      resolve({ type: "timedOut" });
    }, timeoutMs);
  });
  const settled = (async (): Promise<Settled> => {
    try {
      await run();
      return { type: "done" };
    } catch (err) {
      return { type: "failed", err };
    }
  })();
  try {
    return await Promise.race([settled, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
