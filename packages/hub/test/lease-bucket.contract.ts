/** The rules every LeaseBucket adapter follows (docs/high-availability.md). */
import { describe, expect, it } from "vitest";
import type { LeaseBucket } from "@flotilla/hub/testing";

export interface LeaseBucketFixture {
  /** A started bucket nobody else uses; its TTL is `ttlMs`. */
  open(): Promise<LeaseBucket>;
  /** Resolves once entries written before the call have expired. */
  expire(bucket: LeaseBucket): Promise<void>;
}

export function describeLeaseBucketContract(
  name: string,
  fixture: () => LeaseBucketFixture,
): void {
  describe(`LeaseBucket contract: ${name}`, () => {
    it("create succeeds once; update and delete are compare-and-set; revisions only grow", async () => {
      const bucket = await fixture().open();
      const first = await bucket.create("lease.u", { n: 1 });
      expect(first).toBeGreaterThan(0);
      expect(await bucket.create("lease.u", { n: 2 })).toBeUndefined();
      const second = await bucket.update("lease.u", { n: 3 }, first ?? 0);
      expect(second).toBeGreaterThan(first ?? 0);
      expect(
        await bucket.update("lease.u", { n: 4 }, first ?? 0),
      ).toBeUndefined();
      expect(await bucket.delete("lease.u", first ?? 0)).toBe(false);
      expect((await bucket.list("lease."))[0]?.value).toEqual({ n: 3 });
      expect(await bucket.delete("lease.u", second ?? 0)).toBe(true);
      expect(await bucket.list("lease.")).toEqual([]);
      const again = await bucket.create("lease.u", { n: 5 });
      expect(again).toBeGreaterThan(second ?? 0);
      await bucket.stop();
    });

    it("lists live entries by prefix, sorted", async () => {
      const bucket = await fixture().open();
      await bucket.put("replica.b", { id: "b" });
      await bucket.put("replica.a", { id: "a" });
      await bucket.create("lease.x", { holder: "a" });
      const replicas = await bucket.list("replica.");
      expect(replicas.map((e) => e.key)).toEqual(["replica.a", "replica.b"]);
      expect(replicas[0]?.value).toEqual({ id: "a" });
      await bucket.stop();
    });

    it("an entry not rewritten within the TTL is gone, and can be created again with a higher revision", async () => {
      const f = fixture();
      const bucket = await f.open();
      const first = await bucket.create("lease.u", { holder: "a" });
      await f.expire(bucket);
      expect(await bucket.list("lease.")).toEqual([]);
      expect(
        await bucket.update("lease.u", { holder: "a" }, first ?? 0),
      ).toBeUndefined();
      const taken = await bucket.create("lease.u", { holder: "b" });
      expect(taken).toBeGreaterThan(first ?? 0);
      await bucket.stop();
    });
  });
}
