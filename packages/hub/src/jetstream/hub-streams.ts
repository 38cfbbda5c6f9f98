/**
 * Every JetStream stream the hub creates, under the names an operator sees: the state store's KV
 * buckets, the intents bucket, the bundle-content object store and the audit stream. What applies
 * to all of them at once (their replica count, docs/running.md) is checked against this list.
 */
import { bundleContentBucket, intentsBucket } from "@flotilla/protocol";
import { auditStreamName } from "../audit/audit-stream.js";
import { objectStream } from "../intents/bundle-content-store.js";
import {
  bucketName,
  COLLECTION_NAMES,
  kvStreamName,
  leasesBucketName,
} from "../store/keys.js";

/** One stream: what it is to a user (`KV bucket "flotilla-runs"`) and the stream's own name. */
export interface HubStream {
  readonly label: string;
  readonly stream: string;
}

/**
 * The streams of a hub with state prefix `statePrefix` publishing intents under `intentsPrefix`.
 */
export function hubStreams(
  statePrefix: string,
  intentsPrefix: string,
): HubStream[] {
  const kv = (bucket: string): HubStream => ({
    label: `KV bucket "${bucket}"`,
    stream: kvStreamName(bucket),
  });
  const content = bundleContentBucket(intentsPrefix);
  return [
    ...COLLECTION_NAMES.map((name) => kv(bucketName(statePrefix, name))),
    kv(intentsBucket(intentsPrefix)),
    kv(leasesBucketName(statePrefix)),
    { label: `object store "${content}"`, stream: objectStream(content) },
    {
      label: `stream "${auditStreamName(statePrefix)}"`,
      stream: auditStreamName(statePrefix),
    },
  ];
}
