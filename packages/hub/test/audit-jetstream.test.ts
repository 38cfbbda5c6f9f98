import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import {
  createJetStreamAuditLog,
  type JetStreamAuditLogOptions,
} from "../src/audit/jetstream-audit-log.js";
import { capturedLogger } from "./captured-logger.js";
import type { AuditLog } from "../src/audit/audit-log.js";
import {
  collect,
  describeAuditLogContract,
  record,
  rejection,
  type AuditLogFixture,
} from "./audit-log.contract.js";

function connectTo(server: NatsServer): Promise<NatsConnection> {
  // Reconnect forever, quickly: the log must outlive NATS restarts.
  return connect({
    servers: server.url,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 50,
  });
}

let fixtures = 0;

/** A log and a peer on their own connections, on a stream no other test uses. */
async function openLogs(
  server: NatsServer,
  options: JetStreamAuditLogOptions = {},
  logger = capturedLogger().log,
): Promise<AuditLogFixture & { prefix: string; nc: NatsConnection }> {
  const prefix = options.prefix ?? `audit${String(++fixtures)}`;
  const connections = [await connectTo(server), await connectTo(server)];
  const [log, peer] = connections.map((nc) =>
    createJetStreamAuditLog(
      { nc, log: logger },
      { timeoutMs: 2_000, ...options, prefix },
    ),
  ) as [AuditLog, AuditLog];
  await log.start();
  await peer.start();
  return {
    log,
    peer,
    prefix,
    nc: connections[0]!,
    async [Symbol.asyncDispose]() {
      await log.stop();
      await peer.stop();
      await Promise.all(connections.map((nc) => nc.close()));
    },
  };
}

describe("shared server", () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server.stop();
  });
  describeAuditLogContract("JetStream", () => openLogs(server));

  test("start creates a file-backed, append-only stream with the configured limits", async () => {
    await using fx = await openLogs(server, {
      maxAgeMs: 3_600_000,
      maxBytes: 1024 * 1024,
    });
    const jsm = await jetstreamManager(fx.nc);
    const { config } = await jsm.streams.info(`${fx.prefix}-audit`);
    expect(config).toMatchObject({
      subjects: [`${fx.prefix}.audit`],
      storage: "file",
      retention: "limits",
      discard: "old",
      max_age: 3_600_000 * 1_000_000,
      max_bytes: 1024 * 1024,
      deny_delete: true,
      deny_purge: true,
    });
  });

  test("the default limits are 90 days and 1 GiB", async () => {
    await using fx = await openLogs(server);
    const jsm = await jetstreamManager(fx.nc);
    const { config } = await jsm.streams.info(`${fx.prefix}-audit`);
    expect(config.max_age).toBe(90 * 24 * 3600 * 1e9);
    expect(config.max_bytes).toBe(1024 ** 3);
  });

  test("sequence is the stream sequence", async () => {
    await using fx = await openLogs(server);
    const event = await fx.log.append(record());
    await fx.log.append(record());
    const jsm = await jetstreamManager(fx.nc);
    const { state } = await jsm.streams.info(`${fx.prefix}-audit`);
    expect(event.sequence).toBe(state.first_seq);
    expect(state.last_seq).toBe(event.sequence + 1);
  });

  test("a foreign record in the stream is skipped with a warning", async () => {
    const captured = capturedLogger();
    await using fx = await openLogs(server, {}, captured.log);
    const js = jetstream(fx.nc);
    await fx.log.append(record({ targetName: "first" }));
    await js.publish(`${fx.prefix}.audit`, "not json");
    await js.publish(`${fx.prefix}.audit`, JSON.stringify({ actor: 1 }));
    await fx.log.append(record({ targetName: "last" }));

    const page = await fx.peer.list({});
    expect(page.events.map((e) => [e.sequence, e.targetName])).toEqual([
      [1, "first"],
      [4, "last"],
    ]);
    const watch = collect(
      fx.peer.watch(
        {},
        { signal: AbortSignal.timeout(10_000), afterSequence: 0 },
      ),
    );
    await waitFor(() => watch.items.length === 2);
    const warnings = captured.lines.filter((l) => l["level"] === 40);
    expect(warnings.map((w) => w["sequence"])).toEqual([2, 3, 2, 3]);
    expect(warnings[0]).toMatchObject({
      component: "audit-log",
      msg: "Skipped an audit record that is not valid",
    });
    expect(warnings[1]).toMatchObject({
      reason: "invalid_record",
      detail: expect.stringMatching(/actor: must be string/) as unknown,
    });
  });

  test("a list reads at most maxScan records and resumes from its token", async () => {
    await using fx = await openLogs(server, { maxScan: 3 });
    const bob = record({ actor: "user:bob" });
    for (const r of [
      record(),
      record(),
      record(),
      bob,
      record(),
      bob,
      record(),
    ]) {
      await fx.log.append(r);
    }
    const first = await fx.log.list({ actor: "user:bob" });
    expect(first.events).toEqual([]);
    expect(first.nextPageToken).not.toBe("");
    const second = await fx.log.list(
      { actor: "user:bob" },
      { pageToken: first.nextPageToken },
    );
    expect(second.events.map((e) => e.sequence)).toEqual([4, 6]);
    const third = await fx.log.list(
      { actor: "user:bob" },
      { pageToken: second.nextPageToken },
    );
    expect(third).toEqual({ events: [], nextPageToken: "" });
  });

  test("an existing stream on another subject is refused", async () => {
    const nc = await connectTo(server);
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: "taken-audit", subjects: ["elsewhere"] });
      const log = createJetStreamAuditLog({ nc }, { prefix: "taken" });
      const error = await rejection(log.start());
      expect(error.code).toBe("failed_precondition");
      expect(error.message).toMatch(
        /takes subjects \["elsewhere"\], not "taken.audit"/,
      );
    } finally {
      await nc.close();
    }
  });

  test("a second log on the same prefix uses the existing stream", async () => {
    await using first = await openLogs(server, { prefix: "shared" });
    const event = await first.log.append(record());
    await using second = await openLogs(server, { prefix: "shared" });
    expect((await second.log.list({})).events).toEqual([event]);
  });

  test("an existing stream keeps its size limit; a different one configured is reported", async () => {
    await using first = await openLogs(server, {
      prefix: "resized",
      maxBytes: 2 * 1024 * 1024,
    });
    const event = await first.log.append(record());
    const captured = capturedLogger();
    await using second = await openLogs(
      server,
      { prefix: "resized", maxBytes: 4 * 1024 * 1024 },
      captured.log,
    );
    expect((await second.log.list({})).events).toEqual([event]);
    const jsm = await jetstreamManager(second.nc);
    const { config } = await jsm.streams.info("resized-audit");
    expect(config.max_bytes).toBe(2 * 1024 * 1024);
    expect(captured.lines).toContainEqual(
      expect.objectContaining({
        msg: "The existing audit stream keeps its own size limit",
        stream: "resized-audit",
        maxBytes: 2 * 1024 * 1024,
        configuredMaxBytes: 4 * 1024 * 1024,
      }),
    );
  });
});

