/**
 * A document that the first hub to start creates and every later one loads (the CA, the content
 * secret): read it, or create it with a compare-and-set on "absent". Hubs starting at the same
 * time end with the same document: the loser of the create loads the winner's.
 */
import { FlotillaError } from "@flotilla/core";
import {
  isRevisionConflict,
  type Collection,
  type OperationOptions,
  type StateStore,
} from "./state-store.js";

/** The stored document under `key`, or `make()`'s, stored now when there is none. */
export async function loadOrCreate<T>(
  store: StateStore,
  collection: Collection<T>,
  key: string,
  make: () => T | Promise<T>,
  options: OperationOptions & { readonly what: string },
): Promise<T> {
  const { signal, what } = options;
  const existing = await store.get(collection, key, { signal });
  if (existing !== undefined) return existing.value;
  const created = await make();
  try {
    await store.put(collection, key, created, { expectedRevision: 0, signal });
    return created;
  } catch (error) {
    if (!isRevisionConflict(error)) throw error;
    const winner = await store.get(collection, key, { signal });
    if (winner === undefined) {
      throw new FlotillaError(
        "unavailable",
        `${what}: it was created by another hub and deleted since; start again`,
        { cause: error },
      );
    }
    return winner.value;
  }
}
