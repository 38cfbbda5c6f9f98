// The IntentPublisher contract: every adapter must pass these tests. Register them with
// `describeIntentPublisherContract(name, open)` from an adapter's test file.
import { describe, expect, test } from "vitest";
import {
  canonicalIntentJson,
  changeIntent,
  emptyIntent,
  FlotillaError,
  type ClusterIntent,
} from "@flotilla/core";
import { IntentRefusedError, type IntentPublisher } from "@flotilla/hub";
import { sha256Digest } from "@flotilla/protocol";

/** Two started publishers over the same data, released on dispose. */
export interface PublisherFixture extends AsyncDisposable {
  readonly publisher: IntentPublisher;
  /** A second publisher on the same data (another hub: own connection, nothing cached). */
  readonly peer: IntentPublisher;
}

/** An intent for `cluster` at `generation` whose content depends on `revision`. */
export function intentFor(
  cluster: string,
  generation: number,
  revision = `r${String(generation)}`,
): ClusterIntent {
  return {
    apiVersion: "flotilla.dev/v1",
    cluster,
    generation,
    bundles: { web: { revision, digest: sha256Digest(revision) } },
  };
}

export async function rejection(
  promise: Promise<unknown>,
): Promise<FlotillaError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FlotillaError);
  return error as FlotillaError;
}

