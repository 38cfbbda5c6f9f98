// The AuditLog contract: every adapter must pass these tests. Register them with
// `describeAuditLogContract(name, open)` from an adapter's test file.
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { waitFor } from "@flotilla/testkit";
import type {
  AuditEvent,
  AuditLog,
  AuditRecord,
} from "../src/audit/audit-log.js";

/** A started log and a second one over the same records, released on dispose. */
export interface AuditLogFixture extends AsyncDisposable {
  readonly log: AuditLog;
  /** A second log on the same records: another connection for JetStream, or `log` itself. */
  readonly peer: AuditLog;
}

/** A valid record; `overrides` replace fields. */
export function record(overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    atMs: 1_700_000_000_000,
    actor: "user:alice",
    role: "operator",
    method: "StartUpdateRun",
    targetKind: "update-run",
    targetName: "upgrade-1-31",
    reason: "weekly upgrade",
    outcome: "Succeeded",
    message: "",
    ...overrides,
  };
}

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

/** The FlotillaError `promise` rejects with (fails the test when it resolves or throws else). */
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

async function appendAll(
  log: AuditLog,
  records: readonly AuditRecord[],
): Promise<AuditEvent[]> {
  const events: AuditEvent[] = [];
  for (const r of records) events.push(await log.append(r));
  return events;
}

/** Every page of `list(filter, pageSize)`, following the tokens. */
async function allPages(
  log: AuditLog,
  filter: Parameters<AuditLog["list"]>[0],
  pageSize: number,
): Promise<AuditEvent[][]> {
  const pages: AuditEvent[][] = [];
  let pageToken = "";
  do {
    const page = await log.list(filter, { pageSize, pageToken });
    pages.push([...page.events]);
    pageToken = page.nextPageToken;
  } while (pageToken !== "" && pages.length < 100);
  return pages;
}

const sequences = (events: readonly AuditEvent[]): number[] =>
  events.map((e) => e.sequence);

