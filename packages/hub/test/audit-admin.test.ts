// ListAuditEvents and WatchAuditEvents over real gRPC (grpc-js on 127.0.0.1:0) on a memory log.
import { describe, expect, test } from "vitest";
import { status, type ServiceError } from "@grpc/grpc-js";
import type { createAdminServiceClient } from "@flotilla/protocol";
import { callUnary, fromGrpcError, type wire } from "@flotilla/protocol";
import type { FlotillaError } from "@flotilla/core";
import { waitFor } from "@flotilla/testkit";
import { auditHandlers } from "../src/audit/admin-audit.js";
import type {
  AuditEvent,
  AuditFilter,
  AuditLog,
  AuditWatchOptions,
} from "../src/audit/audit-log.js";
import { createMemoryAuditLog } from "../src/audit/memory-audit-log.js";
import { serveAdmin } from "./admin-test-server.js";
import { record, rejection } from "./audit-log.contract.js";

type AdminClient = ReturnType<typeof createAdminServiceClient>;

/** The memory log, counting the watches that are running (to see a cancel reach the server). */
class TrackedLog implements AuditLog {
  readonly inner = createMemoryAuditLog();
  openWatches = 0;
  start = () => this.inner.start();
  stop = () => this.inner.stop();
  append: AuditLog["append"] = (r) => this.inner.append(r);
  list: AuditLog["list"] = (f, o) => this.inner.list(f, o);
  watch(
    filter: AuditFilter,
    options: AuditWatchOptions,
  ): AsyncIterable<AuditEvent> {
    const inner = this.inner.watch(filter, options);
    return async function* (this: TrackedLog) {
      this.openWatches++;
      try {
        yield* inner;
      } finally {
        this.openWatches--;
      }
    }.call(this);
  }
  [Symbol.asyncDispose] = () => this.inner.stop();
}

async function startHub(): Promise<
  AsyncDisposable & { client: AdminClient; log: TrackedLog }
> {
  const log = new TrackedLog();
  await log.start();
  const { client, close } = await serveAdmin(auditHandlers(log));
  return {
    client,
    log,
    async [Symbol.asyncDispose]() {
      close();
      await log.stop();
    },
  };
}

/** Reads a server stream in the background. */
function watchEvents(
  client: AdminClient,
  request: wire.WatchAuditEventsRequest,
) {
  const call = client.watchAuditEvents(request);
  const events: wire.AuditEvent__Output[] = [];
  const ended = new Promise<FlotillaError | "ok">((resolve) => {
    call.on("data", (m: wire.WatchAuditEventsResponse__Output) => {
      if (m.event) events.push(m.event);
    });
    call.on("error", (e: ServiceError) => {
      resolve(e.code === status.CANCELLED ? "ok" : fromGrpcError(e));
    });
    call.on("end", () => {
      resolve("ok");
    });
  });
  return { call, events, ended };
}

