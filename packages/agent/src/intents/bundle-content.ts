/**
 * Fetching a bundle revision's content from the `flotilla-bundle-content` object store by its
 * digest (docs/agent-protocol.md, "Bundle content"); decoding it is protocol's parseBundleContent.
 */
import { FlotillaError } from "@flotilla/core";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  bundleContentBucket,
  bundleObjectName,
  DEFAULT_INTENTS_PREFIX,
  MAX_BUNDLE_CONTENT_BYTES,
  sha256Digest,
} from "@flotilla/protocol";
import { abortable, toNatsError } from "./nats-helpers.js";

/** Options of {@link getBundleContent}. */
export interface GetBundleContentOptions {
  readonly prefix?: string;
  readonly signal?: AbortSignal;
  /** Largest content accepted; default MAX_BUNDLE_CONTENT_BYTES. */
  readonly maxBytes?: number;
  /** How long each JetStream request may take; default 5000 ms. */
  readonly timeoutMs?: number;
}

/**
 * Fetches bundle content by digest from the object store and checks that it hashes to that
 * digest: `not_found` if absent, `failed_precondition` if larger than `maxBytes`, `internal` if
 * the stored bytes are not the content the digest names.
 */
export async function getBundleContent(
  deps: { readonly nc: NatsConnection },
  digest: string,
  options: GetBundleContentOptions = {},
): Promise<Uint8Array> {
  const { signal, maxBytes = MAX_BUNDLE_CONTENT_BYTES } = options;
  const name = bundleObjectName(digest);
  const what = `Cannot fetch bundle content ${digest}`;
  signal?.throwIfAborted();
  const js = jetstream(deps.nc, { timeout: options.timeoutMs ?? 5_000 });
  const bucket = bundleContentBucket(options.prefix ?? DEFAULT_INTENTS_PREFIX);
  let bytes: Uint8Array | null;
  try {
    // Not checked on open: a missing bucket shows in info() as a missing stream (not_found).
    const store = await abortable(new Objm(js).open(bucket, false), signal);
    const info = await abortable(store.info(name), signal);
    if (info === null || info.deleted) {
      throw new FlotillaError("not_found", `${what}: it is not stored`);
    }
    if (info.size > maxBytes) throw tooLarge(what, info.size, maxBytes);
    bytes = await abortable(store.getBlob(name), signal);
  } catch (error) {
    if (signal?.aborted && error === signal.reason) throw error;
    throw toNatsError(error, what);
  }
  if (bytes === null) {
    throw new FlotillaError("not_found", `${what}: it is not stored`);
  }
  if (bytes.byteLength > maxBytes)
    throw tooLarge(what, bytes.byteLength, maxBytes);
  const actual = sha256Digest(bytes);
  if (actual !== digest) {
    throw new FlotillaError(
      "internal",
      `${what}: the stored bytes hash to ${actual}; refusing them`,
    );
  }
  return bytes;
}

function tooLarge(what: string, size: number, maxBytes: number): FlotillaError {
  return new FlotillaError(
    "failed_precondition",
    `${what}: it is ${String(size)} bytes, more than the ${String(maxBytes)} accepted`,
  );
}
