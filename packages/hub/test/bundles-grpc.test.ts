// The bundle handlers over real gRPC (grpc-js on 127.0.0.1:0): refusals carry the problems
// trailer, PutObject uploads are checked and referenced by ApplyBundle, calls are audited.

import { describe, expect, test } from "vitest";
import { status, type ServiceError } from "@grpc/grpc-js";
import type { createAdminServiceClient } from "@flotilla/protocol";
import {
  callUnary,
  fromGrpcError,
  sha256Digest,
  type wire,
} from "@flotilla/protocol";
import { PROBLEMS_METADATA_KEY } from "@flotilla/protocol/testing";
import { pino } from "pino";
import { createBundleService } from "../src/bundles/bundle-service.js";
import { objectReaderOf } from "../src/bundles/object-reader.js";
import { createMemoryAuditLog } from "../src/audit/memory-audit-log.js";
import { serveAdmin } from "./admin-test-server.js";
import {
  bundleSpec,
  clusters,
  configMap,
  contentKeys,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

type AdminClient = ReturnType<typeof createAdminServiceClient>;

async function startServer(h: Harness) {
  const audit = createMemoryAuditLog();
  await audit.start();
  // The service as the hub builds it, on the harness's store, intents and fleet.
  const service = createBundleService({
    store: h.store,
    intents: h.intents,
    publisher: h.publisher,
    directory: h.fleet,
    logger: pino({ level: "silent" }),
    objects: objectReaderOf((digest) => h.publisher.bundleContent(digest)),
    contentKeys,
    audit,
    now: () => h.nowMs,
    onAuditError: (e: unknown) => {
      throw e;
    },
  });
  await service.start();
  const { client, close } = await serveAdmin(service.handlers);
  return {
    client,
    audit,
    service,
    async [Symbol.asyncDispose]() {
      close();
      await service.stop();
      await audit.stop();
    },
  };
}

/** The raw gRPC error of an ApplyBundle. */
function applyError(
  client: AdminClient,
  request: wire.ApplyBundleRequest,
): Promise<ServiceError> {
  return new Promise((resolve, reject) => {
    client.applyBundle(request, (error) => {
      if (error === null) reject(new Error("accepted"));
      else resolve(error);
    });
  });
}

/** Uploads `bytes` with PutObject, in chunks of `chunkBytes`, announcing `header`. */
function putObject(
  client: AdminClient,
  bytes: Uint8Array,
  header: wire.ObjectRef,
  chunkBytes = 16,
): Promise<wire.PutObjectResponse__Output> {
  return new Promise((resolve, reject) => {
    const call = client.putObject((error, response) => {
      if (error !== null) reject(fromGrpcError(error));
      else if (response === undefined) reject(new Error("no response"));
      else resolve(response);
    });
    call.write({ header });
    for (let offset = 0; offset < bytes.byteLength; offset += chunkBytes) {
      call.write({ chunk: bytes.subarray(offset, offset + chunkBytes) });
    }
    call.end();
  });
}

describe("bundle admin handlers over gRPC", () => {
  test("a bad spec is INVALID_ARGUMENT with the field paths in the problems trailer", async () => {
    await using h = await startHarness(clusters(2));
    await using hub = await startServer(h);
    const bad = bundleSpec({
      targets: [{ clusterSelector: "env in (prod" }],
      strategy: { maxNew: -1 },
    });
    const error = await applyError(hub.client, { bundle: bad, reason: "try" });
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.metadata.get(PROBLEMS_METADATA_KEY)).toHaveLength(1);
    const flotilla = fromGrpcError(error);
    expect(flotilla.problems.map((p) => p.path)).toEqual([
      "bundle.targets[0].clusterSelector",
      "bundle.rolloutStrategy.maxNew",
    ]);
    expect(flotilla.problems[0]?.value).toBe("env in (prod");
    // Nothing stored, and the refusal is audited.
    expect((await callUnary(hub.client, "listBundles", {})).bundles).toEqual(
      [],
    );
    const { events } = await hub.audit.list({ targetKind: "Bundle" });
    expect(
      events.map((e) => [e.method, e.targetName, e.outcome, e.errorCode]),
    ).toEqual([
      [
        "/flotilla.v1.AdminService/ApplyBundle",
        "web",
        "Failed",
        "invalid_argument",
      ],
    ]);
  });

  test("PutObject stores a checked upload that ApplyBundle references; Get and List show it", async () => {
    await using h = await startHarness(clusters(2));
    await using hub = await startServer(h);
    const bytes = Buffer.from(configMap("7"));
    const digest = sha256Digest(bytes);
    const { object } = await putObject(hub.client, bytes, {
      digest,
      sizeBytes: bytes.byteLength,
    });
    expect(object).toEqual({ digest, sizeBytes: bytes.byteLength });

    const applied = await callUnary(hub.client, "applyBundle", {
      bundle: bundleSpec({
        manifests: [
          {
            path: "deploy/app.json",
            object: { digest, sizeBytes: bytes.byteLength },
            content: "object",
          },
        ],
      }),
      reason: "ship",
    });
    expect(applied.changed).toBe(true);
    expect(applied.bundle?.spec?.manifests).toEqual([
      {
        path: "deploy/app.json",
        object: { digest, sizeBytes: bytes.byteLength },
        content: "object",
      },
    ]);
    await hub.service.idle();

    const got = await callUnary(hub.client, "getBundle", { name: "web" });
    expect(got.bundle?.revision).toBe(applied.bundle?.revision);
    expect(
      got.clusters.map((c) => [c.cluster, c.state, c.releasedRevision]),
    ).toEqual([
      ["c-00", "BUNDLE_CLUSTER_STATE_WAIT_APPLIED", applied.bundle?.revision],
      ["c-01", "BUNDLE_CLUSTER_STATE_WAIT_APPLIED", applied.bundle?.revision],
    ]);
    expect(got.partitions).toEqual([
      {
        name: "All",
        clusterCount: 2,
        maxUnavailable: 2,
        auto: true,
        unavailable: 2,
        notReadyCount: 2,
        notReady: false,
        gates: [],
      },
    ]);
    expect(got.limits).toEqual({
      maxUnavailable: 2,
      maxUnavailablePartitions: 0,
      maxNew: 50,
    });

    const listed = await callUnary(hub.client, "listBundles", { pageSize: 10 });
    expect(
      listed.bundles.map((b) => [
        b.spec?.name,
        b.counts?.targets,
        b.counts?.waitApplied,
      ]),
    ).toEqual([["web", 2, 2]]);
    await expect(
      callUnary(hub.client, "getBundle", { name: "nope" }),
    ).rejects.toMatchObject({
      code: "not_found",
    });
    await callUnary(hub.client, "deleteBundle", {
      name: "web",
      reason: "done",
    });
    const { events } = await hub.audit.list({});
    expect(events.map((e) => [e.method, e.targetKind, e.outcome])).toEqual([
      ["/flotilla.v1.AdminService/PutObject", "Object", "Succeeded"],
      ["/flotilla.v1.AdminService/ApplyBundle", "Bundle", "Succeeded"],
      ["/flotilla.v1.AdminService/DeleteBundle", "Bundle", "Succeeded"],
    ]);
  });

  test("PutObject refuses content that does not match its header", async () => {
    await using h = await startHarness();
    await using hub = await startServer(h);
    const bytes = Buffer.from(configMap("1"));
    const wrongDigest = sha256Digest("something else");
    await expect(
      putObject(hub.client, bytes, {
        digest: wrongDigest,
        sizeBytes: bytes.byteLength,
      }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [{ path: "header.digest" }],
    });
    await expect(
      putObject(hub.client, bytes, {
        digest: sha256Digest(bytes),
        sizeBytes: 5,
      }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [{ path: "chunk[0]" }],
    });
    expect(h.publisher.bundleContent(wrongDigest)).toBeUndefined();
    expect(h.publisher.bundleContent(sha256Digest(bytes))).toBeUndefined();
  });
});

