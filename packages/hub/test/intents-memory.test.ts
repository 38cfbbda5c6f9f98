import { describe, expect, test } from "vitest";
import { createMemoryIntentPublisher } from "@flotilla/hub/testing";
import { sha256Digest } from "@flotilla/protocol";
import {
  describeIntentPublisherContract,
  intentFor,
  type PublisherFixture,
} from "./intents-contract.js";
import { describeFencedWritesContract } from "./intents-fences-contract.js";

async function openMemory(): Promise<PublisherFixture> {
  const publisher = createMemoryIntentPublisher();
  await publisher.start();
  return {
    publisher,
    peer: publisher,
    [Symbol.asyncDispose]: () => publisher.stop(),
  };
}

describeIntentPublisherContract("memory", openMemory);
describeFencedWritesContract("memory", openMemory);

describe("createMemoryIntentPublisher", () => {
  test("calls before start fail with unavailable", async () => {
    const publisher = createMemoryIntentPublisher();
    await expect(
      publisher.publish(intentFor("web-1", 1)),
    ).rejects.toMatchObject({ code: "unavailable" });
    await expect(publisher.read("web-1")).rejects.toMatchObject({
      code: "unavailable",
    });
  });

  test("snapshot and bundleContent show what hub code published", async () => {
    await using publisher = createMemoryIntentPublisher();
    await publisher.start();
    await publisher.publish(intentFor("web-1", 1));
    await publisher.publish(intentFor("web-2", 3));
    expect(
      [...publisher.snapshot()].map(([c, p]) => [c, p.intent.generation]),
    ).toEqual([
      ["web-1", 1],
      ["web-2", 3],
    ]);
    const content = new TextEncoder().encode("apiVersion: v1\n");
    const digest = await publisher.putBundleContent(content);
    expect(digest).toBe(sha256Digest(content));
    expect(publisher.bundleContent(digest)).toEqual(content);
    expect(publisher.bundleContent(sha256Digest("other"))).toBeUndefined();
  });
});
