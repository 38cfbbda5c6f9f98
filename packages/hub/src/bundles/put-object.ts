/**
 * AdminService.PutObject: a content-addressed upload of one large manifest file. The client sends
 * a header (digest and size), then chunks; the hub refuses as soon as the upload can no longer
 * match its header, checks the digest at the end, and stores the bytes in the bundle-content object
 * store, where an ApplyBundle manifest can reference them.
 */
import { FlotillaError, type Problem } from "@flotilla/core";
import {
  isSha256Digest,
  MAX_BUNDLE_CONTENT_BYTES,
  OBJECT_CHUNK_BYTES,
  sha256Digest,
  toGrpcStatus,
  type wire,
} from "@flotilla/protocol";
import type { handleClientStreamingCall } from "@grpc/grpc-js";
import {
  audited,
  callContext,
  type AuditDeps,
  type CallContext,
} from "../grpc/unary.js";
import type { IntentPublisher } from "../intents/intent-publisher.js";

/** A received upload: its header and its bytes. */
export interface Upload {
  readonly header: { readonly digest: string; readonly sizeBytes: number };
  readonly bytes: Uint8Array;
}

const invalid = (problems: Problem[]): FlotillaError =>
  FlotillaError.invalid("object upload", problems);

/** Reads a PutObject stream into memory, refusing it as soon as it breaks the rules. */
export async function receiveUpload(
  messages: AsyncIterable<wire.PutObjectRequest__Output>,
  signal: AbortSignal,
): Promise<Upload> {
  let header: Upload["header"] | undefined;
  const chunks: Uint8Array[] = [];
  let received = 0;
  let index = 0;
  for await (const message of messages) {
    signal.throwIfAborted();
    if (header === undefined) {
      const h = message.header;
      if (message.part !== "header" || h == null) {
        throw invalid([
          { path: "header", message: "must be the first message" },
        ]);
      }
      const problems: Problem[] = [];
      if (!isSha256Digest(h.digest)) {
        problems.push({
          path: "header.digest",
          message: 'must be "sha256:" and 64 lower-case hex digits',
          value: h.digest,
        });
      }
      if (h.sizeBytes > MAX_BUNDLE_CONTENT_BYTES) {
        problems.push({
          path: "header.sizeBytes",
          message: `must be at most ${String(MAX_BUNDLE_CONTENT_BYTES)}`,
          value: h.sizeBytes,
        });
      }
      if (problems.length > 0) throw invalid(problems);
      header = { digest: h.digest, sizeBytes: h.sizeBytes };
    } else {
      const chunk = message.chunk;
      const at = `chunk[${String(index)}]`;
      if (message.part !== "chunk" || chunk === undefined) {
        throw invalid([
          {
            path: at,
            message: "must be a chunk: the header comes once, first",
          },
        ]);
      }
      if (chunk.byteLength > OBJECT_CHUNK_BYTES) {
        throw invalid([
          {
            path: at,
            message: `is ${String(chunk.byteLength)} bytes, more than the ${String(OBJECT_CHUNK_BYTES)} a chunk may hold`,
          },
        ]);
      }
      received += chunk.byteLength;
      if (received > header.sizeBytes) {
        throw invalid([
          {
            path: at,
            message: `brings the upload to ${String(received)} bytes, more than the header's sizeBytes`,
            value: header.sizeBytes,
          },
        ]);
      }
      chunks.push(chunk);
      index++;
    }
  }
  if (header === undefined) {
    throw invalid([
      { path: "header", message: "is required: the upload was empty" },
    ]);
  }
  if (received !== header.sizeBytes) {
    throw invalid([
      {
        path: "header.sizeBytes",
        message: `does not match the ${String(received)} bytes received`,
        value: header.sizeBytes,
      },
    ]);
  }
  return { header, bytes: Buffer.concat(chunks) };
}

/** Checks an upload's digest and stores it; answers its reference. */
export async function storeUpload(
  publisher: Pick<IntentPublisher, "putBundleContent">,
  upload: Upload,
  context: CallContext,
): Promise<wire.PutObjectResponse> {
  const actual = sha256Digest(upload.bytes);
  if (actual !== upload.header.digest) {
    throw invalid([
      {
        path: "header.digest",
        message: `does not match the content received, whose digest is ${actual}`,
        value: upload.header.digest,
      },
    ]);
  }
  const digest = await publisher.putBundleContent(upload.bytes, {
    signal: context.signal,
  });
  return { object: { digest, sizeBytes: upload.bytes.byteLength } };
}

/** The PutObject handler; a received upload is audited (targetKind "object", the digest). */
export function putObjectHandler(
  deps: AuditDeps & {
    readonly publisher: Pick<IntentPublisher, "putBundleContent">;
  },
): handleClientStreamingCall<
  wire.PutObjectRequest__Output,
  wire.PutObjectResponse
> {
  const store = audited<Upload, wire.PutObjectResponse>(
    deps,
    {
      method: "PutObject",
      targetKind: "object",
      targetName: (upload) => upload.header.digest,
    },
    (upload, context) => storeUpload(deps.publisher, upload, context),
  );
  return (call, callback) => {
    // A client stream has what callContext reads (metadata, peer, "cancelled"), typed for unary.
    const context = callContext(
      call as unknown as Parameters<typeof callContext>[0],
    );
    receiveUpload(call, context.signal)
      .then((upload) => store(upload, context))
      .then(
        (response) => {
          callback(null, response);
        },
        (error: unknown) => {
          callback(toGrpcStatus(error));
        },
      );
  };
}
