// A JetStream store that is full, on a real nats-server with an 8 MB file store and the hub over
// real gRPC: applying fails with RESOURCE_EXHAUSTED, deleting still works and frees space, and
// applying works again afterwards.
import { randomBytes } from "node:crypto";
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { callUnary, type wire } from "@flotilla/protocol";
import { startNatsServer, type NatsServer } from "@flotilla/testkit";
import {
  startJetStreamHub,
  type JetStreamHub,
} from "./jetstream-hub-harness.js";

/** nats-server configuration of a JetStream file store of 8 MB. */
export const SMALL_STORE = "jetstream { max_file_store: 8MB }\n";
/** The audit stream's limit in a small store (the default 1 GiB cannot be reserved there). */
export const SMALL_AUDIT_BYTES = 256 * 1024;

/** A bundle with one inline manifest of about `sizeBytes` random (incompressible) bytes. */
export function bigBundle(name: string, sizeBytes: number): wire.BundleSpec {
  const manifest = JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name },
    data: { blob: randomBytes(Math.ceil(sizeBytes / 2)).toString("hex") },
  });
  return {
    name,
    namespace: "web",
    manifests: [
      { path: "big.json", yaml: Buffer.from(manifest), content: "yaml" },
    ],
    targetsJson: JSON.stringify([{ clusterSelector: {} }]),
  };
}

/** Applies 1 MB bundles b0, b1, … until the store refuses one; resolves with that refusal. */
export async function fillStore(
  h: JetStreamHub,
): Promise<{ applied: string[]; refusal: FlotillaError }> {
  const applied: string[] = [];
  for (let i = 0; i < 20; i++) {
    const name = `b${String(i)}`;
    try {
      await h.apply(bigBundle(name, 1_000_000));
    } catch (error) {
      expect(error).toBeInstanceOf(FlotillaError);
      return { applied, refusal: error as FlotillaError };
    }
    applied.push(name);
  }
  throw new Error("the store never filled up");
}

async function fullHub(server: NatsServer): Promise<JetStreamHub> {
  return startJetStreamHub(server, { auditMaxBytes: SMALL_AUDIT_BYTES });
}

describe("a full JetStream store", () => {
  test("ApplyBundle answers RESOURCE_EXHAUSTED saying the store is full, not UNAVAILABLE", async () => {
    await using server = await startNatsServer({ config: SMALL_STORE });
    await using h = await fullHub(server);

    const { applied, refusal } = await fillStore(h);

    expect(applied.length).toBeGreaterThan(1);
    expect(refusal.code).toBe("resource_exhausted");
    expect(refusal.message).toMatch(
      /^Cannot store bundle content: the JetStream store is full \(insufficient resources\)/,
    );
    // Nothing of the refused bundle was stored.
    const listed = await callUnary(h.admin, "listBundles", {});
    expect(listed.bundles.map((b) => b.spec?.name)).toEqual(applied);
  });
});