describe("PauseBundle and ResumeBundle over gRPC", () => {
  test("pause and resume are audited with their reason and keep the revision; a bad name is INVALID_ARGUMENT", async () => {
    await using h = await startHarness(clusters(1));
    await using hub = await startServer(h);
    const applied = await callUnary(hub.client, "applyBundle", {
      bundle: bundleSpec(),
      reason: "first",
    });
    const paused = await callUnary(hub.client, "pauseBundle", {
      name: "web",
      reason: "incident 42",
    });
    expect(paused.changed).toBe(true);
    expect(paused.bundle?.spec?.paused).toBe(true);
    expect(paused.bundle?.revision).toBe(applied.bundle?.revision);
    const resumed = await callUnary(hub.client, "resumeBundle", {
      name: "web",
      reason: "fixed",
    });
    expect(resumed.bundle?.spec?.paused).toBe(false);
    await expect(
      callUnary(hub.client, "pauseBundle", { name: "Bad_Name", reason: "" }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [{ path: "name", value: "Bad_Name" }],
    });
    await expect(
      callUnary(hub.client, "resumeBundle", { name: "nope", reason: "" }),
    ).rejects.toMatchObject({ code: "not_found" });
    const { events } = await hub.audit.list({ targetKind: "Bundle" });
    expect(
      events.map((e) => [e.method.split("/").pop(), e.reason, e.outcome]),
    ).toEqual([
      ["ApplyBundle", "first", "Succeeded"],
      ["PauseBundle", "incident 42", "Succeeded"],
      ["ResumeBundle", "fixed", "Succeeded"],
      ["PauseBundle", "", "Failed"],
      ["ResumeBundle", "", "Failed"],
    ]);
  });
});
