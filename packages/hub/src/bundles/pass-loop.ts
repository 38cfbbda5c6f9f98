/**
 * Coalescing of bundle passes (SPEC 4.3: a pass on every status change, and at least every few
 * seconds): requests name the bundles that need a pass; at most one batch runs at a time, and
 * whatever is requested meanwhile runs as one more batch right after. A burst of a thousand
 * status reports therefore costs a couple of passes, not a thousand.
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

/**
 * A loop running `run` for each batch. A batch that throws is reported to `onError`; the loop goes
 * on (the next request or tick retries).
 */
export function createPassLoop(
  run: (batch: PassBatch) => Promise<void>,
  onError: (error: unknown) => void,
): PassLoop {
  let pending: "all" | Set<string> | undefined;
  let draining: Promise<void> | undefined;
  let current: Promise<void> | undefined;
  let stopped = false;

  const drain = async (): Promise<void> => {
    while (pending !== undefined && !stopped) {
      const batch = pending;
      pending = undefined;
      current = run(batch).catch(onError);
      await current;
      current = undefined;
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
