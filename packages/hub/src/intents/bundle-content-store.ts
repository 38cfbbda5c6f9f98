/**
 * The hub's side of the bundle-content object store: opening (creating) it so that agents can read
 * objects with direct gets, storing content sealed with its key under a name derived from the key
 * (docs/security.md, "Bundle content"; bundle-content-seal.ts in @flotilla/protocol), and listing
 * and removing what is stored (content nothing references is collected:
 * bundles/content-collector.ts).
 */
import { createHash } from "node:crypto";
import { FlotillaError } from "@flotilla/core";
import {
  JetStreamApiCodes,
  JetStreamApiError,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StoredMsg,
} from "@nats-io/jetstream";
import { Base64UrlPaddedCodec, Objm, type ObjectStore } from "@nats-io/obj";
import {
  bundleContentBucket,
  isSha256Digest,
  openContent,
  sealContent,
  sealedObjectName,
  sha256Digest,
} from "@flotilla/protocol";
import { z } from "zod";
import type { ContentKeys } from "../security/content-keys.js";
import { abortable } from "@flotilla/node";
import { checkContentSize, type StoredContent } from "./intent-publisher.js";

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

/** The stream behind an object store (nats.js names it `OBJ_<bucket>`). */
export function objectStream(bucket: string): string {
  return `OBJ_${bucket}`;
}

/** What an object's metadata message says (nats.js writes it as JSON). */
const objectMetaSchema = z.object({
  name: z.string(),
  nuid: z.string(),
  size: z.number(),
  mtime: z.string(),
  deleted: z.boolean().optional(),
});

/**
 * Everything in the object store `bucket`: each object (its metadata subject and its chunks'
 * subject), each deleted object's leftover metadata, and chunks no live object names (an upload
 * cut short, or an old version a replacement did not clean up). Read from the stream's subjects
 * and the last message of each metadata subject, so it works on a full store.
 */
export async function listStoredContent(
  jsm: JetStreamManager,
  bucket: string,
): Promise<StoredContent[]> {
  const stream = objectStream(bucket);
  const metaPrefix = `$O.${bucket}.M.`;
  const chunkPrefix = `$O.${bucket}.C.`;
  const { state } = await jsm.streams.info(stream, {
    subjects_filter: `$O.${bucket}.>`,
  });
  const subjects = Object.entries(state.subjects ?? {});
  const unclaimed = new Map(
    subjects
      .filter(([subject]) => subject.startsWith(chunkPrefix))
      .map(([subject, count]) => [subject, count]),
  );
  const stored: StoredContent[] = [];
  for (const [subject] of subjects) {
    if (!subject.startsWith(metaPrefix)) continue;
    const message = await lastMessage(jsm, stream, subject);
    if (message === undefined) continue;
    const meta = objectMetaSchema.safeParse(message.json());
    if (!meta.success || meta.data.deleted === true) {
      stored.push({
        id: contentId([subject]),
        name: undefined,
        storedAtMs: message.time.getTime(),
        sizeBytes: message.data.byteLength,
      });
      continue;
    }
    const chunks = `${chunkPrefix}${meta.data.nuid}`;
    unclaimed.delete(chunks);
    const mtime = Date.parse(meta.data.mtime);
    stored.push({
      id: contentId([subject, chunks]),
      name: meta.data.name,
      storedAtMs: Number.isNaN(mtime) ? message.time.getTime() : mtime,
      sizeBytes: meta.data.size,
    });
  }
  for (const [subject, count] of unclaimed) {
    const last = await lastMessage(jsm, stream, subject);
    if (last === undefined) continue;
    stored.push({
      id: contentId([subject]),
      name: undefined,
      storedAtMs: last.time.getTime(),
      sizeBytes: count * last.data.byteLength,
    });
  }
  return stored;
}

/**
 * Removes stored content message by message: metadata first (readers then find nothing), then
 * chunks. A deletion writes no message, so it frees space even when the store is full. Not a
 * purge by subject: nats-server 2.9 does not give the space such a purge frees back to the
 * store's accounting, so a full store stayed full after it.
 */
export async function removeStoredContent(
  jsm: JetStreamManager,
  bucket: string,
  ids: readonly string[],
): Promise<void> {
  const stream = objectStream(bucket);
  for (const id of ids) {
    for (const subject of subjectsOf(id, bucket)) {
      for (let seq = 1; ;) {
        const message = await nextMessage(jsm, stream, subject, seq);
        if (message === undefined) break;
        await jsm.streams.deleteMessage(stream, message.seq, false);
        seq = message.seq + 1;
      }
    }
  }
}

function contentId(subjects: readonly string[]): string {
  return JSON.stringify(subjects);
}

/** The subjects an id names; only subjects of `bucket` (an id from elsewhere is refused). */
function subjectsOf(id: string, bucket: string): string[] {
  let subjects: unknown;
  try {
    subjects = JSON.parse(id);
  } catch {
    subjects = undefined;
  }
  if (
    !Array.isArray(subjects) ||
    !subjects.every(
      (s): s is string =>
        typeof s === "string" &&
        (s.startsWith(`$O.${bucket}.M.`) || s.startsWith(`$O.${bucket}.C.`)),
    )
  ) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot remove bundle content ${JSON.stringify(id.slice(0, 200))}: it is not an id listBundleContent gave`,
    );
  }
  return subjects;
}

/** The last message on `subject`, or undefined when there is none (removed meanwhile). */
function lastMessage(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
): Promise<StoredMsg | undefined> {
  return found(jsm.streams.getMessage(stream, { last_by_subj: subject }));
}

/** The first message on `subject` from sequence `seq` on, or undefined when there is none. */
function nextMessage(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
  seq: number,
): Promise<StoredMsg | undefined> {
  return found(jsm.direct.getMessage(stream, { seq, next_by_subj: subject }));
}

async function found(
  request: Promise<StoredMsg | null>,
): Promise<StoredMsg | undefined> {
  try {
    return (await request) ?? undefined;
  } catch (error) {
    if (
      error instanceof JetStreamApiError &&
      error.code === JetStreamApiCodes.NoMessageFound
    ) {
      return undefined;
    }
    throw error;
  }
}
