// The StateStore contract: every adapter must pass these tests. Register them with
// `describeStateStoreContract(name, open)` from an adapter's test file.
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import {
  defineCollection,
  isRevisionConflict,
  RevisionConflictError,
  type Change,
  type StateStore,
} from "@flotilla/hub";
import { MAX_KEY_LENGTH } from "@flotilla/hub/testing";
import { waitFor } from "@flotilla/testkit";

/** Two started stores over the same data, released on dispose. */
export interface StoreFixture extends AsyncDisposable {
  readonly store: StateStore;
  /** A second store on the same data: another connection for JetStream, or `store` itself. */
  readonly peer: StateStore;
}

export interface Doc {
  name: string;
  n: number;
}

function isDoc(value: unknown): value is Doc {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Doc).name === "string" &&
    typeof (value as Doc).n === "number"
  );
}

/** A collection of small documents whose decoder checks their shape. */
export const docs = defineCollection<Doc>("runs", (value) => {
  if (!isDoc(value)) throw new Error("not a Doc");
  return value;
});
const anything = defineCollection<unknown>("clusters", (value) => value);
const others = defineCollection<unknown>("bundles", (value) => value);

/** Runs `for await` over `iterable` in the background, collecting what it yields. */
export function collect<T>(iterable: AsyncIterable<T>): {
  items: T[];
  ended: Promise<void>;
} {
  const items: T[] = [];
  const ended = (async () => {
    for await (const item of iterable) items.push(item);
  })();
  return { items, ended };
}

async function rejection(promise: Promise<unknown>): Promise<FlotillaError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FlotillaError);
  return error as FlotillaError;
}

const BAD_KEYS: readonly [string, string][] = [
  ["empty", ""],
  ["a space", "web 1"],
  ["a * wildcard", "web.*"],
  ["a > wildcard", "web.>"],
  ["an empty token", "web..1"],
  ["a leading dot", ".web"],
  ["a trailing dot", "web."],
  ["a non-ASCII letter", "wéb"],
  ["a colon", "web:1"],
  ["too many characters", "k".repeat(MAX_KEY_LENGTH + 1)],
];

