// Stands in for the hub's intent publisher: creates the intents bucket and the bundle-content
// object store as the hub does (settings from @flotilla/protocol) and writes into them, content
// sealed and intents carrying the keys, as the hub writes them.
import { randomBytes } from "node:crypto";
import type { ClusterIntent } from "@flotilla/core";
import { jetstream } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { Objm, type ObjectStore } from "@nats-io/obj";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  bundleContentBucket,
  deriveContentKey,
  encodeBundleContent,
  encodeIntentDocument,
  intentsBucketSettings,
  sealContent,
  sealedObjectName,
  sha256Digest,
  type BundleContent,
} from "@flotilla/protocol";

/** Connects to a test nats-server the way agents do (reconnecting for ever). */
export function connectTo(url: string): Promise<NatsConnection> {
  return connect({
    servers: url,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 50,
  });
}

/** The hub's side of intents, for tests. */
export class TestIntents {
  readonly #secret = randomBytes(32);

  private constructor(
    readonly kv: KV,
    readonly store: ObjectStore,
  ) {}

  /** The key the hub would give content `digest`. */
  keyOf(digest: string): string {
    return deriveContentKey(this.#secret, digest);
  }

  static async open(nc: NatsConnection, prefix: string): Promise<TestIntents> {
    const js = jetstream(nc);
    const { bucket, ...settings } = intentsBucketSettings(prefix);
    const kv = await new Kvm(js).create(bucket, settings);
    const store = await new Objm(js).create(bundleContentBucket(prefix));
    return new TestIntents(kv, store);
  }

  /** Stores bundle content sealed; resolves with its digest. */
  async putContent(content: BundleContent): Promise<string> {
    const bytes = encodeBundleContent(content);
    const digest = sha256Digest(bytes);
    const key = this.keyOf(digest);
    await this.store.putBlob(
      { name: sealedObjectName(key) },
      sealContent(bytes, key, digest),
    );
    return digest;
  }

  /** Publishes `intent`, giving each bundle entry without a key the key of its digest. */
  publish(intent: ClusterIntent): Promise<number> {
    const keyed: ClusterIntent = {
      ...intent,
      bundles: Object.fromEntries(
        Object.entries(intent.bundles).map(([name, b]) => [
          name,
          { ...b, key: b.key ?? this.keyOf(b.digest) },
        ]),
      ),
    };
    return this.kv.put(intent.cluster, encodeIntentDocument(keyed).bytes);
  }
}

/** A small bundle revision: one ConfigMap and one Deployment. */
export function bundleContent(bundle: string, revision: string): BundleContent {
  return {
    apiVersion: "flotilla.dev/v1",
    kind: "BundleContent",
    bundle,
    revision,
    namespace: "apps",
    resources: [
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `${bundle}-config` },
        data: { revision },
      },
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: bundle },
        spec: { replicas: 2 },
      },
    ],
  };
}
