/**
 * The keys that seal bundle content (docs/security.md, "Bundle content"). Each content's key is
 * derived from the hub's content secret and the content's digest (bundle-content-seal.ts in
 * @flotilla/protocol). The secret is created by the first hub to start and kept in the state
 * store ("security" collection, key "content-secret"), which only the hub's NATS user can read;
 * every hub replica derives the same keys from it.
 */
import { randomBytes } from "node:crypto";
import { FlotillaError } from "@flotilla/core";
import { CONTENT_KEY_BYTES, deriveContentKey } from "@flotilla/protocol";
import { z } from "zod";
import { loadOrCreate } from "../store/load-or-create.js";
import {
  defineCollection,
  type OperationOptions,
  type StateStore,
} from "../store/state-store.js";

/** The stored content secret. */
interface StoredContentSecret {
  /** 32 bytes, unpadded base64url. */
  readonly secret: string;
  readonly createdAtMs: number;
}

const SECURITY_CONTENT_SECRET = defineCollection<StoredContentSecret>(
  "security",
  (value) =>
    z
      .object({
        secret: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
        createdAtMs: z.number(),
      })
      .parse(value),
);

/** The key of the content secret in the "security" collection. */
export const CONTENT_SECRET_KEY = "content-secret";

/** Derived keys kept at most; a pass over 10,000 clusters asks for a handful of digests. */
const CACHED_KEYS = 4_096;

/** Content keys by digest. */
export interface ContentKeys {
  /** Loads (or, on the first start, creates) the secret. Idempotent. */
  load(options?: OperationOptions): Promise<void>;
  /** The key of content `digest`; `failed_precondition` before {@link load}. */
  keyOf(digest: string): string;
}

/** Content keys from the secret in `store`. */
export function createContentKeys(deps: {
  readonly store: StateStore;
  readonly now: () => number;
}): ContentKeys {
  let secret: Uint8Array | undefined;
  const keyOf = cachedKeys(() => secret);
  return {
    async load(options) {
      if (secret !== undefined) return;
      const stored = await loadOrCreate(
        deps.store,
        SECURITY_CONTENT_SECRET,
        CONTENT_SECRET_KEY,
        () => ({
          secret: randomBytes(CONTENT_KEY_BYTES).toString("base64url"),
          createdAtMs: deps.now(),
        }),
        { signal: options?.signal, what: "Cannot load the content secret" },
      );
      secret = Buffer.from(stored.secret, "base64url");
    },
    keyOf,
  };
}

/** Content keys from a secret at hand (tests, benchmarks); `load()` does nothing. */
export function contentKeysOfSecret(secret: Uint8Array): ContentKeys {
  return { load: () => Promise.resolve(), keyOf: cachedKeys(() => secret) };
}

/** `keyOf` over the secret `current()` gives, with a bounded cache. */
function cachedKeys(
  current: () => Uint8Array | undefined,
): (digest: string) => string {
  const cache = new Map<string, string>();
  return (digest) => {
    const cached = cache.get(digest);
    if (cached !== undefined) return cached;
    const secret = current();
    if (secret === undefined) {
      throw new FlotillaError(
        "failed_precondition",
        "Cannot derive a content key: the content secret is not loaded yet",
      );
    }
    const key = deriveContentKey(secret, digest);
    if (cache.size >= CACHED_KEYS) cache.clear();
    cache.set(digest, key);
    return key;
  };
}