/** Registers the contract tests for the adapter that `open` creates. */
export function describeStateStoreContract(
  adapter: string,
  open: () => Promise<StoreFixture>,
): void {
  describe(`StateStore contract: ${adapter}`, () => {
    describe("get and put", () => {
      test("get of a key never written resolves undefined", async () => {
        await using fx = await open();
        expect(await fx.store.get(docs, "missing")).toBeUndefined();
      });

      test("put resolves the revision that get then reports with the value", async () => {
        await using fx = await open();
        const revision = await fx.store.put(docs, "web-1", {
          name: "web-1",
          n: 1,
        });
        expect(revision).toBeGreaterThan(0);
        expect(await fx.peer.get(docs, "web-1")).toEqual({
          key: "web-1",
          value: { name: "web-1", n: 1 },
          revision,
        });
      });

      test("a put replaces the value and increases the revision", async () => {
        await using fx = await open();
        const first = await fx.store.put(docs, "web-1", { name: "a", n: 1 });
        const second = await fx.store.put(docs, "web-1", { name: "b", n: 2 });
        expect(second).toBeGreaterThan(first);
        expect(await fx.store.get(docs, "web-1")).toEqual({
          key: "web-1",
          value: { name: "b", n: 2 },
          revision: second,
        });
      });

      test.each([
        ["a nested object", { a: { b: [1, { c: null }], d: true }, e: "" }],
        ["unicode text", { text: 'défilé 🚢 船队 \u0000 "quoted" \\ back' }],
        [
          "numbers",
          { ints: [0, -1, 2 ** 53 - 1], floats: [0.1, -2.5e-7, 1e300] },
        ],
        ["a top-level string", "just text"],
        ["a top-level number", 42],
        ["null", null],
        ["an empty array", []],
        ["false", false],
      ])("%s round-trips unchanged", async (_, value) => {
        await using fx = await open();
        await fx.store.put(anything, "value", value);
        expect((await fx.peer.get(anything, "value"))?.value).toEqual(value);
      });

      test("reads are copies: mutating a value after put or get changes nothing stored", async () => {
        await using fx = await open();
        const value = { name: "web-1", n: 1 };
        await fx.store.put(docs, "web-1", value);
        value.n = 99;
        const read = await fx.store.get(docs, "web-1");
        read!.value.n = 100;
        expect((await fx.store.get(docs, "web-1"))?.value).toEqual({
          name: "web-1",
          n: 1,
        });
      });

      test("collections are separate: one key holds a value per collection", async () => {
        await using fx = await open();
        await fx.store.put(anything, "k", "in clusters");
        await fx.store.put(others, "k", "in bundles");
        expect((await fx.store.get(anything, "k"))?.value).toBe("in clusters");
        expect((await fx.store.get(others, "k"))?.value).toBe("in bundles");
      });

      test("a stored document that fails the collection's decode is an internal error", async () => {
        await using fx = await open();
        await fx.store.put(anything, "bad", { name: 1 });
        const strict = defineCollection("clusters", docs.decode);
        const error = await rejection(fx.store.get(strict, "bad"));
        expect(error.code).toBe("internal");
        expect(error.message).toContain('"clusters/bad"');
      });
    });

    describe("list", () => {
      test("list returns the live documents sorted by key with their revisions", async () => {
        await using fx = await open();
        const b = await fx.store.put(docs, "b", { name: "b", n: 2 });
        const a = await fx.store.put(docs, "a", { name: "a", n: 1 });
        await fx.store.put(docs, "c", { name: "c", n: 3 });
        await fx.store.delete(docs, "c");
        expect(await fx.peer.list(docs)).toEqual([
          { key: "a", value: { name: "a", n: 1 }, revision: a },
          { key: "b", value: { name: "b", n: 2 }, revision: b },
        ]);
      });

      test("list of an empty collection is empty", async () => {
        await using fx = await open();
        expect(await fx.store.list(docs)).toEqual([]);
      });

      test.each([
        ["web.", ["web.1", "web.2.x"]],
        ["web", ["web.1", "web.2.x", "webapp.1"]],
        ["web.2", ["web.2.x"]],
        ["w", ["web.1", "web.2.x", "webapp.1"]],
        ["", ["db.1", "web.1", "web.2.x", "webapp.1"]],
        ["nothing", []],
      ])(
        "list by prefix %j is a plain string prefix",
        async (prefix, expected) => {
          await using fx = await open();
          for (const key of ["web.1", "web.2.x", "webapp.1", "db.1"]) {
            await fx.store.put(anything, key, key);
          }
          const listed = await fx.store.list(anything, { prefix });
          expect(listed.map((e) => e.key)).toEqual(expected);
        },
      );

      test("a prefix with characters no key can hold is rejected", async () => {
        await using fx = await open();
        const error = await rejection(
          fx.store.list(anything, { prefix: "web *" }),
        );
        expect(error.code).toBe("invalid_argument");
      });
    });

    describe("compare-and-set", () => {
      test("expectedRevision 0 creates a missing key and refuses an existing one", async () => {
        await using fx = await open();
        const created = await fx.store.put(
          docs,
          "r",
          { name: "first", n: 1 },
          { expectedRevision: 0 },
        );
        const error = await rejection(
          fx.peer.put(
            docs,
            "r",
            { name: "second", n: 2 },
            { expectedRevision: 0 },
          ),
        );
        expect(error).toBeInstanceOf(RevisionConflictError);
        expect(isRevisionConflict(error)).toBe(true);
        expect(error.code).toBe("failed_precondition");
        expect(error.message).toContain('"runs/r"');
        expect(await fx.store.get(docs, "r")).toEqual({
          key: "r",
          value: { name: "first", n: 1 },
          revision: created,
        });
      });

      test("expectedRevision 0 creates a key again after it was deleted", async () => {
        await using fx = await open();
        await fx.store.put(docs, "r", { name: "old", n: 1 });
        await fx.store.delete(docs, "r");
        await fx.store.put(
          docs,
          "r",
          { name: "new", n: 2 },
          { expectedRevision: 0 },
        );
        expect((await fx.store.get(docs, "r"))?.value).toEqual({
          name: "new",
          n: 2,
        });
      });

      test("expectedRevision n writes only while the key is still at revision n", async () => {
        await using fx = await open();
        const first = await fx.store.put(docs, "r", { name: "v1", n: 1 });
        const second = await fx.store.put(
          docs,
          "r",
          { name: "v2", n: 2 },
          { expectedRevision: first },
        );
        const error = await rejection(
          fx.peer.put(
            docs,
            "r",
            { name: "stale", n: 3 },
            { expectedRevision: first },
          ),
        );
        expect(isRevisionConflict(error)).toBe(true);
        expect(error.message).toMatch(
          /"runs\/r" at revision \d+: it has been written since/,
        );
        expect(await fx.store.get(docs, "r")).toEqual({
          key: "r",
          value: { name: "v2", n: 2 },
          revision: second,
        });
      });

      test("expectedRevision n on a key that does not exist is a conflict", async () => {
        await using fx = await open();
        const error = await rejection(
          fx.store.put(
            docs,
            "never",
            { name: "x", n: 0 },
            { expectedRevision: 12345 },
          ),
        );
        expect(isRevisionConflict(error)).toBe(true);
        expect(await fx.store.get(docs, "never")).toBeUndefined();
      });

      test("of concurrent writers at the same revision exactly one wins", async () => {
        await using fx = await open();
        const base = await fx.store.put(docs, "run", { name: "base", n: 0 });
        const writers = Array.from({ length: 12 }, (_, i) =>
          (i % 2 === 0 ? fx.store : fx.peer).put(
            docs,
            "run",
            { name: `writer-${String(i)}`, n: i },
            { expectedRevision: base },
          ),
        );
        const results = await Promise.allSettled(writers);
        const won = results.flatMap((r, i) =>
          r.status === "fulfilled" ? [{ i, revision: r.value }] : [],
        );
        expect(won).toHaveLength(1);
        for (const r of results) {
          if (r.status === "rejected")
            expect(isRevisionConflict(r.reason)).toBe(true);
        }
        expect(await fx.store.get(docs, "run")).toEqual({
          key: "run",
          value: { name: `writer-${String(won[0]!.i)}`, n: won[0]!.i },
          revision: won[0]!.revision,
        });
      });

      test("of concurrent creators exactly one wins", async () => {
        await using fx = await open();
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 === 0 ? fx.store : fx.peer).put(
              docs,
              "new",
              { name: "c", n: i },
              { expectedRevision: 0 },
            ),
          ),
        );
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      });

      test.each([-1, 1.5, Number.NaN])(
        "expectedRevision %s is rejected as invalid",
        async (revision) => {
          await using fx = await open();
          const error = await rejection(
            fx.store.put(
              docs,
              "r",
              { name: "x", n: 0 },
              { expectedRevision: revision },
            ),
          );
          expect(error.code).toBe("invalid_argument");
          expect(await fx.store.get(docs, "r")).toBeUndefined();
        },
      );
    });

    describe("delete", () => {
      test("delete removes the key from get and list", async () => {
        await using fx = await open();
        await fx.store.put(docs, "a", { name: "a", n: 1 });
        await fx.store.put(docs, "b", { name: "b", n: 2 });
        await fx.store.delete(docs, "a");
        expect(await fx.peer.get(docs, "a")).toBeUndefined();
        expect((await fx.peer.list(docs)).map((e) => e.key)).toEqual(["b"]);
      });

      test("deleting a key that does not exist is not an error", async () => {
        await using fx = await open();
        await fx.store.delete(docs, "missing");
        expect(await fx.store.get(docs, "missing")).toBeUndefined();
      });

      test("delete with expectedRevision succeeds at the current revision and refuses a stale one", async () => {
        await using fx = await open();
        const first = await fx.store.put(docs, "r", { name: "v1", n: 1 });
        const second = await fx.store.put(docs, "r", { name: "v2", n: 2 });
        const error = await rejection(
          fx.peer.delete(docs, "r", { expectedRevision: first }),
        );
        expect(isRevisionConflict(error)).toBe(true);
        expect((await fx.store.get(docs, "r"))?.revision).toBe(second);
        await fx.store.delete(docs, "r", { expectedRevision: second });
        expect(await fx.store.get(docs, "r")).toBeUndefined();
      });

      test("delete with expectedRevision 0 is invalid: there is nothing to delete", async () => {
        await using fx = await open();
        const error = await rejection(
          fx.store.delete(docs, "r", { expectedRevision: 0 }),
        );
        expect(error.code).toBe("invalid_argument");
      });
    });

    describe("watch", () => {
      test("watch sees the puts and deletes made after it is established, in order", async () => {
        await using fx = await open();
        await fx.store.put(docs, "before", { name: "before", n: 0 });
        const controller = new AbortController();
        const watch = collect(
          await fx.peer.watch(docs, { signal: controller.signal }),
        );
        const r1 = await fx.store.put(docs, "a", { name: "a", n: 1 });
        const r2 = await fx.store.put(docs, "b", { name: "b", n: 2 });
        await fx.store.delete(docs, "a");
        const r4 = await fx.store.put(docs, "b", { name: "b", n: 3 });
        const changes = await waitFor(
          () => watch.items.length >= 4 && watch.items,
          {
            message: "4 changes",
          },
        );
        const r3 = changes[2]!.revision;
        expect(changes).toEqual<Change<Doc>[]>([
          { type: "put", key: "a", value: { name: "a", n: 1 }, revision: r1 },
          { type: "put", key: "b", value: { name: "b", n: 2 }, revision: r2 },
          { type: "delete", key: "a", revision: r3 },
          { type: "put", key: "b", value: { name: "b", n: 3 }, revision: r4 },
        ]);
        expect(r3).toBeGreaterThan(r2);
        expect(r4).toBeGreaterThan(r3);
        controller.abort();
        await watch.ended;
        expect(watch.items).toHaveLength(4);
      });

      test("watch by prefix sees only matching keys, and no other collection", async () => {
        await using fx = await open();
        const controller = new AbortController();
        const watch = collect(
          await fx.peer.watch(anything, {
            signal: controller.signal,
            prefix: "web",
          }),
        );
        await fx.store.put(anything, "db.1", 1);
        await fx.store.put(others, "web.1", 2);
        await fx.store.put(anything, "webapp", 3);
        await fx.store.put(anything, "web.1", 4);
        await waitFor(() => watch.items.length >= 2, { message: "2 changes" });
        controller.abort();
        await watch.ended;
        expect(
          watch.items.map((c) => [c.key, c.type === "put" ? c.value : null]),
        ).toEqual([
          ["webapp", 3],
          ["web.1", 4],
        ]);
      });

      test("aborting the signal ends the iteration normally", async () => {
        await using fx = await open();
        const controller = new AbortController();
        const watch = collect(
          await fx.store.watch(docs, { signal: controller.signal }),
        );
        controller.abort();
        await expect(watch.ended).resolves.toBeUndefined();
      });

      test("a watch with an aborted signal rejects with the signal's reason", async () => {
        await using fx = await open();
        const reason = new Error("gave up");
        await expect(
          fx.store.watch(docs, { signal: AbortSignal.abort(reason) }),
        ).rejects.toBe(reason);
      });
    });

    describe("lifecycle and signals", () => {
      test("stop ends every watch and later calls fail with unavailable", async () => {
        await using fx = await open();
        const watch = collect(
          await fx.store.watch(docs, { signal: new AbortController().signal }),
        );
        await fx.store.stop();
        await expect(watch.ended).resolves.toBeUndefined();
        const error = await rejection(fx.store.get(docs, "a"));
        expect(error.code).toBe("unavailable");
        expect(error.message).toMatch(/not started/);
      });

      test("an aborted signal rejects an operation with its reason", async () => {
        await using fx = await open();
        const reason = new Error("caller gave up");
        const signal = AbortSignal.abort(reason);
        await expect(fx.store.get(docs, "a", { signal })).rejects.toBe(reason);
        await expect(
          fx.store.put(docs, "a", { name: "a", n: 1 }, { signal }),
        ).rejects.toBe(reason);
        expect(await fx.store.get(docs, "a")).toBeUndefined();
      });
    });

    describe("limits", () => {
      test("a value of exactly maxValueBytes is stored", async () => {
        await using fx = await open();
        // JSON adds two quotes around a string.
        const value = "x".repeat(fx.store.maxValueBytes - 2);
        await fx.store.put(anything, "big", value);
        expect((await fx.peer.get(anything, "big"))?.value).toBe(value);
      });

      test("a value one byte over maxValueBytes is rejected naming the key and size, and nothing is stored", async () => {
        await using fx = await open();
        const max = fx.store.maxValueBytes;
        await fx.store.put(anything, "big", "small");
        // Multi-byte characters count in bytes: "é" is 2 bytes of UTF-8. With the two quotes JSON
        // adds, the content needs max - 1 bytes.
        const value =
          "é".repeat(Math.floor((max - 1) / 2)) +
          ((max - 1) % 2 === 1 ? "x" : "");
        const error = await rejection(fx.store.put(anything, "big", value));
        expect(error.code).toBe("invalid_argument");
        expect(error.message).toContain('"clusters/big"');
        expect(error.message).toContain(
          `${String(max + 1)} bytes, more than the ${String(max)} allowed`,
        );
        expect((await fx.store.get(anything, "big"))?.value).toBe("small");
      });

      test.each([
        ["undefined", undefined],
        ["a bigint", { n: 10n }],
        ["a function", () => 1],
      ])(
        "a value that is not JSON (%s) is rejected and nothing is stored",
        async (_, value) => {
          await using fx = await open();
          const error = await rejection(fx.store.put(anything, "v", value));
          expect(error.code).toBe("invalid_argument");
          expect(error.message).toContain("not JSON");
          expect(await fx.store.get(anything, "v")).toBeUndefined();
        },
      );

      test.each(BAD_KEYS)(
        "a key with %s is rejected by every operation and nothing is stored",
        async (_, key) => {
          await using fx = await open();
          const put = await rejection(fx.store.put(anything, key, 1));
          expect(put.code).toBe("invalid_argument");
          expect(put.message).toMatch(/^Cannot put "clusters\//);
          expect(put.problems[0]).toMatchObject({ path: "key", value: key });
          expect((await rejection(fx.store.get(anything, key))).code).toBe(
            "invalid_argument",
          );
          expect((await rejection(fx.store.delete(anything, key))).code).toBe(
            "invalid_argument",
          );
          expect(await fx.store.list(anything)).toEqual([]);
        },
      );

      test.each([
        ["dots", "fleet.eu.web-1"],
        ["every allowed character", "Az09-_=/x"],
        ["the longest allowed key", "k".repeat(MAX_KEY_LENGTH)],
      ])("a key with %s is stored", async (_, key) => {
        await using fx = await open();
        await fx.store.put(anything, key, "ok");
        expect((await fx.peer.get(anything, key))?.value).toBe("ok");
        expect((await fx.peer.list(anything)).map((e) => e.key)).toEqual([key]);
      });
    });
  });
}
