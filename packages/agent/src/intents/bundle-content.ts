/**
 * Fetching a bundle revision's content from the `flotilla-bundle-content` object store by its
 * digest (docs/agent-protocol.md, "Bundle content"); decoding it is protocol's parseBundleContent.
 *
 * The read uses only what an agent's NATS user is granted (`agentNatsPermissions` of
 * @flotilla/protocol), nothing that reads the store as a whole: the object's metadata is the last
 * message on its meta subject `$O.<bucket>.M.<name>`, fetched with a JetStream direct get whose
 * subject names it (the hub creates the stream with `allow_direct`); its chunks come through an
 * ordered push consumer filtered to `$O.<bucket>.C.<nuid>`, the nuid the metadata gives. No
 * account or stream info, no message get by sequence, no listing (only when a direct get goes
 * unanswered, the info of one fixed, never-created consumer tells a missing bucket from an outage). So an agent reads an object
 * when it knows the object's name, a content digest it learns only from its own intent. (A client
 * that deliberately sends a literal `*` or `>` in those subjects is not stopped by the server:
 * see agent-nats-permissions.ts in @flotilla/protocol.)
 */
import { FlotillaError, showValue } from "@flotilla/core";
import {
  jetstream,
  jetstreamManager,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { Base64UrlPaddedCodec } from "@nats-io/obj";
import { TimeoutError, type NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import {
  BUNDLE_CONTENT_PROBE_CONSUMER,
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
  /** How long each JetStream request, and the wait for each chunk, may take; default 5000 ms. */
  readonly timeoutMs?: number;
}

/** What the reader needs of an object's metadata (the object store's JSON, other fields ignored). */
const objectMeta = z.object({
  // One subject token: it becomes part of the consumer's filter subject.
  nuid: z.string().regex(/^[A-Za-z0-9]+$/),
  size: z.number().int().nonnegative(),
  deleted: z.boolean().optional(),
});
type ObjectMeta = z.infer<typeof objectMeta>;

/**
 * Fetches bundle content by digest from the object store and checks that it hashes to that
 * digest: `not_found` if absent (or the bucket is), `failed_precondition` if larger than
 * `maxBytes`, `internal` if the stored bytes are not the content the digest names.
 */
export async function getBundleContent(
  deps: { readonly nc: NatsConnection },
  digest: string,
  options: GetBundleContentOptions = {},
): Promise<Uint8Array> {
  const { signal, maxBytes = MAX_BUNDLE_CONTENT_BYTES } = options;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const name = bundleObjectName(digest);
  const what = `Cannot fetch bundle content ${digest}`;
  signal?.throwIfAborted();
  const bucket = bundleContentBucket(options.prefix ?? DEFAULT_INTENTS_PREFIX);
  let bytes: Uint8Array;
  try {
    const meta = await abortable(
      readMeta(deps.nc, bucket, name, timeoutMs, what),
      signal,
    );
    if (meta.size > maxBytes) throw tooLarge(what, meta.size, maxBytes);
    bytes =
      meta.size === 0
        ? new Uint8Array(0)
        : await readChunks(deps.nc, bucket, meta, { timeoutMs, what, signal });
  } catch (error) {
    if (signal?.aborted && error === signal.reason) throw error;
    throw toNatsError(error, what);
  }
  const actual = sha256Digest(bytes);
  if (actual !== digest) {
    throw new FlotillaError(
      "internal",
      `${what}: the stored bytes hash to ${actual}; refusing them`,
    );
  }
  return bytes;
}

/** The stream behind an object store bucket (nats.js's and the server's naming). */
function objectStream(bucket: string): string {
  return `OBJ_${bucket}`;
}

/**
 * A direct get to a stream that does not exist goes unanswered, as one in an outage does; this
 * tells them apart with the one stream-level question an agent may ask, the info of a consumer
 * whose name is fixed: `not_found` if JetStream says the stream does not exist.
 */
async function checkStreamExists(
  jsm: JetStreamManager,
  bucket: string,
  what: string,
): Promise<void> {
  try {
    await jsm.consumers.info(
      objectStream(bucket),
      BUNDLE_CONTENT_PROBE_CONSUMER,
    );
  } catch (error) {
    if (
      error instanceof JetStreamApiError &&
      error.code === JetStreamApiCodes.StreamNotFound
    ) {
      throw new FlotillaError(
        "not_found",
        `${what}: object store ${showValue(bucket)} does not exist`,
        { cause: error },
      );
    }
  }
}

/** The last message of `$O.<bucket>.M.<name>` by a direct get that names it, parsed. */
async function readMeta(
  nc: NatsConnection,
  bucket: string,
  name: string,
  timeoutMs: number,
  what: string,
): Promise<ObjectMeta> {
  const jsm = await jetstreamManager(nc, {
    checkAPI: false,
    timeout: timeoutMs,
  });
  // The object store's own encoding of names in subjects (padded base64url: one token).
  const subject = `$O.${bucket}.M.${Base64UrlPaddedCodec.encode(name)}`;
  let message;
  try {
    message = await jsm.direct.getMessage(objectStream(bucket), {
      last_by_subj: subject,
    });
  } catch (error) {
    if (error instanceof TimeoutError)
      await checkStreamExists(jsm, bucket, what);
    throw error;
  }
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
 * The object's chunks, in order, through an ordered push consumer filtered to its chunk subject:
 * exactly `meta.size` bytes, or `internal`. Gives up (`deadline_exceeded`) when no chunk arrives
 * within `timeoutMs`.
 */
async function readChunks(
  nc: NatsConnection,
  bucket: string,
  meta: ObjectMeta,
  options: {
    readonly timeoutMs: number;
    readonly what: string;
    readonly signal: AbortSignal | undefined;
  },
): Promise<Uint8Array> {
  const { timeoutMs, what, signal } = options;
  const js = jetstream(nc, { timeout: timeoutMs });
  const consumer = await abortable(
    js.consumers.getPushConsumer(objectStream(bucket), {
      filter_subjects: `$O.${bucket}.C.${meta.nuid}`,
    }),
    signal,
  );
  const messages = await consumer.consume();
  const bytes = new Uint8Array(meta.size);
  let received = 0;
  let failure: Error | undefined;
  const fail = (error: Error): void => {
    failure ??= error;
    messages.stop();
  };
  let idle: ReturnType<typeof setTimeout> | undefined;
  const armIdle = (): void => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      fail(
        new FlotillaError(
          "deadline_exceeded",
          `${what}: no chunk arrived within ${String(timeoutMs)} ms (${String(received)} of ${String(meta.size)} bytes received)`,
        ),
      );
    }, timeoutMs);
  };
  const onAbort = (): void => {
    fail(signal?.reason as Error);
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  armIdle();
  try {
    for await (const m of messages) {
      armIdle();
      if (received + m.data.byteLength > meta.size) {
        throw new FlotillaError(
          "internal",
          `${what}: its chunks hold more than the ${String(meta.size)} bytes its metadata says`,
        );
      }
      bytes.set(m.data, received);
      received += m.data.byteLength;
      if (m.info.pending === 0) break;
    }
  } finally {
    clearTimeout(idle);
    signal?.removeEventListener("abort", onAbort);
    await messages.close().catch(() => undefined);
  }
  if (failure !== undefined) throw failure;
  if (received !== meta.size) {
    throw new FlotillaError(
      "internal",
      `${what}: its chunks hold ${String(received)} bytes, not the ${String(meta.size)} its metadata says`,
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
