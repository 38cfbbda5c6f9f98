// Reading an audit stream that holds messages which are not records (injected, damaged, or
// delivered onto the subject by someone else's consumer): ListAuditEvents and WatchAuditEvents
// over real gRPC, on a JetStream audit log in a real nats-server, skip every one of them, count
// each skip in flotilla_hub_audit_records_skipped_total and log it with its stream sequence.
import { expect, test } from "vitest";
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import { connect, nanos } from "@nats-io/transport-node";
import {
  callUnary,
  type createAdminServiceClient,
  type wire,
} from "@flotilla/protocol";
import { startNatsServer, waitFor } from "@flotilla/testkit";
import { auditHandlers } from "../src/audit/admin-audit.js";
import { createJetStreamAuditLog } from "../src/audit/jetstream-audit-log.js";
import { createHubMetrics } from "../src/metrics/metrics.js";
import { serveAdmin } from "./admin-test-server.js";
import { record } from "./audit-log.contract.js";
import { capturedLogger, metricSample } from "./captured-logger.js";

const STREAM = "flotilla-audit";
const SUBJECT = "flotilla.audit";

/** Every event of the log, page by page, with the size of each page. */
async function listAll(
  client: ReturnType<typeof createAdminServiceClient>,
  pageSize: number,
): Promise<{ events: wire.AuditEvent__Output[]; sizes: number[] }> {
  const events: wire.AuditEvent__Output[] = [];
  const sizes: number[] = [];
  let pageToken = "";
  do {
    const page = await callUnary(client, "listAuditEvents", {
      pageSize,
      pageToken,
    });
    events.push(...page.events);
    sizes.push(page.events.length);
    pageToken = page.nextPageToken;
  } while (pageToken !== "" && sizes.length < 50);
  return { events, sizes };
}

test("list and watch skip, count and log every stored message that is not a record", async () => {
  await using server = await startNatsServer();
  const nc = await connect({ servers: server.url });
  const captured = capturedLogger();
  const metrics = createHubMetrics({ defaultMetrics: false });
  const log = createJetStreamAuditLog(
    {
      nc,
      log: captured.log,
      onSkipped: (reason) => {
        metrics.auditRecordSkipped(reason);
      },
    },
    { timeoutMs: 2_000 },
  );
  await log.start();
  const { client, close } = await serveAdmin(auditHandlers(log));
  try {
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const real: string[] = [];
    const appendReal = async (): Promise<void> => {
      const name = `r${String(real.length)}`;
      await log.append(record({ targetName: name }));
      real.push(name);
    };

    await appendReal();
    // Bytes that are not UTF-8, and text that is not JSON.
    await js.publish(SUBJECT, new Uint8Array([0xff, 0xfe, 0x00, 0x9f]));
    await appendReal();
    await js.publish(SUBJECT, "not json");
    // JSON, but not a record.
    await js.publish(SUBJECT, JSON.stringify({ actor: 1 }));
    await appendReal();
    await js.publish(SUBJECT, "[]");
    await js.publish(SUBJECT, "null");
    await js.publish(
      SUBJECT,
      JSON.stringify(record({ message: "m".repeat(5_000) })),
    );
    await appendReal();

    // A push consumer that delivers onto the audit subject (another user of the account) stores
    // its messages in the audit stream under their own subject, and its idle heartbeats (status
    // messages with no body) under the audit subject.
    await jsm.streams.add({ name: "elsewhere", subjects: ["elsewhere"] });
    await js.publish("elsewhere", new Uint8Array(3_000).fill(7));
    await js.publish("elsewhere", new Uint8Array(2_000).fill(8));
    const deliverOnto = async (
      name: string,
      startSequence: number,
      heartbeats: boolean,
    ): Promise<number> => {
      const before = (await jsm.streams.info(STREAM)).state.messages;
      await jsm.consumers.add("elsewhere", {
        name,
        deliver_subject: SUBJECT,
        ack_policy: AckPolicy.None,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: startSequence,
        ...(heartbeats
          ? { idle_heartbeat: nanos(100), flow_control: true }
          : {}),
      });
      await waitFor(
        async () =>
          (await jsm.streams.info(STREAM)).state.messages >=
          before + (heartbeats ? 3 : 2),
        { timeoutMs: 10_000, message: `what ${name} delivers to be stored` },
      );
      await jsm.consumers.delete("elsewhere", name);
      return (await jsm.streams.info(STREAM)).state.messages - before - 2;
    };
    const heartbeats = await deliverOnto("with-heartbeats", 1, true);
    await appendReal();

    // A record-shaped message far over the size any record can have: stored once the stream's
    // message size limit has been lifted (the hub uses an existing stream as it is).
    await jsm.streams.update(STREAM, { max_msg_size: -1 });
    await js.publish(
      SUBJECT,
      JSON.stringify({ ...record(), padding: "p".repeat(64 * 1024) }),
    );
    for (let i = 0; i < 5; i++) await appendReal();
    // The last messages of the stream are not on the audit subject.
    await deliverOnto("last", 1, false);

    const { state } = await jsm.streams.info(STREAM);
    const skippedPerRead = state.messages - real.length;

    // Pages of 4 still hold 4 records each: skipped messages do not count toward a page.
    const listed = await listAll(client, 4);
    expect(listed.events.map((e) => e.targetName)).toEqual(real);
    expect(listed.sizes).toEqual([4, 4, 2]);

    const watch = client.watchAuditEvents({ afterSequence: 0 });
    const watched: wire.AuditEvent__Output[] = [];
    watch.on("data", (m: wire.WatchAuditEventsResponse__Output) => {
      if (m.event) watched.push(m.event);
    });
    watch.on("error", () => undefined);
    try {
      await waitFor(() => watched.length === real.length, {
        timeoutMs: 10_000,
        message: "the watch to deliver every stored record",
      });
      await appendReal();
      await waitFor(() => watched.length === real.length, {
        timeoutMs: 10_000,
        message: "the watch to deliver a record appended after the garbage",
      });
    } finally {
      watch.cancel();
    }
    expect(watched.map((e) => e.targetName)).toEqual(real);

    // Each skip is counted once per read that passed over it: once by the list, once by the watch.
    const text = await metrics.registry.metrics();
    const skipped = (reason: string): number | undefined =>
      metricSample(
        text,
        `flotilla_hub_audit_records_skipped_total{reason="${reason}"}`,
      );
    expect({
      foreign_subject: skipped("foreign_subject"),
      not_json: skipped("not_json"),
      invalid_record: skipped("invalid_record"),
      status_message: skipped("status_message"),
      oversized: skipped("oversized"),
    }).toEqual({
      foreign_subject: 2 * 4,
      not_json: 2 * 2,
      invalid_record: 2 * 4,
      status_message: 2 * heartbeats,
      oversized: 2,
    });
    expect(skippedPerRead).toBe(4 + 2 + 4 + heartbeats + 1);

    const warnings = captured.lines.filter(
      (l) => l["msg"] === "Skipped an audit record that is not valid",
    );
    expect(warnings).toHaveLength(2 * skippedPerRead);
    expect(warnings[0]).toMatchObject({
      level: 40,
      component: "audit-log",
      stream: STREAM,
      sequence: 2,
      reason: "not_json",
      detail: expect.stringMatching(/^not UTF-8 JSON: /) as unknown,
    });
  } finally {
    close();
    await log.stop();
    await nc.close();
  }
}, 60_000);
