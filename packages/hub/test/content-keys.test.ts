// The content secret: created once, shared by every hub on the same store, needed before any key.
import { describe, expect, test } from "vitest";
import { sha256Digest } from "@flotilla/protocol";
import { createContentKeys } from "../src/security/content-keys.js";
import { createMemoryStore } from "../src/store/memory-store.js";

describe("createContentKeys", () => {
  test("hubs starting together on one store derive the same keys; another store, other keys", async () => {
    const store = createMemoryStore();
    await store.start();
    const hubs = [1, 2, 3].map(() =>
      createContentKeys({ store, now: () => 0 }),
    );
    await Promise.all(hubs.map((h) => h.load()));
    const digest = sha256Digest("manifests");
    const keys = new Set(hubs.map((h) => h.keyOf(digest)));
    expect(keys.size).toBe(1);

    const elsewhere = createMemoryStore();
    await elsewhere.start();
    const other = createContentKeys({ store: elsewhere, now: () => 0 });
    await other.load();
    expect(keys.has(other.keyOf(digest))).toBe(false);
  });

  test("gives no key before the secret is loaded", () => {
    const keys = createContentKeys({
      store: createMemoryStore(),
      now: () => 0,
    });
    expect(() => keys.keyOf(sha256Digest("x"))).toThrow(
      expect.objectContaining({ code: "failed_precondition" }),
    );
  });
});
