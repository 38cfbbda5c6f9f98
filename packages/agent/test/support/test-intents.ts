// Stands in for the hub's intent publisher: creates the intents bucket and the bundle-content
// object store as the hub does (settings from @flotilla/protocol) and writes into them.
import type { ClusterIntent } from "@flotilla/core";
import { jetstream } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { Objm, type ObjectStore } from "@nats-io/obj";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  bundleContentBucket,
  encodeBundleContent,
  encodeIntentDocument,
  intentsBucketSettings,
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
  private constructor(
    readonly kv: KV,
    readonly store: ObjectStore,
  ) {}

  static async open(nc: NatsConnection, prefix: string): Promise<TestIntents> {
    const js = jetstream(nc);
    const { bucket, ...settings } = intentsBucketSettings(prefix);
    const kv = await new Kvm(js).create(bucket, settings);
    const store = await new Objm(js).create(bundleContentBucket(prefix));
    return new TestIntents(kv, store);
  }

  /** Stores bundle content; resolves with its digest. */
  async putContent(content: BundleContent): Promise<string> {
    const bytes = encodeBundleContent(content);
    const digest = sha256Digest(bytes);
    await this.store.putBlob({ name: digest }, bytes);
    return digest;
  }

  publish(intent: ClusterIntent): Promise<number> {
    return this.kv.put(intent.cluster, encodeIntentDocument(intent).bytes);
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
