import { describe, expect, test } from "vitest";
import { defineCollection } from "@flotilla/hub";
import { createMemoryStore } from "@flotilla/hub/testing";
import { describeStateStoreContract } from "./state-store.contract.js";

describeStateStoreContract("memory", async () => {
  const store = createMemoryStore();
  await store.start();
  return { store, peer: store, [Symbol.asyncDispose]: () => store.stop() };
});

describe("createMemoryStore", () => {
  test("maxValueBytes is configurable", async () => {
    await using store = createMemoryStore({ maxValueBytes: 10 });
    await store.start();
    const notes = defineCollection("clusters", (v) => v);
    await store.put(notes, "fits", "12345678");
    await expect(
      store.put(notes, "too-big", "123456789"),
    ).rejects.toMatchObject({
      code: "invalid_argument",
    });
  });

  test("calls before start fail with unavailable", async () => {
    const store = createMemoryStore();
    const notes = defineCollection("clusters", (v) => v);
    await expect(store.get(notes, "a")).rejects.toMatchObject({
      code: "unavailable",
    });
  });
});
