// The IntentPublisher contract for fenced writes: every adapter must pass these tests. Register
// them with `describeFencedWritesContract(name, open)` from an adapter's test file.
import { describe, expect, test } from "vitest";
import {
  FencedError,
  IntentRefusedError,
  isFenced,
  type Fence,
} from "@flotilla/hub";
import { MAX_FENCED_UNITS } from "@flotilla/hub/testing";
import {
  intentFor,
  rejection,
  type PublisherFixture,
} from "./intents-contract.js";

const fence = (unit: string, epoch: number): { fence: Fence } => ({
  fence: { unit, epoch },
});

/** Registers the fenced-write contract tests for the adapter that `open` creates. */
export function describeFencedWritesContract(
  adapter: string,
  open: () => Promise<PublisherFixture>,
): void {
  describe(`IntentPublisher contract, fenced writes: ${adapter}`, () => {
    test("a fenced publish records its unit's epoch, and a newer epoch of the unit wins", async () => {
      await using fx = await open();
      const first = await fx.publisher.publish(
        intentFor("web-1", 1),
        fence("run/a", 41),
      );
      expect(first.fences).toEqual(new Map([["run/a", 41]]));
      const newer = await fx.peer.publish(
        intentFor("web-1", 2),
        fence("run/a", 42),
      );
      expect(newer).toMatchObject({
        written: true,
        fences: new Map([["run/a", 42]]),
      });
      expect(await fx.publisher.read("web-1")).toEqual({
        intent: newer.intent,
        hash: newer.hash,
        revision: newer.revision,
        fences: new Map([["run/a", 42]]),
      });
    });

    test("a stale epoch is refused after a newer one wrote, even by a writer that remembers its own last write", async () => {
      await using fx = await open();
      // The peer owns run/a at epoch 1, then is paused past its lease; the publisher takes over.
      await fx.peer.publish(intentFor("web-1", 1), fence("run/a", 1));
      const stored = await fx.publisher.publish(
        intentFor("web-1", 2),
        fence("run/a", 2),
      );
      // The deposed peer wakes up and goes on: a higher generation than any stored.
      const error = await rejection(
        fx.peer.publish(intentFor("web-1", 3), fence("run/a", 1)),
      );
      expect(error).toBeInstanceOf(FencedError);
      expect(isFenced(error)).toBe(true);
      expect(error).toMatchObject({
        code: "failed_precondition",
        cluster: "web-1",
        fence: { unit: "run/a", epoch: 1 },
        storedEpoch: 2,
      });
      expect(error.message).toBe(
        'Cannot publish intent generation 3 for cluster "web-1": unit "run/a" has written it at epoch 2, and this writer\'s epoch is 1 (a newer owner of the unit took over)',
      );
      // Refused again once the peer has read the stored intent (and knows its fences), and also
      // for the very intent stored: the fence is decided first.
      expect(await fx.peer.read("web-1")).toMatchObject({ hash: stored.hash });
      for (const intent of [intentFor("web-1", 4), intentFor("web-1", 2)]) {
        expect(
          isFenced(await rejection(fx.peer.publish(intent, fence("run/a", 1)))),
        ).toBe(true);
      }
      expect((await fx.publisher.read("web-1"))?.revision).toBe(
        stored.revision,
      );
    });

    test("other units are unaffected, and an unfenced write keeps the map as it is", async () => {
      await using fx = await open();
      await fx.publisher.publish(intentFor("web-1", 1), fence("run/a", 50));
      const bundles = await fx.peer.publish(
        intentFor("web-1", 2),
        fence("bundles", 7),
      );
      expect(bundles.fences).toEqual(
        new Map([
          ["run/a", 50],
          ["bundles", 7],
        ]),
      );
      const unfenced = await fx.publisher.publish(intentFor("web-1", 3));
      expect(unfenced.written).toBe(true);
      expect(unfenced.fences).toEqual(bundles.fences);
      // An older epoch of another unit is no stale writer of run/a.
      const other = await fx.peer.publish(
        intentFor("web-1", 4),
        fence("run/b", 3),
      );
      expect(other.written).toBe(true);
      expect((await fx.publisher.read("web-1"))?.fences).toEqual(
        new Map([
          ["run/a", 50],
          ["bundles", 7],
          ["run/b", 3],
        ]),
      );
      // Unfenced writes to a cluster no fenced write touched show no map.
      const plain = await fx.publisher.publish(intentFor("web-2", 1));
      expect(plain.fences).toBeUndefined();
      expect(await fx.peer.read("web-2")).not.toHaveProperty("fences");
    });

    test("publishing the stored intent with a newer epoch records the epoch once", async () => {
      await using fx = await open();
      const first = await fx.publisher.publish(
        intentFor("web-1", 1),
        fence("run/a", 1),
      );
      const taken = await fx.peer.publish(
        intentFor("web-1", 1),
        fence("run/a", 2),
      );
      expect(taken).toMatchObject({
        written: true,
        hash: first.hash,
        fences: new Map([["run/a", 2]]),
      });
      expect(taken.revision).toBeGreaterThan(first.revision);
      const again = await fx.peer.publish(
        intentFor("web-1", 1),
        fence("run/a", 2),
      );
      expect(again).toEqual({ ...taken, written: false });
      expect(
        isFenced(
          await rejection(
            fx.publisher.publish(intentFor("web-1", 2), fence("run/a", 1)),
          ),
        ),
      ).toBe(true);
    });

    test(`the map keeps the ${String(MAX_FENCED_UNITS)} units with the highest epochs`, async () => {
      await using fx = await open();
      const units = MAX_FENCED_UNITS + 2;
      for (let i = 0; i < units; i++) {
        const writer = i % 2 === 0 ? fx.publisher : fx.peer;
        await writer.publish(
          intentFor("web-1", i + 1),
          fence(`run/r${String(i)}`, 100 + i),
        );
      }
      const kept = (await fx.publisher.read("web-1"))?.fences;
      expect([...(kept ?? [])]).toEqual(
        Array.from({ length: MAX_FENCED_UNITS }, (_, j) => {
          const i = units - 1 - j;
          return [`run/r${String(i)}`, 100 + i];
        }),
      );
      // A unit older than every kept one is not recorded, and pushes none out.
      const old = await fx.peer.publish(
        intentFor("web-1", units + 1),
        fence("bundles", 1),
      );
      expect(old.fences).toEqual(kept);
    });

    test("remove keeps the fences: a deposed owner cannot bring a removed intent back, a newer one can", async () => {
      await using fx = await open();
      await fx.peer.publish(intentFor("web-1", 1), fence("run/a", 1));
      await fx.publisher.publish(intentFor("web-1", 2), fence("run/a", 2));
      // The cluster leaves the fleet (the registry removes its intent, unfenced).
      await fx.publisher.remove("web-1");
      const error = await rejection(
        fx.peer.publish(intentFor("web-1", 1), fence("run/a", 1)),
      );
      expect(error).toMatchObject({ code: "failed_precondition" });
      expect(error.message).toContain("epoch 2");
      expect(
        isFenced(await rejection(fx.peer.remove("web-1", fence("run/a", 1)))),
      ).toBe(true);
      expect(await fx.peer.read("web-1")).toBeUndefined();
      // A new owner, or another unit, publishes again from any generation; the map carries on.
      const back = await fx.peer.publish(
        intentFor("web-1", 1),
        fence("run/a", 3),
      );
      expect(back).toMatchObject({
        written: true,
        fences: new Map([["run/a", 3]]),
      });
      // A fenced remove raises its unit's epoch like a publish.
      await fx.publisher.remove("web-1", fence("bundles", 9));
      const bundles = await fx.peer.publish(
        intentFor("web-1", 1),
        fence("bundles", 9),
      );
      expect(bundles.fences).toEqual(
        new Map([
          ["bundles", 9],
          ["run/a", 3],
        ]),
      );
      expect(
        isFenced(
          await rejection(
            fx.publisher.publish(intentFor("web-1", 2), fence("bundles", 8)),
          ),
        ),
      ).toBe(true);
    });

    test("racing writers of one unit: once the newer epoch has written, the older one never does", async () => {
      await using fx = await open();
      // Pairs race, as in the generation contract, but the two writers hold epochs 1 and 2.
      for (let g = 1; g <= 12; g += 2) {
        const [older, newer] = await Promise.allSettled([
          fx.publisher.publish(intentFor("web-1", g), fence("run/a", 1)),
          fx.peer.publish(intentFor("web-1", g + 1), fence("run/a", 2)),
        ]);
        // Nothing can refuse the newer writer's higher generation.
        expect(newer.status).toBe("fulfilled");
        if (older.status === "rejected") {
          const reason: unknown = older.reason;
          // Refused by the fence, or (the first round) by the generation the newer one stored.
          expect(
            isFenced(reason) ||
              (g === 1 && reason instanceof IntentRefusedError),
          ).toBe(true);
        } else {
          // Only in the first round, before the newer writer's first write.
          expect(g).toBe(1);
        }
      }
      expect(await fx.publisher.read("web-1")).toMatchObject({
        intent: { generation: 12 },
        fences: new Map([["run/a", 2]]),
      });
    });

    test("an invalid fence is refused with invalid_argument naming the field and value; nothing is stored", async () => {
      await using fx = await open();
      const bad = { fence: { unit: "run a", epoch: 0 } };
      const error = await rejection(
        fx.publisher.publish(intentFor("web-1", 1), bad),
      );
      expect(error.code).toBe("invalid_argument");
      expect(error.problems).toEqual([
        expect.objectContaining({ path: "fence.unit", value: "run a" }),
        expect.objectContaining({ path: "fence.epoch", value: 0 }),
      ]);
      const long = "u".repeat(101);
      const removal = await rejection(
        fx.publisher.remove("web-1", { fence: { unit: long, epoch: 1.5 } }),
      );
      expect(removal.message).toMatch(/^Invalid fence: fence\.unit: /);
      expect(removal.message).toContain(
        "fence.epoch: must be a positive integer (got 1.5)",
      );
      expect(await fx.peer.read("web-1")).toBeUndefined();
    });
  });
}
