/**
 * Bootstrap tokens: what an agent presents, once, to register its cluster. A token has
 * a public id (`bt-` and 8 hex digits, listed and revoked by it) and a secret
 * `flotilla-bt.<id>.<32 random bytes, base64url>` that is shown once, at creation: the hub keeps
 * only its SHA-256. A token lives `ttl` (at most {@link MAX_TOKEN_TTL_MS}), works `maxUses` times
 * and, when bound to a cluster name, for that name only.
 *
 * Redeeming counts a use with compare-and-set, so concurrent redeems never exceed `maxUses`, on
 * one hub or several. Refusals never echo the secret.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import {
  compareNames,
  FlotillaError,
  showValue,
  compact,
} from "@flotilla/core";
import { z } from "zod";
import {
  defineCollection,
  isRevisionConflict,
  type OperationOptions,
  type StateStore,
} from "../store/state-store.js";

/** The longest a token may live: 30 days. */
export const MAX_TOKEN_TTL_MS = 30 * 24 * 3_600_000;

/** The most uses one token may allow. */
export const MAX_TOKEN_USES = 10_000;

const SECRET_PATTERN = /^flotilla-bt\.(bt-[0-9a-f]{8})\.([A-Za-z0-9_-]{43})$/;
const ID_PATTERN = /^bt-[0-9a-f]{8}$/;

/** A stored token; the secret itself is not stored. */
export interface BootstrapTokenRecord {
  readonly id: string;
  /** SHA-256 of the secret, hex. */
  readonly secretSha256: string;
  readonly clusterName?: string;
  readonly createdAtMs: number;
  readonly expiresAtMs: number;
  readonly maxUses: number;
  readonly uses: number;
  readonly revoked: boolean;
  readonly createdBy: string;
  readonly revokedAtMs?: number;
  readonly lastUsedAtMs?: number;
}

const recordSchema = z.object({
  id: z.string().regex(ID_PATTERN),
  secretSha256: z.string().regex(/^[0-9a-f]{64}$/),
  clusterName: z.string().optional(),
  createdAtMs: z.number(),
  expiresAtMs: z.number(),
  maxUses: z.number().int().min(1),
  uses: z.number().int().min(0),
  revoked: z.boolean(),
  createdBy: z.string(),
  revokedAtMs: z.number().optional(),
  lastUsedAtMs: z.number().optional(),
});

/** The "bootstrap-tokens" collection, keyed by token id. */
export const BOOTSTRAP_TOKENS = defineCollection<BootstrapTokenRecord>(
  "bootstrap-tokens",
  (value) => recordSchema.parse(value),
);

/** What a new token allows (validated by the admin handler). */
export interface NewBootstrapToken {
  readonly ttlMs: number;
  readonly maxUses: number;
  readonly clusterName?: string;
  readonly createdBy: string;
}

export interface BootstrapTokens {
  /** A new public token id (so that an audit record can name the token before it exists). */
  newId(): string;
  /** Stores a token under `id` and returns it with its secret (not retrievable later). */
  create(
    id: string,
    token: NewBootstrapToken,
    options?: OperationOptions,
  ): Promise<{ token: BootstrapTokenRecord; secret: string }>;
  /** Every token, by id. */
  list(options?: OperationOptions): Promise<BootstrapTokenRecord[]>;
  /** Marks a token revoked (idempotent); `not_found` for an unknown id. */
  revoke(id: string, options?: OperationOptions): Promise<BootstrapTokenRecord>;
  /**
   * The token `secret` names, if it may register `clusterName` now; counts nothing. Refusals:
   * `invalid_argument` (malformed), `unauthenticated` (unknown, wrong secret, revoked, expired,
   * used up), `permission_denied` (bound to another cluster).
   */
  check(
    secret: string,
    clusterName: string,
    options?: OperationOptions,
  ): Promise<BootstrapTokenRecord>;
  /** {@link check}, then counts one use with compare-and-set. */
  redeem(
    secret: string,
    clusterName: string,
    options?: OperationOptions,
  ): Promise<BootstrapTokenRecord>;
}

