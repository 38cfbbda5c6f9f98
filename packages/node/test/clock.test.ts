import { createManualClock } from "@flotilla/node/testing";
import { describe, expect, it } from "vitest";

describe("the manual clock", () => {
  it("wakes sleepers in due order and runs each continuation before the next", async () => {
    const clock = createManualClock(0);
    const order: string[] = [];
    const chain = async (): Promise<void> => {
      await clock.sleep(10);
      order.push(`a@${String(clock.now())}`);
      await clock.sleep(10);
      order.push(`a2@${String(clock.now())}`);
    };
    const done = chain();
    void clock.sleep(15).then(() => order.push(`b@${String(clock.now())}`));
    await clock.advance(19);
    expect(order).toEqual(["a@10", "b@15"]);
    expect(clock.now()).toBe(19);
    await clock.advance(1);
    await done;
    expect(order).toEqual(["a@10", "b@15", "a2@20"]);
    expect(clock.pending()).toBe(0);
  });

  it("rejects a sleep with the signal's reason when aborted and forgets it", async () => {
    const clock = createManualClock(0);
    const controller = new AbortController();
    const sleeping = clock.sleep(1000, { signal: controller.signal });
    controller.abort(new Error("stop"));
    await expect(sleeping).rejects.toThrow("stop");
    expect(clock.pending()).toBe(0);
  });
});
