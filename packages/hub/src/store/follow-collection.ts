/**
 * Follows a collection written by other hub replicas (docs/high-availability.md): every document
 * stored now, then every change, in order, until `signal` aborts. A cache that follows keeps only
 * revisions newer than the one it holds, so its own writes coming back change nothing.
 */
import { decodeKeyToken } from "./keys.js";
import type { Collection, StateStore } from "./state-store.js";

export interface CollectionFollower<T> {
  /** A document stored at `revision` (take it if newer than what is cached). */
  put(name: string, value: T, revision: number): void;
  /** The document named `name` was deleted. */
  delete(name: string): void;
  /** A change could not be taken in. */
  error(error: unknown): void;
}

/** Resolves once the watch is established and the current documents are taken in. */
export async function followCollection<T>(
  store: StateStore,
  collection: Collection<T>,
  signal: AbortSignal,
  follower: CollectionFollower<T>,
): Promise<void> {
  const changes = await store.watch(collection, { signal });
  for (const entry of await store.list(collection)) {
    follower.put(decodeKeyToken(entry.key), entry.value, entry.revision);
  }
  void (async () => {
    for await (const change of changes) {
      try {
        const name = decodeKeyToken(change.key);
        if (change.type === "put")
          follower.put(name, change.value, change.revision);
        else follower.delete(name);
      } catch (error) {
        follower.error(error);
      }
    }
  })();
}