/** Registers the contract tests for the adapter that `open` creates. */
export function describeAuditLogContract(
  adapter: string,
  open: () => Promise<AuditLogFixture>,
): void {
  describe(`AuditLog contract: ${adapter}`, () => {
    describe("append", () => {
      test("assigns sequences 1, 2, 3 and returns the stored record", async () => {
        await using fx = await open();
        const failed = record({
          outcome: "Failed",
          errorCode: "failed_precondition",
          message: 'Cannot start run "upgrade-1-31": it is Running',
        });
        const events = await appendAll(fx.log, [record(), failed, record()]);
        expect(sequences(events)).toEqual([1, 2, 3]);
        expect(events[1]).toEqual({ ...failed, sequence: 2 });
        const page = await fx.peer.list({});
        expect(page).toEqual({ events, nextPageToken: "" });
      });

      test("stores only the record's known fields", async () => {
        await using fx = await open();
        const extra = { ...record(), password: "hunter2" } as AuditRecord;
        const event = await fx.log.append(extra);
        expect(event).toEqual({ ...record(), sequence: 1 });
        expect((await fx.peer.list({})).events).toEqual([event]);
      });

      test.each([
        ["a negative atMs", { atMs: -1 }, "atMs"],
        ["a fractional atMs", { atMs: 1.5 }, "atMs"],
        ["an actor over 256 characters", { actor: "a".repeat(257) }, "actor"],
        [
          "a reason over 1024 characters",
          { reason: "r".repeat(1025) },
          "reason",
        ],
        ["an empty method", { method: "" }, "method"],
        ["an unknown outcome", { outcome: "Maybe" }, "outcome"],
        [
          "a Failed outcome without errorCode",
          { outcome: "Failed" },
          "errorCode",
        ],
        [
          "a Succeeded outcome with an errorCode",
          { errorCode: "internal" },
          "errorCode",
        ],
        [
          "an unknown errorCode",
          { outcome: "Denied", errorCode: "nope" },
          "errorCode",
        ],
      ] as const)(
        "refuses %s with invalid_argument naming the field, storing nothing",
        async (_, overrides, path) => {
          await using fx = await open();
          const error = await rejection(
            fx.log.append(record(overrides as Partial<AuditRecord>)),
          );
          expect(error.code).toBe("invalid_argument");
          expect(error.problems.map((p) => p.path)).toContain(path);
          expect((await fx.peer.list({})).events).toEqual([]);
        },
      );

      test("reports every bad field at once", async () => {
        await using fx = await open();
        const error = await rejection(
          fx.log.append({
            ...record(),
            actor: 7,
            role: undefined,
          } as unknown as AuditRecord),
        );
        expect(error.problems).toEqual([
          { path: "actor", message: "must be string", value: 7 },
          { path: "role", message: "is required" },
        ]);
      });
    });

    describe("list", () => {
      test("pages oldest first; the last page has an empty nextPageToken", async () => {
        await using fx = await open();
        await appendAll(
          fx.log,
          [1, 2, 3, 4, 5].map((n) => record({ atMs: n })),
        );
        const pages = await allPages(fx.peer, {}, 2);
        expect(pages.map(sequences)).toEqual([[1, 2], [3, 4], [5]]);
      });

      test("a page exactly filling the rest of the log is the last page", async () => {
        await using fx = await open();
        await appendAll(fx.log, [record(), record()]);
        expect(await fx.log.list({}, { pageSize: 2 })).toMatchObject({
          nextPageToken: "",
        });
      });

      test("holds 100 records by default", async () => {
        await using fx = await open();
        await appendAll(
          fx.log,
          Array.from({ length: 101 }, (_, i) => record({ atMs: i })),
        );
        const first = await fx.log.list({});
        expect(first.events).toHaveLength(100);
        const second = await fx.log.list(
          {},
          { pageToken: first.nextPageToken },
        );
        expect(sequences(second.events)).toEqual([101]);
        expect(second.nextPageToken).toBe("");
      });

      test("page tokens are opaque, not the bare sequence", async () => {
        await using fx = await open();
        await appendAll(fx.log, [record(), record(), record()]);
        const { nextPageToken } = await fx.log.list({}, { pageSize: 1 });
        expect(nextPageToken).not.toBe("");
        expect(nextPageToken).not.toMatch(/^\d+$/);
      });

      test("returns records appended after a page was read on the next page", async () => {
        await using fx = await open();
        await appendAll(fx.log, [record(), record()]);
        const first = await fx.log.list({}, { pageSize: 1 });
        await fx.log.append(record({ targetName: "late" }));
        const rest = await fx.peer.list({}, { pageToken: first.nextPageToken });
        expect(sequences(rest.events)).toEqual([2, 3]);
      });

      test.each([
        ["actor", { actor: "user:bob" }],
        ["targetKind", { targetKind: "bundle" }],
        ["targetName", { targetName: "web" }],
        ["method", { method: "ApplyBundle" }],
      ] as const)("filters on %s (exact match)", async (_, overrides) => {
        await using fx = await open();
        await appendAll(fx.log, [
          record(),
          record(overrides),
          record(),
          record(overrides),
        ]);
        expect(sequences((await fx.peer.list(overrides)).events)).toEqual([
          2, 4,
        ]);
      });

      test("filters on outcomes; an empty list means any outcome", async () => {
        await using fx = await open();
        await appendAll(fx.log, [
          record(),
          record({ outcome: "Denied", errorCode: "permission_denied" }),
          record({ outcome: "Failed", errorCode: "not_found" }),
        ]);
        const list = async (outcomes: AuditRecord["outcome"][]) =>
          sequences((await fx.log.list({ outcomes })).events);
        expect(await list(["Denied", "Failed"])).toEqual([2, 3]);
        expect(await list(["Succeeded"])).toEqual([1]);
        expect(await list([])).toEqual([1, 2, 3]);
      });

      test("sinceMs is inclusive and untilMs exclusive", async () => {
        await using fx = await open();
        await appendAll(
          fx.log,
          [10, 20, 30, 40].map((atMs) => record({ atMs })),
        );
        const events = await fx.log.list({ sinceMs: 20, untilMs: 40 });
        expect(events.events.map((e) => e.atMs)).toEqual([20, 30]);
      });

      test("every set field must match", async () => {
        await using fx = await open();
        await appendAll(fx.log, [
          record({ actor: "user:bob", atMs: 5 }),
          record({ actor: "user:bob", atMs: 50 }),
          record({ actor: "user:carol", atMs: 50 }),
        ]);
        const page = await fx.log.list({ actor: "user:bob", sinceMs: 10 });
        expect(sequences(page.events)).toEqual([2]);
      });

      test("pages through a filter; no token when no later record matches", async () => {
        await using fx = await open();
        const bob = record({ actor: "user:bob" });
        await appendAll(fx.log, [bob, record(), bob, bob, record(), record()]);
        const pages = await allPages(fx.peer, { actor: "user:bob" }, 2);
        expect(pages.map(sequences)).toEqual([[1, 3], [4]]);
      });

      test("refuses a bad filter, page size and token at once, naming each field", async () => {
        await using fx = await open();
        const error = await rejection(
          fx.log.list(
            {
              sinceMs: 20,
              untilMs: 10,
              actor: "a".repeat(300),
              outcomes: ["Succeeded", "Maybe" as "Failed"],
            },
            { pageSize: 1001, pageToken: "not-a-token" },
          ),
        );
        expect(error.code).toBe("invalid_argument");
        expect(error.problems.map((p) => [p.path, p.value])).toEqual([
          ["filter.untilMs", 10],
          ["filter.actor", "a".repeat(300)],
          ["filter.outcomes[1]", "Maybe"],
          ["pageSize", 1001],
          ["pageToken", "not-a-token"],
        ]);
      });

      test.each([
        ["a negative sinceMs", { sinceMs: -1 }, "filter.sinceMs"],
        ["a fractional untilMs", { untilMs: 0.5 }, "filter.untilMs"],
      ])("refuses %s", async (_, filter, path) => {
        await using fx = await open();
        const error = await rejection(fx.log.list(filter));
        expect(error.problems.map((p) => p.path)).toEqual([path]);
      });

      test.each([0, -1, 2.5])("refuses pageSize %s", async (pageSize) => {
        await using fx = await open();
        const error = await rejection(fx.log.list({}, { pageSize }));
        expect(error.problems).toEqual([
          {
            path: "pageSize",
            message: "must be an integer from 1 to 1000",
            value: pageSize,
          },
        ]);
      });

      test("refuses a token whose text was altered", async () => {
        await using fx = await open();
        await appendAll(fx.log, [record(), record()]);
        const { nextPageToken } = await fx.log.list({}, { pageSize: 1 });
        for (const token of [
          `${nextPageToken}x`,
          nextPageToken.slice(1),
          Buffer.from("audit.v1.0").toString("base64url"),
          Buffer.from("audit.v1.02").toString("base64url"),
        ]) {
          const error = await rejection(fx.log.list({}, { pageToken: token }));
          expect(error.problems.map((p) => p.path)).toEqual(["pageToken"]);
        }
      });

      test("a token past the end gives an empty last page", async () => {
        await using fx = await open();
        await appendAll(fx.log, [record(), record()]);
        const { nextPageToken } = await fx.log.list({}, { pageSize: 1 });
        const second = await fx.log.list(
          {},
          { pageSize: 1, pageToken: nextPageToken },
        );
        expect(second).toMatchObject({ nextPageToken: "" });
        expect(sequences(second.events)).toEqual([2]);
      });

      test("an aborted signal rejects with its reason", async () => {
        await using fx = await open();
        const controller = new AbortController();
        const reason = new Error("gave up");
        controller.abort(reason);
        await expect(
          fx.log.list({}, { signal: controller.signal }),
        ).rejects.toBe(reason);
      });
    });

    describe("watch", () => {
      test("delivers stored records after afterSequence, then new ones, in order", async () => {
        await using fx = await open();
        await appendAll(fx.log, [record(), record(), record()]);
        const controller = new AbortController();
        const watch = collect(
          fx.peer.watch({}, { signal: controller.signal, afterSequence: 1 }),
        );
        await waitFor(() => watch.items.length === 2, {
          message: "the stored records",
        });
        await appendAll(fx.log, [record({ atMs: 4 }), record({ atMs: 5 })]);
        await waitFor(() => watch.items.length === 4, {
          message: "the new records",
        });
        controller.abort();
        await watch.ended;
        expect(sequences(watch.items)).toEqual([2, 3, 4, 5]);
        expect(watch.items[3]).toEqual({ ...record({ atMs: 5 }), sequence: 5 });
      });

      test("afterSequence 0 replays every record", async () => {
        await using fx = await open();
        await appendAll(fx.log, [record(), record()]);
        const controller = new AbortController();
        const watch = collect(
          fx.log.watch({}, { signal: controller.signal, afterSequence: 0 }),
        );
        await waitFor(() => watch.items.length === 2);
        controller.abort();
        await watch.ended;
        expect(sequences(watch.items)).toEqual([1, 2]);
      });

      test("without afterSequence delivers only records appended after it started", async () => {
        await using fx = await open();
        await fx.log.append(record({ targetName: "before" }));
        const controller = new AbortController();
        const watch = collect(fx.peer.watch({}, { signal: controller.signal }));
        // When the watch is in place is the adapter's business: probe until one arrives.
        await waitFor(
          async () => {
            await fx.log.append(record({ targetName: "probe" }));
            return watch.items.length > 0;
          },
          { message: "a probe record to arrive" },
        );
        controller.abort();
        await watch.ended;
        expect(watch.items.map((e) => e.targetName)).not.toContain("before");
        const seqs = sequences(watch.items);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      });

      test("applies the filter to stored and new records", async () => {
        await using fx = await open();
        const denied = record({
          outcome: "Denied",
          errorCode: "permission_denied",
        });
        await appendAll(fx.log, [record(), denied]);
        const controller = new AbortController();
        const watch = collect(
          fx.peer.watch(
            { outcomes: ["Denied"] },
            { signal: controller.signal, afterSequence: 0 },
          ),
        );
        await waitFor(() => watch.items.length === 1);
        await appendAll(fx.log, [record(), denied]);
        await waitFor(() => watch.items.length === 2);
        controller.abort();
        await watch.ended;
        expect(sequences(watch.items)).toEqual([2, 4]);
      });

      test("ends cleanly when the signal aborts while waiting", async () => {
        await using fx = await open();
        const controller = new AbortController();
        const watch = collect(
          fx.log.watch({}, { signal: controller.signal, afterSequence: 0 }),
        );
        await fx.log.append(record());
        await waitFor(() => watch.items.length === 1);
        controller.abort();
        await expect(watch.ended).resolves.toBeUndefined();
      });

      test("an already aborted signal yields nothing", async () => {
        await using fx = await open();
        await fx.log.append(record());
        const watch = collect(
          fx.log.watch({}, { signal: AbortSignal.abort(), afterSequence: 0 }),
        );
        await watch.ended;
        expect(watch.items).toEqual([]);
      });

      test("ends cleanly when the log stops", async () => {
        await using fx = await open();
        await fx.log.append(record());
        const watch = collect(
          fx.log.watch(
            {},
            { signal: new AbortController().signal, afterSequence: 0 },
          ),
        );
        await waitFor(() => watch.items.length === 1);
        await fx.log.stop();
        await expect(watch.ended).resolves.toBeUndefined();
      });

      test("refuses a bad filter or afterSequence naming the fields", async () => {
        await using fx = await open();
        const watch = collect(
          fx.log.watch(
            { sinceMs: -5 },
            { signal: new AbortController().signal, afterSequence: -1 },
          ),
        );
        const error = await rejection(watch.ended);
        expect(error.code).toBe("invalid_argument");
        expect(error.problems.map((p) => p.path)).toEqual([
          "filter.sinceMs",
          "afterSequence",
        ]);
      });
    });
  });
}
