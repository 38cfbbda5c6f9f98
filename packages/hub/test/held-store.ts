/**
 * A StateStore that can hold the writes to one collection until the test releases them, so a test
 * can keep a run's mailbox busy storing one batch while more events arrive (they then make up the
 * next batch together). Everything else goes straight to the store it wraps.
 */
import type { CollectionName } from "../src/store/keys.js";
import type { StateStore } from "../src/store/state-store.js";

export interface HeldStore extends StateStore {
  /** From now on, puts to `collection` wait for {@link HeldStore.release}. */
  hold(collection: CollectionName): void;
  /** Lets every waiting put through and stops holding. */
  release(): void;
  /** Puts waiting now. */
  readonly waiting: number;
}

export function createHeldStore(inner: StateStore): HeldStore {
  let held: CollectionName | undefined;
  let waiting: (() => void)[] = [];
  return {
    get maxValueBytes() {
      return inner.maxValueBytes;
    },
    get waiting() {
      return waiting.length;
    },
    hold(collection) {
      held = collection;
    },
    release() {
      held = undefined;
      const go = waiting;
      waiting = [];
      for (const resume of go) resume();
    },
    start: (o) => inner.start(o),
    stop: () => inner.stop(),
    get: (c, k, o) => inner.get(c, k, o),
    list: (c, o) => inner.list(c, o),
    delete: (c, k, o) => inner.delete(c, k, o),
    watch: (c, o) => inner.watch(c, o),
    [Symbol.asyncDispose]: () => inner.stop(),
    async put(collection, key, value, options) {
      if (held === collection.name)
        await new Promise<void>((resume) => waiting.push(resume));
      return inner.put(collection, key, value, options);
    },
  };
}
