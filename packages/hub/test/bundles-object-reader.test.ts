// The JetStream ObjectReader against a real nats-server: reads what the intent publisher stored.
import { randomBytes } from "node:crypto";
import { contentKeysOfSecret } from "../src/security/content-keys.js";
import { describe, expect, test } from "vitest";
import { connect } from "@nats-io/transport-node";
import { sha256Digest } from "@flotilla/protocol";
import { startNatsServer } from "@flotilla/testkit";
import { createJetStreamIntentPublisher } from "../src/intents/jetstream-intent-publisher.js";
import {
  createJetStreamObjectReader,
  objectReaderOf,
} from "../src/bundles/object-reader.js";

describe("createJetStreamObjectReader", () => {
  test("reads bytes stored by putBundleContent; an unknown digest is undefined", async () => {
    await using server = await startNatsServer();
    const nc = await connect({ servers: server.url });
    try {
      const contentKeys = contentKeysOfSecret(randomBytes(32));
      const publisher = createJetStreamIntentPublisher(
        { nc, contentKeys },
        { prefix: "objr" },
      );
      await publisher.start();
      const bytes = new TextEncoder().encode("kind: ConfigMap\n");
      const digest = await publisher.putBundleContent(bytes);
      const reader = createJetStreamObjectReader(
        { nc, contentKeys },
        { prefix: "objr" },
      );
      expect(new Uint8Array((await reader.read(digest)) ?? [])).toEqual(bytes);
      expect(await reader.read(sha256Digest("never stored"))).toBeUndefined();
      await publisher.stop();
    } finally {
      await nc.close();
    }
  });

  test("refuses bytes that do not hash to the digest asked for", async () => {
    const reader = objectReaderOf(() => new Uint8Array([1, 2, 3]));
    await expect(reader.read(sha256Digest("other"))).rejects.toMatchObject({
      code: "internal",
    });
  });
});
