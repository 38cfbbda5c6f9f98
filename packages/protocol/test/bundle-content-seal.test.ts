import { describe, expect, test } from "vitest";
import {
  deriveContentKey,
  isContentKey,
  isSealedObjectName,
  openContent,
  sealContent,
  sealedObjectName,
  sha256Digest,
} from "../src/index.js";

const secret = new Uint8Array(32).map((_, i) => i);
const te = new TextEncoder();
const content = te.encode("apiVersion: v1\nkind: Secret\n");
const digest = sha256Digest(content);

describe("content keys", () => {
  test("are derived from the secret and the digest: the same for the same pair, different otherwise", () => {
    const key = deriveContentKey(secret, digest);
    expect(isContentKey(key)).toBe(true);
    expect(deriveContentKey(secret, digest)).toBe(key);
    expect(deriveContentKey(secret, sha256Digest("other"))).not.toBe(key);
    expect(deriveContentKey(new Uint8Array(32), digest)).not.toBe(key);
    expect(() => deriveContentKey(new Uint8Array(16), digest)).toThrow(
      /16 bytes, not 32/,
    );
  });

  test("name the object without revealing the digest", () => {
    const key = deriveContentKey(secret, digest);
    const name = sealedObjectName(key);
    expect(isSealedObjectName(name)).toBe(true);
    expect(name).not.toContain(digest.slice("sha256:".length, 20));
    expect(
      sealedObjectName(deriveContentKey(secret, sha256Digest("x"))),
    ).not.toBe(name);
    expect(() => sealedObjectName("short")).toThrow(/Invalid content key/);
  });
});

describe("sealed content", () => {
  const key = deriveContentKey(secret, digest);

  test("opens with its key to the content, and is not the content in clear", () => {
    const sealed = sealContent(content, key, digest);
    expect(Buffer.from(sealed).includes(Buffer.from("kind: Secret"))).toBe(
      false,
    );
    expect(openContent(sealed, key, digest)).toEqual(content);
    // Deterministic: the hub can compare what is stored with what it would store.
    expect(Buffer.from(sealContent(content, key, digest))).toEqual(
      Buffer.from(sealed),
    );
  });

  test("does not open with another content's key, for another digest, or changed", () => {
    const sealed = sealContent(content, key, digest);
    const other = sha256Digest("other");
    expect(() =>
      openContent(sealed, deriveContentKey(secret, other), digest),
    ).toThrow(/the key does not open it/);
    expect(() => openContent(sealed, key, other)).toThrow(
      /the key does not open it/,
    );
    const changed = new Uint8Array(sealed);
    changed[20] = (changed[20] ?? 0) ^ 1;
    expect(() => openContent(changed, key, digest)).toThrow(
      /the key does not open it/,
    );
    expect(() => openContent(content, key, digest)).toThrow(
      /it is not sealed content/,
    );
  });

  test("refuses content whose digest is not the one it was sealed for", () => {
    // Sealed by a writer that lied about the digest: it opens, but the bytes do not hash to it.
    const lying = sealContent(te.encode("something else"), key, digest);
    expect(() => openContent(lying, key, digest)).toThrow(
      /the opened bytes hash to sha256:/,
    );
  });
});
