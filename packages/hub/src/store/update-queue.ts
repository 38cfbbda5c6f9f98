/**
 * Read-modify-write of one stored document for admin updates, with the semantics admin.proto
 * gives `expected_revision`: when the caller names a revision, the write is a compare-and-set on
 * it and a lost race is the caller's FAILED_PRECONDITION; when it names none (0), the change
 * applies to whatever is stored, however many callers race.
 *
 * Updates of one key run one at a time in this process, so callers of the same hub never race each
 * other. Another writer of the same document (an agent's facts, another hub) can still win a
 * compare-and-set; then the update re-reads the document and tries again, a bounded number of
 * times.
 */
import { FlotillaError } from "@flotilla/core";
import { isRevisionConflict } from "./state-store.js";

/**
 * Tries of an update without an expected revision before it gives up: each lost try means another
 * process wrote the document in between, and ten in a row means it is being written continuously.
 */
export const MAX_UPDATE_ATTEMPTS = 10;

/** One update: how to write it, and how to re-read the document after losing a race. */
export interface UpdateSteps<T> {
  /** What is updated, for the message when every attempt lost: `cluster "web-1"`. */
  readonly what: string;
  /** The caller's revision; undefined (0 on the wire) for "whatever is stored". */
  readonly expectedRevision: number | undefined;
  /** Computes the new document from the current one and writes it with compare-and-set. */
  readonly write: () => Promise<T>;
  /** Re-reads the stored document into whatever `write` computes from. */
  readonly reload: () => Promise<void>;
}

/** Serialises updates per key (see the module comment). */
export interface UpdateQueue {
  update<T>(key: string, steps: UpdateSteps<T>): Promise<T>;
}

export function createUpdateQueue(): UpdateQueue {
  // The last update queued per key; it never rejects, so the next one always runs after it.
  const tails = new Map<string, Promise<void>>();

  const attempt = async <T>(steps: UpdateSteps<T>): Promise<T> => {
    for (let n = 1; ; n++) {
      try {
        return await steps.write();
      } catch (error) {
        if (!isRevisionConflict(error) || steps.expectedRevision !== undefined)
          throw error;
        if (n >= MAX_UPDATE_ATTEMPTS) {
          throw new FlotillaError(
            "unavailable",
            `Cannot update ${steps.what}: other writers changed it ${String(n)} times in a row while this update was applied; try again`,
            { cause: error },
          );
        }
        await steps.reload();
      }
    }
  };

  return {
    update(key, steps) {
      const previous = tails.get(key) ?? Promise.resolve();
      const run = previous.then(() => attempt(steps));
      const tail = run.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return run;
    },
  };
}
