/**
 * Uploading a large manifest file with the client-streaming PutObject: a header naming the content
 * (its sha256 digest and size, which the hub checks at the end), then the bytes in chunks of
 * OBJECT_CHUNK_BYTES, waiting for the stream to drain when grpc-js asks to,
 * so memory stays bounded.
 */
import { once } from "node:events";
import { FlotillaError } from "@flotilla/core";
import {
  fromGrpcError,
  OBJECT_CHUNK_BYTES,
  sha256Digest,
  type wire,
} from "@flotilla/protocol";
import type { HubClient } from "./hub-client.js";

/** Uploads `content` and resolves to the hub's reference to it. */
export async function putObject(
  hub: HubClient,
  content: Uint8Array,
): Promise<wire.ObjectRef__Output> {
  const header = {
    digest: sha256Digest(content),
    sizeBytes: content.byteLength,
  };
  const chunks = Math.max(
    1,
    Math.ceil(content.byteLength / OBJECT_CHUNK_BYTES),
  );
  let settle!: {
    resolve: (value: wire.PutObjectResponse__Output) => void;
    reject: (error: unknown) => void;
  };
  const answered = new Promise<wire.PutObjectResponse__Output>(
    (resolve, reject) => {
      settle = { resolve, reject };
    },
  );
  // The deadline grows with the size: --timeout is per call, and this call carries many chunks.
  const deadline = new Date(Date.now() + hub.timeoutMs * chunks);
  const call = hub.admin.putObject(
    hub.metadata(),
    { deadline },
    (error, response) => {
      if (error !== null) settle.reject(fromGrpcError(error));
      else if (response === undefined)
        settle.reject(
          new FlotillaError("internal", "PutObject ended without an answer"),
        );
      else settle.resolve(response);
    },
  );
  // An early answer (a refusal) ends the upload: stop writing, and never wait for a drain then.
  let finished = false;
  const ended = answered.then(
    () => {
      finished = true;
    },
    () => {
      finished = true;
    },
  );
  const write = async (message: wire.PutObjectRequest): Promise<void> => {
    if (call.write(message) || finished) return;
    // An error while waiting shows in the answer; swallow it here so it is not unhandled.
    const drained = once(call, "drain").then(
      () => undefined,
      () => undefined,
    );
    await Promise.race([drained, ended]);
  };
  await write({ header });
  for (
    let offset = 0;
    offset < content.byteLength && !finished;
    offset += OBJECT_CHUNK_BYTES
  )
    await write({
      chunk: content.subarray(offset, offset + OBJECT_CHUNK_BYTES),
    });
  call.end();
  const { object } = await answered;
  if (object === null || object.digest !== header.digest)
    throw new FlotillaError(
      "internal",
      `The hub stored the upload as ${object?.digest ?? "nothing"}, not ${header.digest}`,
    );
  return object;
}
