/**
 * Reading objects back from the bundle-content object store: manifest files uploaded with
 * PutObject (stored there, sealed, by `IntentPublisher.putBundleContent`) that an ApplyBundle
 * references by digest. The IntentPublisher port only writes, so the bundle manager takes this
 * port beside it.
 */
import { FlotillaError } from "@flotilla/core";
import { jetstream } from "@nats-io/jetstream";
import { Objm, type ObjectStore } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  bundleContentBucket,
  DEFAULT_INTENTS_PREFIX,
  isSha256Digest,
  openContent,
  sealedObjectName,
  sha256Digest,
} from "@flotilla/protocol";
import type { ContentKeys } from "../security/content-keys.js";
import { abortable, toNatsFlotillaError } from "@flotilla/node";

/** Reads stored objects by digest. */
export interface ObjectReader {
  /**
   * The bytes stored under `digest` (`sha256:<hex>`), or undefined when nothing is. Bytes that do
   * not hash to the digest are `internal` (never handed out); an outage is `unavailable`.
   */
  read(
    digest: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<Uint8Array | undefined>;
}

/** An ObjectReader over a lookup (the memory publisher's `bundleContent`), checking digests. */
export function objectReaderOf(
  lookup: (digest: string) => Uint8Array | undefined,
): ObjectReader {
  return {
    read(digest) {
      const bytes = lookup(digest);
      return Promise.resolve().then(() =>
        bytes === undefined ? undefined : checked(digest, bytes),
      );
    },
  };
}

/** Options of {@link createJetStreamObjectReader}. */
export interface JetStreamObjectReaderOptions {
  /** The intents prefix the publisher uses; default `flotilla`. */
  readonly prefix?: string;
  /** How long one JetStream request may take; default 5000 ms. */
  readonly timeoutMs?: number;
}

/** An ObjectReader on the JetStream object store `<prefix>-bundle-content`. */
export function createJetStreamObjectReader(
  deps: { readonly nc: NatsConnection; readonly contentKeys: ContentKeys },
  options: JetStreamObjectReaderOptions = {},
): ObjectReader {
  const js = jetstream(deps.nc, { timeout: options.timeoutMs ?? 5_000 });
  const bucket = bundleContentBucket(options.prefix ?? DEFAULT_INTENTS_PREFIX);
  let store: Promise<ObjectStore> | undefined;
  return {
    async read(digest, { signal } = {}) {
      const what = `Cannot read object ${digest}`;
      if (!isSha256Digest(digest)) {
        throw new FlotillaError(
          "invalid_argument",
          `${what}: it is not "sha256:" and 64 lower-case hex digits`,
        );
      }
      const key = deps.contentKeys.keyOf(digest);
      const name = sealedObjectName(key);
      try {
        store ??= new Objm(js).open(bucket, false);
        const objects = await abortable(store, signal);
        const info = await abortable(objects.info(name), signal);
        if (info === null || info.deleted) return undefined;
        const bytes = await abortable(objects.getBlob(name), signal);
        return bytes === null ? undefined : openContent(bytes, key, digest);
      } catch (error) {
        store = undefined;
        throw toNatsFlotillaError(error, what, signal);
      }
    },
  };
}

function checked(digest: string, bytes: Uint8Array): Uint8Array {
  const actual = sha256Digest(bytes);
  if (actual !== digest) {
    throw new FlotillaError(
      "internal",
      `Cannot read object ${digest}: the stored bytes hash to ${actual}`,
    );
  }
  return bytes;
}
