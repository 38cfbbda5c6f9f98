/**
 * stopWithin: the hub's parts stop in the order given, within one deadline; a part that never
 * stops is abandoned at the deadline and closed at once instead, and the parts after it still
 * stop. Nothing rejects.
 */
import { describe, expect, it } from "vitest";
import { stopWithin, type StopStep } from "../src/shutdown.js";

const never = (): Promise<void> => new Promise<void>(() => undefined);

describe("stopWithin", () => {
  it("stops every part in the order given", async () => {
    const stopped: string[] = [];
    const step = (name: string): StopStep => ({
      name,
      stop: async () => {
        await Promise.resolve();
        stopped.push(name);
      },
    });
    const outcome = await stopWithin(
      [step("hub"), step("store"), step("nats")],
      1_000,
    );
    expect(stopped).toEqual(["hub", "store", "nats"]);
    expect(outcome).toMatchObject({ unfinished: [], failed: [] });
    expect(outcome.tookMs.map((t) => t.name)).toEqual(["hub", "store", "nats"]);
    for (const { ms } of outcome.tookMs) expect(ms).toBeGreaterThanOrEqual(0);
  });

  it("forces a part that does not stop by the deadline, then stops the rest", async () => {
    const done: string[] = [];
    const outcome = await stopWithin(
      [
        { name: "hub", stop: () => void done.push("hub") },
        {
          name: "nats",
          stop: never,
          force: () => void done.push("nats closed"),
        },
        { name: "late", stop: () => void done.push("late") },
      ],
      50,
    );
    expect(done).toEqual(["hub", "nats closed", "late"]);
    expect(outcome.unfinished).toEqual(["nats"]);
  });

  it("gives up on a force that hangs too", async () => {
    const outcome = await stopWithin(
      [{ name: "stuck", stop: never, force: never }],
      10,
    );
    expect(outcome.unfinished).toEqual(["stuck"]);
  });

  it("reports parts that fail to stop and goes on", async () => {
    const failure = new Error("closed twice");
    const done: string[] = [];
    const outcome = await stopWithin(
      [
        {
          name: "http",
          stop: () => {
            throw failure;
          },
        },
        { name: "nats", stop: () => void done.push("nats") },
      ],
      1_000,
    );
    expect(done).toEqual(["nats"]);
    expect(outcome).toMatchObject({
      unfinished: [],
      failed: [{ name: "http", err: failure }],
    });
  });
});
