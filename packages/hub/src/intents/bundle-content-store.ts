/**
 * The hub's side of the bundle-content object store: opening (creating) it so that agents can read
 * objects with direct gets, and storing content sealed with its key under a name derived from the
 * key (docs/security.md, "Bundle content"; bundle-content-seal.ts in @flotilla/protocol).
 */
import { createHash } from "node:crypto";
import { StorageType, type JetStreamClient } from "@nats-io/jetstream";
import { Base64UrlPaddedCodec, Objm, type ObjectStore } from "@nats-io/obj";
import {
  bundleContentBucket,
  isSha256Digest,
  openContent,
  sealContent,
  sealedObjectName,
  sha256Digest,
} from "@flotilla/protocol";
import type { ContentKeys } from "../security/content-keys.js";
import { abortable } from "../store/state-store.js";
import { checkContentSize } from "./intent-publisher.js";

/**
 * Opens the object store of bundle content, `<prefix>-bundle-content` (file storage), creating it
 * if missing. Agents read an object's metadata and chunks with JetStream direct gets, the only
 * reads their NATS users may make (agent-nats-permissions.ts in @flotilla/protocol). nats.js
 * creates object stores with `allow_direct`; a store created without it (another client, an older
 * tool) is updated to allow direct gets, its content untouched.
 */
export async function openBundleContentStore(
  js: JetStreamClient,
  prefix: string,
  replicas: number,
): Promise<ObjectStore> {
  const store = await new Objm(js).create(bundleContentBucket(prefix), {
    storage: StorageType.File,
    replicas,
    description: "flotilla bundle content, sealed per content",
  });
  const { config } = (await store.status()).streamInfo;
  if (!config.allow_direct) {
    const jsm = await js.jetstreamManager();
    await jsm.streams.update(config.name, { allow_direct: true });
  }
  return store;
}

/**
 * Stores `content` sealed with its key and returns its digest. Idempotent: content already
 * stored intact is not uploaded again (sealing is deterministic, so the object store's own
 * checksum tells); an object under the name whose bytes differ is replaced.
 */
export async function putBundleContent(
  objects: ObjectStore,
  keys: ContentKeys,
  content: Uint8Array,
  signal: AbortSignal | undefined,
): Promise<string> {
  checkContentSize(content);
  const digest = sha256Digest(content);
  const key = keys.keyOf(digest);
  const name = sealedObjectName(key);
  const sealed = sealContent(content, key, digest);
  const checksum = `SHA-256=${Base64UrlPaddedCodec.encode(createHash("sha256").update(sealed).digest())}`;
  const info = await abortable(objects.info(name), signal);
  if (info?.deleted === false && info.digest === checksum) return digest;
  await abortable(objects.putBlob({ name }, sealed), signal);
  return digest;
}

/**
 * Seals what an earlier version stored in clear (an object named by its digest): each is stored
 * sealed, then deleted. Returns how many were sealed. An object whose bytes do not hash to its
 * name is left alone (it is not content this hub wrote).
 */
export async function sealLegacyContent(
  objects: ObjectStore,
  keys: ContentKeys,
  signal: AbortSignal | undefined,
): Promise<number> {
  let sealed = 0;
  for (const info of await abortable(objects.list(), signal)) {
    if (info.deleted || !isSha256Digest(info.name)) continue;
    const bytes = await abortable(objects.getBlob(info.name), signal);
    if (bytes === null || sha256Digest(bytes) !== info.name) continue;
    const digest = await putBundleContent(objects, keys, bytes, signal);
    // Read back before the clear copy goes: the sealed one must open.
    const key = keys.keyOf(digest);
    const stored = await abortable(
      objects.getBlob(sealedObjectName(key)),
      signal,
    );
    if (stored === null) continue;
    openContent(stored, key, digest);
    await abortable(objects.delete(info.name), signal);
    sealed++;
  }
  return sealed;
}
