/**
 * Fetching a bundle revision's content from the `flotilla-bundle-content` object store
 * (docs/agent-protocol.md, "Bundle content"); decoding it is protocol's parseBundleContent.
 *
 * The hub stores every content sealed with a key of its own, under a name derived from that key,
 * and puts the key only in the intents of the clusters the content is for (docs/security.md,
 * "Bundle content"). The agent reads with JetStream direct gets only, the one kind of read its
 * NATS user may make: the object's metadata is the last message on its meta subject
 * `$O.<bucket>.M.<name>`, and its chunks are the messages on `$O.<bucket>.C.<nuid>`, read one
 * after another by sequence. No consumer is created. Then it opens the content with the key and
 * checks that it is the content the digest names.
 */
import { FlotillaError } from "@flotilla/core";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { Base64UrlPaddedCodec } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import {
  bundleContentBucket,
  bundleContentStream,
  DEFAULT_INTENTS_PREFIX,
  MAX_BUNDLE_CONTENT_BYTES,
  openContent,
  SEALING_OVERHEAD_BYTES,
  sealedObjectName,
} from "@flotilla/protocol";
import { abortable } from "@flotilla/node";
import { toNatsError } from "./nats-helpers.js";

/** Where a bundle revision's content is: its digest and the key that opens it (from the intent). */
export interface BundleContentRef {
  readonly digest: string;
  readonly key: string;
}

/** Options of {@link getBundleContent}. */
export interface GetBundleContentOptions {
  readonly prefix?: string;
  readonly signal?: AbortSignal;
  /** Largest content accepted; default MAX_BUNDLE_CONTENT_BYTES. */
  readonly maxBytes?: number;
  /** How long each JetStream request may take; default 5000 ms. */
  readonly timeoutMs?: number;
}

/** What the reader needs of an object's metadata (the object store's JSON, other fields ignored). */
const objectMeta = z.object({
  nuid: z.string().regex(/^[A-Za-z0-9]+$/),
  size: z.number().int().nonnegative(),
  deleted: z.boolean().optional(),
});
type ObjectMeta = z.infer<typeof objectMeta>;

/**
 * Fetches bundle content from the object store and opens it: `not_found` if absent,
 * `failed_precondition` if larger than `maxBytes`, `internal` if the stored bytes are not the
 * content the reference names (or the key does not open them), `unavailable` or
 * `deadline_exceeded` when NATS does not answer.
 */
export async function getBundleContent(
  deps: { readonly nc: NatsConnection },
  ref: BundleContentRef,
  options: GetBundleContentOptions = {},
): Promise<Uint8Array> {
  const { signal, maxBytes = MAX_BUNDLE_CONTENT_BYTES } = options;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const prefix = options.prefix ?? DEFAULT_INTENTS_PREFIX;
  const what = `Cannot fetch bundle content ${ref.digest}`;
  signal?.throwIfAborted();
  const name = sealedObjectName(ref.key);
  let sealed: Uint8Array;
  try {
    const jsm = await jetstreamManager(deps.nc, {
      checkAPI: false,
      timeout: timeoutMs,
    });
    const meta = await abortable(readMeta(jsm, prefix, name, what), signal);
    if (meta.size > maxBytes + SEALING_OVERHEAD_BYTES) {
      throw new FlotillaError(
        "failed_precondition",
        `${what}: it is ${String(meta.size - SEALING_OVERHEAD_BYTES)} bytes, more than the ${String(maxBytes)} accepted`,
      );
    }
    sealed = await readChunks(jsm, prefix, meta, what, signal);
  } catch (error) {
    if (signal?.aborted && error === signal.reason) throw error;
    throw toNatsError(error, what);
  }
  return openContent(sealed, ref.key, ref.digest);
}

/** The last message of `$O.<bucket>.M.<name>`, by a direct get that names it, parsed. */
async function readMeta(
  jsm: JetStreamManager,
  prefix: string,
  name: string,
  what: string,
): Promise<ObjectMeta> {
  const bucket = bundleContentBucket(prefix);
  // The object store's own encoding of names in subjects (padded base64url: one token).
  const message = await jsm.direct.getMessage(bundleContentStream(prefix), {
    last_by_subj: `$O.${bucket}.M.${Base64UrlPaddedCodec.encode(name)}`,
  });
  if (message === null) {
    throw new FlotillaError("not_found", `${what}: it is not stored`);
  }
  let parsed;
  try {
    parsed = objectMeta.safeParse(message.json());
  } catch (error) {
    throw new FlotillaError("internal", `${what}: its metadata is not JSON`, {
      cause: error,
    });
  }
  if (!parsed.success) {
    throw new FlotillaError(
      "internal",
      `${what}: its metadata is not an object store entry: ${parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}`,
    );
  }
  if (parsed.data.deleted === true) {
    throw new FlotillaError("not_found", `${what}: it is not stored`);
  }
  return parsed.data;
}

/**
 * The object's chunks in stream order, each the first message on its chunk subject after the
 * previous one: exactly `meta.size` bytes, or `internal`.
 */
async function readChunks(
  jsm: JetStreamManager,
  prefix: string,
  meta: ObjectMeta,
  what: string,
  signal: AbortSignal | undefined,
): Promise<Uint8Array> {
  const stream = bundleContentStream(prefix);
  const subject = `$O.${bundleContentBucket(prefix)}.C.${meta.nuid}`;
  const bytes = new Uint8Array(meta.size);
  let received = 0;
  let seq = 1;
  while (received < meta.size) {
    const chunk = await abortable(
      jsm.direct.getMessage(stream, { seq, next_by_subj: subject }),
      signal,
    );
    if (chunk === null) {
      throw new FlotillaError(
        "internal",
        `${what}: its chunks end after ${String(received)} of the ${String(meta.size)} bytes its metadata says`,
      );
    }
    if (received + chunk.data.byteLength > meta.size) {
      throw new FlotillaError(
        "internal",
        `${what}: its chunks hold more than the ${String(meta.size)} bytes its metadata says`,
      );
    }
    bytes.set(chunk.data, received);
    received += chunk.data.byteLength;
    seq = chunk.seq + 1;
  }
  return bytes;
}