describe("ListAuditEvents", () => {
  test("returns wire events with outcome and error code enums, page by page", async () => {
    await using hub = await startHub();
    await hub.log.append(record({ atMs: 1 }));
    await hub.log.append(
      record({
        atMs: 2,
        outcome: "Denied",
        errorCode: "permission_denied",
        message: "no",
      }),
    );
    await hub.log.append(record({ atMs: 3 }));

    const first = await callUnary(hub.client, "listAuditEvents", {
      pageSize: 2,
    });
    expect(first.events).toEqual([
      {
        sequence: 1,
        atMs: 1,
        actor: "user:alice",
        role: "operator",
        method: "StartUpdateRun",
        targetKind: "update-run",
        targetName: "upgrade-1-31",
        reason: "weekly upgrade",
        outcome: "AUDIT_OUTCOME_SUCCEEDED",
        message: "",
      },
      expect.objectContaining({
        sequence: 2,
        outcome: "AUDIT_OUTCOME_DENIED",
        errorCode: "ERROR_CODE_PERMISSION_DENIED",
        message: "no",
      }),
    ]);
    expect(first.events[0]).not.toHaveProperty("errorCode");
    const second = await callUnary(hub.client, "listAuditEvents", {
      pageSize: 2,
      pageToken: first.nextPageToken,
    });
    expect(second.events.map((e) => e.sequence)).toEqual([3]);
    expect(second.nextPageToken).toBe("");
  });

  test("applies the filter; page size 0 means the default", async () => {
    await using hub = await startHub();
    await hub.log.append(record({ atMs: 10, actor: "user:bob" }));
    await hub.log.append(
      record({ atMs: 20, outcome: "Failed", errorCode: "internal" }),
    );
    await hub.log.append(record({ atMs: 30, actor: "user:bob" }));
    const response = await callUnary(hub.client, "listAuditEvents", {
      filter: {
        sinceMs: 15,
        actor: "user:bob",
        outcomes: ["AUDIT_OUTCOME_SUCCEEDED"],
      },
      pageSize: 0,
    });
    expect(response.events.map((e) => e.sequence)).toEqual([3]);
    const failed = await callUnary(hub.client, "listAuditEvents", {
      filter: { outcomes: ["AUDIT_OUTCOME_FAILED"] },
    });
    expect(failed.events.map((e) => e.errorCode)).toEqual([
      "ERROR_CODE_INTERNAL",
    ]);
  });

  test("refuses a bad filter and page token with INVALID_ARGUMENT naming every field", async () => {
    await using hub = await startHub();
    const error = await rejection(
      callUnary(hub.client, "listAuditEvents", {
        filter: {
          sinceMs: 50,
          untilMs: 40,
          outcomes: ["AUDIT_OUTCOME_UNSPECIFIED", "AUDIT_OUTCOME_DENIED"],
        },
        pageSize: 5000,
        pageToken: "bogus",
      }),
    );
    expect(error.code).toBe("invalid_argument");
    expect(error.problems.map((p) => [p.path, p.value])).toEqual([
      ["filter.outcomes[0]", "AUDIT_OUTCOME_UNSPECIFIED"],
      ["filter.untilMs", 40],
      ["pageSize", 5000],
      ["pageToken", "bogus"],
    ]);
  });

  test("refuses a sinceMs beyond 2^53 rather than rounding it", async () => {
    await using hub = await startHub();
    const error = await rejection(
      callUnary(hub.client, "listAuditEvents", {
        filter: { sinceMs: "18446744073709551615" },
      }),
    );
    expect(error.problems.map((p) => p.path)).toEqual(["filter.sinceMs"]);
  });

  test("answers UNAVAILABLE while the log is stopped", async () => {
    await using hub = await startHub();
    await hub.log.stop();
    const error = await rejection(callUnary(hub.client, "listAuditEvents", {}));
    expect(error.code).toBe("unavailable");
  });
});

describe("WatchAuditEvents", () => {
  test("streams stored events after afterSequence, then new ones, until the client cancels", async () => {
    await using hub = await startHub();
    await hub.log.append(record({ atMs: 1 }));
    await hub.log.append(record({ atMs: 2 }));
    const watch = watchEvents(hub.client, { afterSequence: 1 });
    await waitFor(() => watch.events.length === 1, {
      message: "the stored event",
    });
    await hub.log.append(record({ atMs: 3 }));
    await waitFor(() => watch.events.length === 2, {
      message: "the new event",
    });
    expect(watch.events.map((e) => [e.sequence, e.outcome])).toEqual([
      [2, "AUDIT_OUTCOME_SUCCEEDED"],
      [3, "AUDIT_OUTCOME_SUCCEEDED"],
    ]);
    expect(hub.log.openWatches).toBe(1);

    watch.call.cancel();

    expect(await watch.ended).toBe("ok");
    await waitFor(() => hub.log.openWatches === 0, {
      message: "the server-side watch to end after the cancel",
    });
  });

  test("applies the filter", async () => {
    await using hub = await startHub();
    const watch = watchEvents(hub.client, {
      filter: { targetName: "web" },
      afterSequence: 0,
    });
    await hub.log.append(record({ targetName: "db" }));
    await hub.log.append(record({ targetName: "web" }));
    await waitFor(() => watch.events.length === 1);
    watch.call.cancel();
    await watch.ended;
    expect(watch.events.map((e) => e.sequence)).toEqual([2]);
  });

  test("refuses a bad filter with INVALID_ARGUMENT", async () => {
    await using hub = await startHub();
    const watch = watchEvents(hub.client, {
      filter: { outcomes: [7 as unknown as "AUDIT_OUTCOME_FAILED"] },
    });
    const result = await watch.ended;
    expect(result).not.toBe("ok");
    const error = result as FlotillaError;
    expect(error.code).toBe("invalid_argument");
    expect(error.problems.map((p) => p.path)).toEqual(["filter.outcomes[0]"]);
  });

  test("ends with UNAVAILABLE when the log stops", async () => {
    await using hub = await startHub();
    const watch = watchEvents(hub.client, { afterSequence: 0 });
    await hub.log.append(record());
    await waitFor(() => watch.events.length === 1);
    await hub.log.stop();
    const result = await watch.ended;
    expect(result).not.toBe("ok");
    expect((result as FlotillaError).code).toBe("unavailable");
  });
});
