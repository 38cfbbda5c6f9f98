import { describe, expect, test, vi } from "vitest";
import type { IntentChange } from "@flotilla/core";
import { isFenced } from "@flotilla/hub";
import { createMemoryIntentPublisher } from "@flotilla/hub/testing";
import { sha256Digest } from "@flotilla/protocol";
import { createIntentWriter } from "../src/intents/intent-writer.js";
import { rejection } from "./intents-contract.js";

const setBundle = (revision: string): IntentChange => ({
  type: "SetBundle",
  bundle: "shop",
  revision,
  digest: sha256Digest(revision),
});

const run = (epoch: number) => ({ fence: { unit: "run/a", epoch } });

describe("IntentWriter, fenced", () => {
  test("a change carries its fence to the publisher", async () => {
    await using publisher = createMemoryIntentPublisher();
    await publisher.start();
    const writer = createIntentWriter(publisher);
    await writer.change("web-1", [setBundle("1")], run(3));
    expect(publisher.snapshot().get("web-1")?.fences).toEqual(
      new Map([["run/a", 3]]),
    );
  });

  test("a deposed writer's change is refused with a FencedError and its cached intent forgotten; unfenced changes still work", async () => {
    await using publisher = createMemoryIntentPublisher();
    await publisher.start();
    // Two hubs: the deposed owner of run/a (epoch 1) and the one that took over (epoch 2).
    const deposed = createIntentWriter(publisher);
    const owner = createIntentWriter(publisher);
    await deposed.change("web-1", [setBundle("1")], run(1));
    await owner.change("web-1", [setBundle("2")], run(2));
    const reads = vi.spyOn(publisher, "read");

    // The deposed writer's cache still says generation 1: the fence refuses before the generation.
    const error = await rejection(
      deposed.change("web-1", [setBundle("3")], run(1)),
    );
    expect(isFenced(error)).toBe(true);
    expect(error.message).toContain("epoch 2");
    expect(reads).not.toHaveBeenCalled();
    // The cache is forgotten: the next look reads what is stored.
    expect((await deposed.current("web-1")).intent.generation).toBe(2);
    expect(reads).toHaveBeenCalledTimes(1);
    // Refused again after a fresh read: the fence, not the stale cache, decides.
    expect(
      isFenced(
        await rejection(deposed.change("web-1", [setBundle("3")], run(1))),
      ),
    ).toBe(true);
    expect(publisher.snapshot().get("web-1")?.intent.bundles).toMatchObject({
      shop: { revision: "2" },
    });

    // Without a fence (one hub, or code that owns no unit) the writer works as before.
    const next = await owner.change("web-1", [setBundle("4")]);
    expect(next.intent.generation).toBe(3);
  });

  test("a deposed writer cannot remove the intent; the removal is refused with a FencedError", async () => {
    await using publisher = createMemoryIntentPublisher();
    await publisher.start();
    const deposed = createIntentWriter(publisher);
    const owner = createIntentWriter(publisher);
    await owner.change("web-1", [setBundle("1")], run(2));
    expect(isFenced(await rejection(deposed.remove("web-1", run(1))))).toBe(
      true,
    );
    expect(publisher.snapshot().has("web-1")).toBe(true);
    await owner.remove("web-1", run(2));
    expect(publisher.snapshot().has("web-1")).toBe(false);
  });
});
