/**
 * The hub's side of the bundle-content object store: opening (creating) it so that agents can read
 * objects by name, and storing content under its digest.
 */
import { StorageType, type JetStreamClient } from "@nats-io/jetstream";
import { Base64UrlPaddedCodec, Objm, type ObjectStore } from "@nats-io/obj";
import {
  bundleContentBucket,
  bundleObjectName,
  sha256Digest,
} from "@flotilla/protocol";
import { abortable } from "../store/state-store.js";
import { checkContentSize } from "./intent-publisher.js";

/**
 * Opens the object store of bundle content, `<prefix>-bundle-content` (file storage), creating it
 * if missing. Agents fetch from it by digest (`getBundleContent` in @flotilla/agent), reading an
 * object's metadata with a JetStream direct get that names it: their NATS users may not read the
 * stream any other way (agentNatsPermissions of @flotilla/protocol). nats.js creates object
 * stores with `allow_direct`; a store created without it (another client, an older tool) is
 * updated to allow direct gets, its content untouched.
 */
export async function openBundleContentStore(
  js: JetStreamClient,
  prefix: string,
  replicas: number,
): Promise<ObjectStore> {
  const store = await new Objm(js).create(bundleContentBucket(prefix), {
    storage: StorageType.File,
    replicas,
    description: "flotilla bundle content by sha256 digest",
  });
  const { config } = (await store.status()).streamInfo;
  if (!config.allow_direct) {
    const jsm = await js.jetstreamManager();
    await jsm.streams.update(config.name, { allow_direct: true });
  }
  return store;
}

/**
 * Stores `content` under its digest and returns the digest. Idempotent: content already stored
 * is not uploaded again; an object under the name whose bytes differ (a foreign writer) is
 * replaced.
 */
export async function putBundleContent(
  objects: ObjectStore,
  content: Uint8Array,
  signal: AbortSignal | undefined,
): Promise<string> {
  checkContentSize(content);
  const digest = sha256Digest(content);
  const name = bundleObjectName(digest);
  // The object store records its own SHA-256 of what it holds: equal means already stored.
  const stored = `SHA-256=${Base64UrlPaddedCodec.encode(Buffer.from(digest.slice("sha256:".length), "hex"))}`;
  const info = await abortable(objects.info(name), signal);
  if (info?.deleted === false && info.digest === stored) return digest;
  await abortable(objects.putBlob({ name }, content), signal);
  return digest;
}
