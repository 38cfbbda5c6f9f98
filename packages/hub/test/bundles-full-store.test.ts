// A JetStream store that is full, on a real nats-server with an 8 MB file store and the hub over
// real gRPC: applying fails with RESOURCE_EXHAUSTED, deleting still works and frees space, and
// applying works again afterwards.
import { randomBytes } from "node:crypto";
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { callUnary, type wire } from "@flotilla/protocol";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import {
  startJetStreamHub,
  type JetStreamHub,
} from "./jetstream-hub-harness.js";
import { connectScriptedAgent } from "./scripted-agent.js";

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

describe("deleting on a full JetStream store", () => {
  test("DeleteBundle succeeds, takes the bundle out of every intent, frees its content; applying works again", async () => {
    await using server = await startNatsServer({ config: SMALL_STORE });
    await using h = await fullHub(server);
    const agent = connectScriptedAgent(h.address);
    try {
      agent.hello("edge-1");
      await agent.next("welcome");
      const { applied, refusal } = await fillStore(h);
      expect(refusal.code).toBe("resource_exhausted");
      const victim = applied[0] ?? "";
      await waitFor(
        async () =>
          victim in ((await h.publisher.read("edge-1"))?.intent.bundles ?? {}),
        { timeoutMs: 10_000, message: `${victim} in edge-1's intent` },
      );

      await callUnary(h.admin, "deleteBundle", {
        name: victim,
        reason: "make room",
      });

      const listed = await callUnary(h.admin, "listBundles", {});
      expect(listed.bundles.map((b) => b.spec?.name)).toEqual(applied.slice(1));
      // Out of the intent; and with room again, the other bundles' rollouts go on.
      await waitFor(
        async () => {
          const intent = (await h.publisher.read("edge-1"))?.intent;
          expect(Object.keys(intent?.bundles ?? {}).sort()).toEqual(
            applied.slice(1).sort(),
          );
          return true;
        },
        { timeoutMs: 10_000, message: "edge-1's intent to hold the others" },
      );
      const audit = await callUnary(h.admin, "listAuditEvents", {
        filter: { method: "/flotilla.v1.AdminService/DeleteBundle" },
      });
      expect(audit.events.map((e) => [e.targetName, e.outcome])).toEqual([
        [victim, "AUDIT_OUTCOME_SUCCEEDED"],
      ]);

      // Its content (about 2 MB: the manifest and its rendered content) is gone: a bundle of
      // half its size fits again.
      await h.apply(bigBundle("after", 500_000));
      expect(
        (await callUnary(h.admin, "getBundle", { name: "after" })).bundle?.spec
          ?.name,
      ).toBe("after");
    } finally {
      agent.close();
    }
  });
});