/** Registers the contract tests for the adapter that `open` creates. */
export function describeIntentPublisherContract(
  adapter: string,
  open: () => Promise<PublisherFixture>,
): void {
  describe(`IntentPublisher contract: ${adapter}`, () => {
    test("publish stores the intent with the sha256 of its canonical JSON; read returns it", async () => {
      await using fx = await open();
      const intent = changeIntent(emptyIntent("web-1"), {
        type: "SetBundle",
        bundle: "shop",
        revision: "3",
        digest: sha256Digest("manifests"),
      });
      const result = await fx.publisher.publish(intent);
      const hash = sha256Digest(canonicalIntentJson(intent));
      expect(result).toMatchObject({ intent, hash, written: true });
      expect(result.revision).toBeGreaterThan(0);
      expect(await fx.peer.read("web-1")).toEqual({
        intent,
        hash,
        revision: result.revision,
      });
      expect(await fx.publisher.read("web-2")).toBeUndefined();
    });

    test("a higher generation replaces the stored one, and generations may skip", async () => {
      await using fx = await open();
      const first = await fx.publisher.publish(intentFor("web-1", 1));
      const next = await fx.publisher.publish(intentFor("web-1", 5));
      expect(next.written).toBe(true);
      expect(next.revision).toBeGreaterThan(first.revision);
      expect((await fx.peer.read("web-1"))?.intent.generation).toBe(5);
    });

    test("a lower generation is refused with failed_precondition and the stored intent kept", async () => {
      await using fx = await open();
      const stored = await fx.publisher.publish(intentFor("web-1", 4));
      for (const publisher of [fx.publisher, fx.peer]) {
        const error = await rejection(publisher.publish(intentFor("web-1", 3)));
        expect(error).toBeInstanceOf(IntentRefusedError);
        expect(error).toMatchObject({
          code: "failed_precondition",
          reason: "stale_generation",
        });
        expect(error.message).toBe(
          'Cannot publish intent generation 3 for cluster "web-1": generation 4 is already published',
        );
      }
      expect(await fx.publisher.read("web-1")).toEqual({
        intent: stored.intent,
        hash: stored.hash,
        revision: stored.revision,
      });
    });

    test("the same generation with the same content again is a no-op success", async () => {
      await using fx = await open();
      const first = await fx.publisher.publish(intentFor("web-1", 2));
      // The hub republishes after a crash: the same publisher, or a restarted one (the peer).
      for (const publisher of [fx.publisher, fx.peer]) {
        const again = await publisher.publish(intentFor("web-1", 2));
        expect(again).toEqual({ ...first, written: false });
      }
      expect((await fx.publisher.read("web-1"))?.revision).toBe(first.revision);
    });

    test("the same generation with other content is refused as internal, naming both hashes", async () => {
      await using fx = await open();
      const stored = await fx.publisher.publish(intentFor("web-1", 2, "a"));
      const other = intentFor("web-1", 2, "b");
      const otherHash = sha256Digest(canonicalIntentJson(other));
      for (const publisher of [fx.publisher, fx.peer]) {
        const error = await rejection(publisher.publish(other));
        expect(error).toMatchObject({
          code: "internal",
          reason: "hash_mismatch",
        });
        expect(error.message).toBe(
          `Cannot publish intent generation 2 for cluster "web-1": generation 2 is already published with hash ${stored.hash}, not ${otherHash}`,
        );
      }
      expect((await fx.peer.read("web-1"))?.hash).toBe(stored.hash);
    });

    test("an invalid intent is refused with invalid_argument and its field path; nothing is stored", async () => {
      await using fx = await open();
      const bad = { ...intentFor("web-1", 0), extra: true } as ClusterIntent;
      const error = await rejection(fx.publisher.publish(bad));
      expect(error.code).toBe("invalid_argument");
      expect(error.problems.map((p) => p.path).sort()).toEqual([
        "extra",
        "generation",
      ]);
      const badName = await rejection(
        fx.publisher.publish(intentFor("Web_1", 1)),
      );
      expect(badName).toMatchObject({ code: "invalid_argument" });
      expect(badName.message).toContain("DNS label");
      expect(await fx.publisher.read("web-1")).toBeUndefined();
    });

    test("remove deletes the intent, and a later publish starts over", async () => {
      await using fx = await open();
      await fx.publisher.publish(intentFor("web-1", 7));
      await fx.publisher.remove("web-1");
      expect(await fx.peer.read("web-1")).toBeUndefined();
      await fx.peer.remove("web-1");
      await fx.publisher.remove("never-published");
      const again = await fx.peer.publish(intentFor("web-1", 1));
      expect(again.written).toBe(true);
      expect((await fx.publisher.read("web-1"))?.intent.generation).toBe(1);
    });

    test("interleaved publishes from two publishers never store a lower generation", async () => {
      await using fx = await open();
      // Pairs race: each publisher's generation against the other's next one.
      const outcomes: PromiseSettledResult<unknown>[] = [];
      for (let g = 1; g <= 12; g += 2) {
        outcomes.push(
          ...(await Promise.allSettled([
            fx.publisher.publish(intentFor("web-1", g)),
            fx.peer.publish(intentFor("web-1", g + 1)),
          ])),
        );
      }
      for (const outcome of outcomes) {
        if (outcome.status === "rejected") {
          expect(outcome.reason).toMatchObject({ reason: "stale_generation" });
        }
      }
      expect(outcomes.at(-1)?.status).toBe("fulfilled");
      expect((await fx.publisher.read("web-1"))?.intent.generation).toBe(12);
    });

    test("putBundleContent returns the content's sha256 digest and is idempotent", async () => {
      await using fx = await open();
      const content = new TextEncoder().encode("kind: ConfigMap\n".repeat(100));
      const digest = await fx.publisher.putBundleContent(content);
      expect(digest).toBe(sha256Digest(content));
      expect(await fx.peer.putBundleContent(content)).toBe(digest);
    });

    test("listBundleContent shows stored content by name; removeBundleContent removes it, again without error", async () => {
      await using fx = await open();
      const a = new TextEncoder().encode("kind: ConfigMap\n".repeat(10));
      const b = new TextEncoder().encode("kind: Secret\n".repeat(20));
      const digestA = await fx.publisher.putBundleContent(a);
      const digestB = await fx.publisher.putBundleContent(b);
      const listed = await fx.peer.listBundleContent();
      // Names as the store names content; sizes as stored (sealing adds a few bytes).
      expect(listed.map((c) => c.name).sort()).toEqual(
        [fx.peer.contentName(digestA), fx.peer.contentName(digestB)].sort(),
      );
      const sizeOf = (d: string): number | undefined =>
        listed.find((c) => c.name === fx.peer.contentName(d))?.sizeBytes;
      expect(sizeOf(digestA)).toBeGreaterThanOrEqual(a.byteLength);
      expect(sizeOf(digestB)).toBeGreaterThanOrEqual(b.byteLength);
      for (const c of listed) expect(c.storedAtMs).toBeGreaterThan(0);
      const idA = listed.find(
        (c) => c.name === fx.peer.contentName(digestA),
      )?.id;

      await fx.publisher.removeBundleContent([idA ?? ""]);

      expect((await fx.peer.listBundleContent()).map((c) => c.name)).toEqual([
        fx.peer.contentName(digestB),
      ]);
      await fx.peer.removeBundleContent([idA ?? ""]);
      // Removed content can be stored again.
      expect(await fx.publisher.putBundleContent(a)).toBe(digestA);
      expect(
        (await fx.peer.listBundleContent()).map((c) => c.name).sort(),
      ).toEqual(
        [fx.peer.contentName(digestA), fx.peer.contentName(digestB)].sort(),
      );
    });

    test("an aborted signal rejects with its reason", async () => {
      await using fx = await open();
      const reason = new Error("gave up");
      const signal = AbortSignal.abort(reason);
      await expect(
        fx.publisher.publish(intentFor("web-1", 1), { signal }),
      ).rejects.toBe(reason);
      await expect(fx.publisher.read("web-1", { signal })).rejects.toBe(reason);
      expect(await fx.publisher.read("web-1")).toBeUndefined();
    });
  });
}
