/**
 * Coalescing of bundle passes (docs/semantics.md#releasing: a pass on every status change, and at
 * least every few seconds): requests name the bundles that need a pass; at most one batch runs at a
 * time, and whatever is requested meanwhile runs as one more batch right after (after `spacingMs`,
 * so that under a steady stream of reports each batch gathers many). A burst of a thousand status
 * reports therefore costs a couple of passes, not a thousand.
 */

/** What one batch covers: every bundle, or the named ones. */
export type PassBatch = "all" | ReadonlySet<string>;

export interface PassLoop {
  /** Asks for a pass of `bundle` (every bundle when absent). */
  request(bundle?: string): void;
  /** Resolves once no batch is running or waiting. */
  idle(): Promise<void>;
  /** Resolves when the batch running now (if any) has finished; later ones may follow. */
  settled(): Promise<void>;
  /** Runs no more batches; resolves when the running one has finished. */
  stop(): Promise<void>;
}

/** Options of {@link createPassLoop}. */
export interface PassLoopOptions {
  /**
   * How long after a batch the next one may start, given how long the last one took (ms);
   * default at once. Requests made meanwhile join that batch.
   */
  readonly spacingMs?: (lastBatchMs: number) => number;
}

/**
 * A loop running `run` for each batch. A batch that throws is reported to `onError`; the loop goes
 * on (the next request or tick retries).
 */
export function createPassLoop(
  run: (batch: PassBatch) => Promise<void>,
  onError: (error: unknown) => void,
  options: PassLoopOptions = {},
): PassLoop {
  let pending: "all" | Set<string> | undefined;
  let draining: Promise<void> | undefined;
  let current: Promise<void> | undefined;
  let stopped = false;

  // When the next batch may start: the last one's end plus its spacing.
  let notBefore = 0;

  const drain = async (): Promise<void> => {
    while (pending !== undefined && !stopped) {
      const wait = notBefore - performance.now();
      if (wait > 0) {
        await new Promise((resolve) => setTimeout(resolve, wait));
        if (stopped) return;
      }
      const batch = pending;
      pending = undefined;
      const startedAt = performance.now();
      current = run(batch).catch(onError);
      await current;
      current = undefined;
      const endedAt = performance.now();
      notBefore = endedAt + (options.spacingMs?.(endedAt - startedAt) ?? 0);
    }
  };

  const kick = (): void => {
    if (draining !== undefined || stopped) return;
    // Started on a later microtask so that `draining` is set before the drain can finish.
    draining = Promise.resolve()
      .then(drain)
      .finally(() => {
        draining = undefined;
        if (pending !== undefined) kick();
      });
  };

  return {
    request(bundle) {
      if (stopped) return;
      if (bundle === undefined || pending === "all") pending = "all";
      else {
        const names = pending ?? new Set<string>();
        names.add(bundle);
        pending = names;
      }
      kick();
    },
    async idle() {
      while (draining !== undefined) await draining;
    },
    async settled() {
      await current;
    },
    async stop() {
      stopped = true;
      pending = undefined;
      await draining;
    },
  };
}