describe("an audit stream JetStream has no room for", () => {
  test("is refused at start with its size in the message", async () => {
    await using server = await startNatsServer({
      config: "jetstream { max_file_store: 8MB }\n",
    });
    const nc = await connectTo(server);
    try {
      const log = createJetStreamAuditLog(
        { nc, log: capturedLogger().log },
        { maxBytes: 64 * 1024 * 1024, timeoutMs: 2_000 },
      );
      await expect(log.start()).rejects.toMatchObject({
        code: "failed_precondition",
        message: expect.stringMatching(
          /^Cannot start the JetStream audit log: JetStream refused to create stream "flotilla-audit" with max_bytes 67108864: insufficient storage resources/,
        ) as unknown,
      });
    } finally {
      await nc.close();
    }
  });
});

describe("createJetStreamAuditLog", () => {
  test("records and sequences survive a nats-server restart; a watch resumes", async () => {
    await using server = await startNatsServer();
    await using fx = await openLogs(server);
    const controller = new AbortController();
    const watch = collect(
      fx.peer.watch({}, { signal: controller.signal, afterSequence: 0 }),
    );
    const before = await fx.log.append(record({ targetName: "before" }));
    await waitFor(() => watch.items.length === 1, {
      message: "the first record",
    });

    await server.restart();

    const after = await waitFor(
      () =>
        fx.log.append(record({ targetName: "after" })).catch(() => undefined),
      { timeoutMs: 10_000, message: "an append to succeed after the restart" },
    );
    expect(after.sequence).toBe(before.sequence + 1);
    expect((await fx.log.list({})).events).toEqual([before, after]);
    await waitFor(() => watch.items.length === 2, {
      timeoutMs: 10_000,
      message: "the watch to deliver the record appended after the restart",
    });
    controller.abort();
    await watch.ended;
    expect(watch.items).toEqual([before, after]);
  });

  test("calls while NATS is down fail with unavailable, and work again once it is back", async () => {
    await using server = await startNatsServer();
    await using fx = await openLogs(server);
    await fx.log.append(record());

    await server.halt();

    await waitFor(
      async () => {
        const error = await rejection(fx.log.append(record()));
        expect(error.code).toBe("unavailable");
        return error.message.endsWith("the NATS connection is down");
      },
      { timeoutMs: 10_000, message: "append to fail fast with unavailable" },
    );
    const listError = await rejection(fx.log.list({}));
    expect(listError.code).toBe("unavailable");
    const watch = collect(
      fx.log.watch({}, { signal: new AbortController().signal }),
    );
    expect((await rejection(watch.ended)).code).toBe("unavailable");

    await server.restart();

    await waitFor(() => fx.log.list({}).catch(() => undefined), {
      timeoutMs: 10_000,
      message: "list to work after the restart",
    });
    expect((await fx.log.append(record())).sequence).toBe(2);
  });

  test("start on a closed connection fails with unavailable", async () => {
    await using server = await startNatsServer();
    const nc = await connectTo(server);
    await nc.close();
    const error = await rejection(createJetStreamAuditLog({ nc }).start());
    expect(error.code).toBe("unavailable");
    expect(error.message).toMatch(/^Cannot start the JetStream audit log: /);
  });

  test("calls before start fail with unavailable", async () => {
    await using server = await startNatsServer();
    const nc = await connectTo(server);
    try {
      const log = createJetStreamAuditLog({ nc });
      for (const call of [log.append(record()), log.list({})]) {
        const error = await rejection(call);
        expect(error.code).toBe("unavailable");
        expect(error.message).toMatch(/the audit log is not started$/);
      }
    } finally {
      await nc.close();
    }
  });

  test.each([
    [{ prefix: "a.b" }, /prefix "a.b"/],
    [{ maxBytes: 0 }, /maxBytes must be a positive integer/],
    [{ maxAgeMs: 1.5 }, /maxAgeMs must be a positive integer/],
  ])("refuses options %j", (options, message) => {
    expect(() =>
      createJetStreamAuditLog(
        { nc: undefined as unknown as NatsConnection },
        options,
      ),
    ).toThrow(message);
  });
});
