/**
 * The intents KV bucket (`<prefix>-intents`): opening it, creating it when missing with the
 * settings agents rely on (one value per key, republished on `<prefix>.intents.<cluster>`).
 */
import { FlotillaError, showValue } from "@flotilla/core";
import { StorageType, type JetStreamClient } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import type { intentsBucketSettings } from "@flotilla/protocol";

/**
 * Opens (creates if missing) the intents bucket. An existing bucket is used as it is, unless it
 * does not republish as agents expect: then they would hear nothing, and `what` is refused.
 */
export async function openIntentsBucket(
  js: JetStreamClient,
  settings: ReturnType<typeof intentsBucketSettings>,
  replicas: number,
  what: string,
): Promise<KV> {
  const kv = await new Kvm(js).create(settings.bucket, {
    history: settings.history,
    maxValueSize: settings.maxValueSize,
    republish: settings.republish,
    storage: StorageType.File,
    replicas,
    description: "flotilla intents: one key per cluster",
  });
  const { republish } = await kv.status();
  if (
    republish.src !== settings.republish.src ||
    republish.dest !== settings.republish.dest
  ) {
    throw new FlotillaError(
      "failed_precondition",
      `${what}: bucket "${settings.bucket}" republishes ${showValue(republish)}, not ${showValue(settings.republish)}; update its stream or delete the bucket`,
    );
  }
  return kv;
}
