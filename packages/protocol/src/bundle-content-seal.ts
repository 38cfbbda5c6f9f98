/**
 * Sealed bundle content (docs/security.md, "Bundle content"): how the hub stores content so that
 * only the clusters it is for can read it, and how an agent opens it.
 *
 * Every agent can read the bundle-content object store (NATS permissions cannot tell one object
 * from another: agent-nats-permissions.ts), so what is stored there is ciphertext. Each content
 * has its own key, derived by the hub from a secret only the hub holds and the content's digest:
 * the same content always gets the same key, so content stored once serves every bundle that
 * uses it, and nothing needs to remember keys. The hub puts the key only in the intents of the
 * clusters the content is for, which only those clusters can read.
 *
 * The object's name is derived from the key, not from the digest: a name must not let anyone
 * who guesses some content confirm the guess by finding its digest in the store.
 *
 * Sealed bytes: `FLS1` (4 bytes), a 12-byte nonce, the AES-256-GCM ciphertext and its 16-byte
 * tag. The digest is authenticated with it (additional data), so sealed content cannot be passed
 * off as other content sealed with the same key. Sealing is deterministic: the nonce is derived
 * from the key and the digest. A key is derived from one digest, so one nonce only ever seals one
 * plaintext (reusing a GCM nonce is harmful only across different plaintexts), and the hub can
 * tell by the object store's own checksum whether what is stored is intact.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
} from "node:crypto";
import { FlotillaError } from "@flotilla/core";
import { isSha256Digest, sha256Digest } from "./intents.js";

/** Bytes of the hub's content secret and of every content key. */
export const CONTENT_KEY_BYTES = 32;

const MAGIC = Buffer.from("FLS1", "ascii");
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** How many bytes sealing adds to content: the mark, the nonce and the tag. */
export const SEALING_OVERHEAD_BYTES =
  MAGIC.byteLength + NONCE_BYTES + TAG_BYTES;
const KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const NAME_PREFIX = "sealed-";

/** True for a content key as intents carry it: 32 bytes in unpadded base64url. */
export function isContentKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** The key of content `digest` under the hub's content secret `secret` (32 bytes). */
export function deriveContentKey(secret: Uint8Array, digest: string): string {
  if (secret.byteLength !== CONTENT_KEY_BYTES) {
    throw new FlotillaError(
      "internal",
      `Cannot derive a content key: the content secret is ${String(secret.byteLength)} bytes, not ${String(CONTENT_KEY_BYTES)}`,
    );
  }
  checkDigest(digest);
  return createHmac("sha256", secret)
    .update(`flotilla bundle content key v1\n${digest}`)
    .digest("base64url");
}

/** The object-store name of the content that `key` opens: `sealed-<64 hex digits>`. */
export function sealedObjectName(key: string): string {
  return `${NAME_PREFIX}${createHash("sha256")
    .update("flotilla bundle content name v1\n")
    .update(keyBytes(key))
    .digest("hex")}`;
}

/** True for a name {@link sealedObjectName} makes. */
export function isSealedObjectName(name: string): boolean {
  return /^sealed-[0-9a-f]{64}$/.test(name);
}

/** Seals `content` (whose digest is `digest`) with `key`. */
export function sealContent(
  content: Uint8Array,
  key: string,
  digest: string,
): Uint8Array {
  checkDigest(digest);
  const secret = keyBytes(key);
  const nonce = createHmac("sha256", secret)
    .update(`flotilla bundle content nonce v1\n${digest}`)
    .digest()
    .subarray(0, NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", secret, nonce);
  cipher.setAAD(Buffer.from(digest, "utf8"));
  const body = Buffer.concat([cipher.update(content), cipher.final()]);
  return Buffer.concat([MAGIC, nonce, body, cipher.getAuthTag()]);
}

/**
 * Opens sealed content with `key` and checks that it is the content `digest` names. `internal`
 * when the bytes are not sealed content, were sealed with another key or for another digest, or
 * were changed.
 */
export function openContent(
  sealed: Uint8Array,
  key: string,
  digest: string,
): Uint8Array {
  checkDigest(digest);
  const what = `Cannot open bundle content ${digest}`;
  const bytes = Buffer.from(
    sealed.buffer,
    sealed.byteOffset,
    sealed.byteLength,
  );
  if (
    bytes.byteLength < MAGIC.byteLength + NONCE_BYTES + TAG_BYTES ||
    !bytes.subarray(0, MAGIC.byteLength).equals(MAGIC)
  ) {
    throw new FlotillaError("internal", `${what}: it is not sealed content`);
  }
  const nonceEnd = MAGIC.byteLength + NONCE_BYTES;
  const tagStart = bytes.byteLength - TAG_BYTES;
  let content: Buffer;
  try {
    const decipher = createDecipheriv(
      "aes-256-gcm",
      keyBytes(key),
      bytes.subarray(MAGIC.byteLength, nonceEnd),
    );
    decipher.setAAD(Buffer.from(digest, "utf8"));
    decipher.setAuthTag(bytes.subarray(tagStart));
    content = Buffer.concat([
      decipher.update(bytes.subarray(nonceEnd, tagStart)),
      decipher.final(),
    ]);
  } catch (error) {
    throw new FlotillaError(
      "internal",
      `${what}: the key does not open it (sealed with another key, for other content, or changed)`,
      { cause: error },
    );
  }
  const actual = sha256Digest(content);
  if (actual !== digest) {
    throw new FlotillaError(
      "internal",
      `${what}: the opened bytes hash to ${actual}; refusing them`,
    );
  }
  return new Uint8Array(content.buffer, content.byteOffset, content.byteLength);
}

function keyBytes(key: string): Buffer {
  if (!KEY_PATTERN.test(key)) {
    throw new FlotillaError(
      "invalid_argument",
      `Invalid content key ${JSON.stringify(key.slice(0, 60))}: it must be 32 bytes in unpadded base64url`,
    );
  }
  return Buffer.from(key, "base64url");
}

function checkDigest(digest: string): void {
  if (!isSha256Digest(digest)) {
    throw new FlotillaError(
      "invalid_argument",
      `Invalid bundle content digest ${JSON.stringify(digest.slice(0, 100))}: it must be "sha256:" and 64 lower-case hex digits`,
    );
  }
}
