// When the audit stream refuses a record (its limits, a full store, NATS down), the admin call
// still answers its own outcome, and the record is written whole to the hub's log and counted in
// flotilla_hub_audit_write_failures_total. A real nats-server, the hub over real gRPC.
import { expect, test } from "vitest";
import { DiscardPolicy, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { callUnary } from "@flotilla/protocol";
import { startNatsServer, waitFor } from "@flotilla/testkit";
import { rejection } from "./audit-log.contract.js";
import { bundleSpec } from "./bundles-fixtures.js";
import { startJetStreamHub } from "./jetstream-hub-harness.js";

const FALLBACK = "Audit record not stored: written to the log instead";

test("a record the audit stream refuses is logged whole and counted; the call answers as it would", async () => {
  await using server = await startNatsServer();
  // An operator's audit stream that takes one record and then refuses new ones.
  {
    const nc = await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({
      name: "flotilla-audit",
      subjects: ["flotilla.audit"],
      discard: DiscardPolicy.New,
      max_msgs: 1,
    });
    await nc.close();
  }
  await using h = await startJetStreamHub(server);

  await h.apply(bundleSpec({ name: "first" }));
  expect(h.logs.filter((l) => l["msg"] === FALLBACK)).toEqual([]);

  // Succeeds, but its record no longer fits.
  const applied = await h.apply(bundleSpec({ name: "second" }));
  expect(applied.bundle?.spec?.name).toBe("second");
  // Refused, and its record does not fit either: the refusal is what the caller sees.
  const refused = await rejection(
    h.apply(bundleSpec({ name: "third", targetsJson: "{" })),
  );
  expect(refused.code).toBe("invalid_argument");

  const fallbacks = h.logs.filter((l) => l["msg"] === FALLBACK);
  expect(fallbacks).toHaveLength(2);
  expect(fallbacks[0]).toMatchObject({
    level: 50,
    component: "audit",
    audit: {
      actor: expect.stringMatching(/^anonymous@127\.0\.0\.1:/) as unknown,
      role: "admin",
      method: "/flotilla.v1.AdminService/ApplyBundle",
      targetKind: "Bundle",
      targetName: "second",
      reason: "test",
      outcome: "Succeeded",
      message: "",
    },
    err: {
      message: expect.stringMatching(
        /^Cannot append to the audit log .*: the JetStream store is full \(maximum messages exceeded\)/,
      ) as unknown,
    },
  });
  expect(fallbacks[1]).toMatchObject({
    audit: {
      targetName: "third",
      outcome: "Failed",
      errorCode: "invalid_argument",
      message: expect.stringMatching(
        /^Invalid bundle: bundle.targets: is not valid JSON/,
      ) as unknown,
    },
  });
  expect(
    await h.sample(
      'flotilla_hub_audit_write_failures_total{code="resource_exhausted"}',
    ),
  ).toBe(2);
  // Only the first call's record is in the stream.
  const listed = await callUnary(h.admin, "listAuditEvents", {});
  expect(listed.events.map((e) => e.targetName)).toEqual(["first"]);
});

test("while NATS is down, a call's record is logged whole and counted as unavailable", async () => {
  await using server = await startNatsServer();
  await using h = await startJetStreamHub(server);
  await server.halt();

  // The bundle does not exist: the hub knows without NATS, and says so.
  const error = await rejection(
    callUnary(h.admin, "deleteBundle", { name: "absent", reason: "cleanup" }),
  );
  expect(error.code).toBe("not_found");

  const fallback = await waitFor(
    () => h.logs.find((l) => l["msg"] === FALLBACK),
    { timeoutMs: 10_000, message: "the record in the hub's log" },
  );
  expect(fallback).toMatchObject({
    audit: {
      method: "/flotilla.v1.AdminService/DeleteBundle",
      targetName: "absent",
      reason: "cleanup",
      outcome: "Failed",
      errorCode: "not_found",
    },
  });
  expect(
    await h.sample(
      'flotilla_hub_audit_write_failures_total{code="unavailable"}',
    ),
  ).toBe(1);
});
