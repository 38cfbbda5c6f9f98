// Collecting bundle content that nothing references, on a real nats-server with the hub over real
// gRPC: what an apply that failed halfway stored goes at once; content a bundle references stays;
// an upload no apply used stays for the grace period, and goes at the first collection after it.
import { expect, test } from "vitest";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { Objm } from "@nats-io/obj";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  bundleContentBucket,
  fromGrpcError,
  SEALING_OVERHEAD_BYTES,
  sha256Digest,
  type wire,
} from "@flotilla/protocol";
import { startNatsServer, waitFor } from "@flotilla/testkit";
import { rejection } from "./audit-log.contract.js";
import { bundleSpec, configMap } from "./bundles-fixtures.js";
import { startJetStreamHub } from "./jetstream-hub-harness.js";

const HOUR_MS = 3_600_000;

/** The names of the objects in the bundle-content store, sorted. */
async function storedObjects(nc: NatsConnection): Promise<string[]> {
  const objects = await new Objm(jetstream(nc)).open(
    bundleContentBucket("flotilla"),
  );
  return (await objects.list()).map((info) => info.name).sort();
}

/** Uploads `bytes` with PutObject as the CLI does. */
function putObject(
  client: wire.AdminServiceClient,
  bytes: Uint8Array,
): Promise<wire.PutObjectResponse__Output> {
  return new Promise((resolve, reject) => {
    const call = client.putObject((error, response) => {
      if (error !== null) reject(fromGrpcError(error));
      else if (response === undefined) reject(new Error("no response"));
      else resolve(response);
    });
    call.write({
      header: { digest: sha256Digest(bytes), sizeBytes: bytes.byteLength },
    });
    call.write({ chunk: bytes });
    call.end();
  });
}

test("a failed apply's content is collected at once, referenced content stays, an unused upload goes after the grace", async () => {
  await using server = await startNatsServer();
  // A bundles bucket that holds one record: the second apply stores its content, and then its
  // record is refused, as when the store fills up between the two.
  {
    const nc = await connect({ servers: server.url });
    await new Kvm(jetstream(nc)).create("flotilla-bundles");
    const jsm = await jetstream(nc).jetstreamManager();
    await jsm.streams.update("KV_flotilla-bundles", { max_msgs: 1 });
    await nc.close();
  }
  let offsetMs = 0;
  await using h = await startJetStreamHub(server, {
    now: () => Date.now() + offsetMs,
    contentGc: { intervalMs: 200, graceMs: HOUR_MS },
  });

  const upload = new TextEncoder().encode(configMap("uploaded", "later"));
  const uploaded = await putObject(h.admin, upload);
  // Sealed content is stored under a name derived from its key (docs/security.md).
  const uploadName = h.publisher.contentName(uploaded.object?.digest ?? "");
  await h.apply(bundleSpec({ name: "keep", version: "1" }));
  const before = await storedObjects(h.nc);
  // keep's manifest and rendered content, and the upload.
  expect(before).toHaveLength(3);
  expect(before).toContain(uploadName);

  const refused = await rejection(
    h.apply(bundleSpec({ name: "doomed", version: "2" })),
  );
  expect(refused.code).toBe("resource_exhausted");
  // doomed's manifest and rendered content were stored, and removed when its record was refused.
  expect(await storedObjects(h.nc)).toEqual(before);

  // Collections keep running; until the grace has passed they keep the upload.
  const runs = (): number =>
    h.logs.filter((l) => l["msg"] === "Collected unreferenced bundle content")
      .length;
  const seen = runs();
  await waitFor(() => runs() >= seen + 2, {
    timeoutMs: 10_000,
    message: "two more collections",
  });
  expect(await storedObjects(h.nc)).toEqual(before);

  offsetMs = 2 * HOUR_MS;
  await waitFor(async () => !(await storedObjects(h.nc)).includes(uploadName), {
    timeoutMs: 10_000,
    message: "the unused upload to be collected",
  });
  expect(await storedObjects(h.nc)).toEqual(
    before.filter((name) => name !== uploadName),
  );
  const collected = h.logs.find(
    (l) =>
      l["msg"] === "Collected unreferenced bundle content" &&
      l["objects"] === 1,
  );
  expect(collected).toMatchObject({
    level: 30,
    component: "bundles",
    sizeBytes: upload.byteLength + SEALING_OVERHEAD_BYTES,
  });
});