export interface BootstrapTokensDeps {
  readonly store: StateStore;
  readonly now: () => number;
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function unauthenticated(message: string): FlotillaError {
  return new FlotillaError("unauthenticated", message);
}

export function createBootstrapTokens(
  deps: BootstrapTokensDeps,
): BootstrapTokens {
  const { store, now } = deps;

  const find = async (
    secret: string,
    options: OperationOptions | undefined,
  ) => {
    const match = SECRET_PATTERN.exec(secret);
    const id = match?.[1];
    if (match === null || id === undefined) {
      throw new FlotillaError(
        "invalid_argument",
        "Invalid bootstrapToken: it must look like flotilla-bt.<id>.<secret>, as `flotilla token create` prints it",
        {
          problems: [
            {
              path: "bootstrapToken",
              message: "must look like flotilla-bt.<id>.<secret>",
            },
          ],
        },
      );
    }
    const entry = await store.get(BOOTSTRAP_TOKENS, id, options);
    const presented = Buffer.from(sha256Hex(secret), "hex");
    if (
      entry === undefined ||
      !timingSafeEqual(presented, Buffer.from(entry.value.secretSha256, "hex"))
    ) {
      throw unauthenticated(
        `Bootstrap token ${showValue(id)} is unknown or its secret does not match`,
      );
    }
    return entry;
  };

  const allowed = (
    token: BootstrapTokenRecord,
    clusterName: string,
  ): BootstrapTokenRecord => {
    const name = showValue(token.id);
    if (token.revoked) {
      throw unauthenticated(`Bootstrap token ${name} was revoked`);
    }
    if (now() >= token.expiresAtMs) {
      throw unauthenticated(
        `Bootstrap token ${name} expired at ${new Date(token.expiresAtMs).toISOString()}`,
      );
    }
    if (token.uses >= token.maxUses) {
      throw unauthenticated(
        `Bootstrap token ${name} was already used ${String(token.uses)} of ${String(token.maxUses)} times`,
      );
    }
    if (token.clusterName !== undefined && token.clusterName !== clusterName) {
      throw new FlotillaError(
        "permission_denied",
        `Bootstrap token ${name} is bound to cluster ${showValue(token.clusterName)}, not ${showValue(clusterName)}`,
      );
    }
    return token;
  };

  return {
    newId() {
      return `bt-${randomBytes(4).toString("hex")}`;
    },

    async create(id, input, options) {
      const secret = `flotilla-bt.${id}.${randomBytes(32).toString("base64url")}`;
      const createdAtMs = now();
      const token: BootstrapTokenRecord = {
        id,
        secretSha256: sha256Hex(secret),
        ...compact({ clusterName: input.clusterName }),
        createdAtMs,
        expiresAtMs: createdAtMs + input.ttlMs,
        maxUses: input.maxUses,
        uses: 0,
        revoked: false,
        createdBy: input.createdBy,
      };
      await store.put(BOOTSTRAP_TOKENS, id, token, {
        ...options,
        expectedRevision: 0,
      });
      return { token, secret };
    },

    async list(options) {
      const entries = await store.list(BOOTSTRAP_TOKENS, options);
      return entries
        .map((e) => e.value)
        .sort((a, b) => compareNames(a.id, b.id));
    },

    async revoke(id, options) {
      for (;;) {
        const entry = ID_PATTERN.test(id)
          ? await store.get(BOOTSTRAP_TOKENS, id, options)
          : undefined;
        if (entry === undefined) {
          throw new FlotillaError(
            "not_found",
            `Bootstrap token ${showValue(id)} does not exist`,
          );
        }
        if (entry.value.revoked) return entry.value;
        const token = { ...entry.value, revoked: true, revokedAtMs: now() };
        try {
          await store.put(BOOTSTRAP_TOKENS, id, token, {
            ...options,
            expectedRevision: entry.revision,
          });
          return token;
        } catch (error) {
          if (!isRevisionConflict(error)) throw error;
        }
      }
    },

    async check(secret, clusterName, options) {
      return allowed((await find(secret, options)).value, clusterName);
    },

    async redeem(secret, clusterName, options) {
      // Each lost compare-and-set means another redeem or a revoke counted first; re-read.
      for (;;) {
        const entry = await find(secret, options);
        const token = allowed(entry.value, clusterName);
        const used = { ...token, uses: token.uses + 1, lastUsedAtMs: now() };
        try {
          await store.put(BOOTSTRAP_TOKENS, token.id, used, {
            ...options,
            expectedRevision: entry.revision,
          });
          return used;
        } catch (error) {
          if (!isRevisionConflict(error)) throw error;
        }
      }
    },
  };
}
