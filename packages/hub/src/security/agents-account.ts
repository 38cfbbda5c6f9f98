/**
 * The agents' NATS account as the hub keeps it (docs/security.md, "Removing a cluster"): the
 * account JWT `nats-setup` made, plus the revocations of agents' users that must stop working
 * before they expire (a removed cluster, a cluster registered again). The hub signs the account
 * again with the operator's signing key and pushes it to the servers' full resolver through its
 * system-account user; a server that accepts it closes the revoked users' connections and refuses
 * them from then on.
 *
 * Revocations are kept in the state store ("security" collection, key "agents-revocations",
 * compare-and-set), so they survive a hub restart and every hub pushes the same account. The hub
 * pushes at start, after every revocation, and whenever its system connection comes back (a
 * restarted server that lost its resolver directory has only the preloaded account). A push that
 * fails is tried again with backoff until one succeeds. Entries are dropped once their user has
 * expired anyway.
 */
import {
  decode,
  encodeAccount,
  type Account,
  type KeyPair,
} from "@nats-io/jwt";
import { FlotillaError, showValue } from "@flotilla/core";
import { backoffCeilingMs } from "@flotilla/node";
import type { NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import type { Logger } from "../logger.js";
import {
  defineCollection,
  isRevisionConflict,
  type OperationOptions,
  type StateStore,
} from "../store/state-store.js";
import type { NatsUserRevoker } from "./cluster-identities.js";
import { CLAIMS_UPDATE_SUBJECT } from "./nats-auth.js";

/** One revoked user. */
interface Revocation {
  readonly publicKey: string;
  /** Users with this key issued at or before this time (unix seconds) are refused. */
  readonly revokedAtS: number;
  /** After this the user has expired anyway and the entry can go. */
  readonly expiresAtMs: number;
}

interface StoredRevocations {
  readonly revocations: readonly Revocation[];
}

const AGENTS_REVOCATIONS = defineCollection<StoredRevocations>(
  "security",
  (value) =>
    z
      .object({
        revocations: z.array(
          z.object({
            publicKey: z.string().regex(/^U[A-Z2-7]{55}$/),
            revokedAtS: z.number().int(),
            expiresAtMs: z.number(),
          }),
        ),
      })
      .parse(value),
);

/** The key of the revocations in the "security" collection. */
export const AGENTS_REVOCATIONS_KEY = "agents-revocations";

/** The agents' account as `nats-setup` made it. */
export interface AgentsAccountTemplate {
  readonly name: string;
  readonly publicKey: string;
  /** Its claims, without revocations. */
  readonly claims: Partial<Account>;
  /**
   * When the setup's JWT was issued (its `iat`, unix seconds): the servers preload that JWT at
   * every start and keep it over a stored one issued in the same second, so every push is issued
   * in a later second.
   */
  readonly issuedAtS: number;
}

export interface AgentsAccountDeps {
  readonly store: StateStore;
  /** The hub's system-account connection (`hub-system.creds`), which it owns and closes. */
  readonly system: NatsConnection;
  /** The operator's signing key. */
  readonly signer: KeyPair;
  readonly template: AgentsAccountTemplate;
  readonly now: () => number;
  readonly log: Logger;
  /** Called after every push: whether the servers took it. */
  readonly onPush?: (ok: boolean) => void;
}

export interface AgentsAccountOptions {
  /** How long a push waits for the server's answer; default 5000 ms. */
  readonly timeoutMs?: number;
  /** Longest wait between failed pushes; default 30 s. */
  readonly maxRetryMs?: number;
}

/** The revoker the cluster identities use, plus its lifecycle. */
export interface AgentsAccount extends NatsUserRevoker {
  /** Pushes the account as stored now and from then on keeps it pushed. */
  start(options?: OperationOptions): Promise<void>;
  /** Stops retries and closes the system connection. */
  stop(): Promise<void>;
}

export function createAgentsAccount(
  deps: AgentsAccountDeps,
  options: AgentsAccountOptions = {},
): AgentsAccount {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  const { store, template, log } = deps;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  // Pushes run one after another; a push asked for while one runs reads the store afresh.
  let chain: Promise<void> = Promise.resolve();

  const read = async (
    opts: OperationOptions | undefined,
  ): Promise<{ revocations: Revocation[]; revision: number }> => {
    const entry = await store.get(AGENTS_REVOCATIONS, AGENTS_REVOCATIONS_KEY, {
      signal: opts?.signal,
    });
    const nowMs = deps.now();
    return {
      revocations: (entry?.value.revocations ?? []).filter(
        (r) => r.expiresAtMs > nowMs,
      ),
      revision: entry?.revision ?? 0,
    };
  };

  const encode = (revocations: readonly Revocation[]): Promise<string> =>
    encodeAccount(
      template.name,
      template.publicKey,
      {
        ...template.claims,
        ...(revocations.length === 0
          ? {}
          : {
              revocations: Object.fromEntries(
                revocations.map((r) => [r.publicKey, r.revokedAtS]),
              ),
            }),
      },
      { signer: deps.signer },
    );

  const pushOnce = async (): Promise<void> => {
    const { revocations } = await read(undefined);
    let jwt = await encode(revocations);
    // The JWT library stamps `iat` from the wall clock; one issued in the setup's second would
    // lose to the preload at the server's next start (docs/security.md, "Removing a cluster").
    // A setup clock ahead of this one is waited for up to a few seconds.
    if (decode<Account>(jwt).iat <= template.issuedAtS) {
      const wait = (template.issuedAtS + 1) * 1000 - Date.now();
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(Math.max(wait, 0), 5_000)),
      );
      jwt = await encode(revocations);
    }
    const reply = await deps.system.request(CLAIMS_UPDATE_SUBJECT, jwt, {
      timeout: timeoutMs,
    });
    const answer = parseClaimsReply(reply.string());
    if (answer !== undefined) {
      throw new FlotillaError(
        "unavailable",
        `Cannot update the agents' NATS account: the server answered ${showValue(answer)}`,
      );
    }
    log.info(
      { revocations: revocations.length },
      "Agents' NATS account pushed",
    );
  };

  const schedule = (): void => {
    if (stopped || retry !== undefined) return;
    const delay = backoffCeilingMs(Math.min(failures, 10), 500, maxRetryMs);
    retry = setTimeout(() => {
      retry = undefined;
      void push().catch(() => undefined);
    }, delay);
    retry.unref();
  };

  const push = (): Promise<void> => {
    const run = chain.then(async () => {
      if (stopped) return;
      try {
        await pushOnce();
        failures = 0;
        deps.onPush?.(true);
      } catch (error) {
        failures++;
        deps.onPush?.(false);
        log.warn(
          { err: error, attempt: failures },
          "Cannot push the agents' NATS account; trying again",
        );
        schedule();
        throw error;
      }
    });
    chain = run.catch(() => undefined);
    return run;
  };

  const watchReconnects = async (): Promise<void> => {
    for await (const status of deps.system.status()) {
      if (status.type === "reconnect") void push().catch(() => undefined);
    }
  };

  return {
    async start() {
      void watchReconnects();
      await push();
    },

    async stop() {
      stopped = true;
      if (retry !== undefined) clearTimeout(retry);
      await chain;
      await deps.system.close();
    },

    async revoke(users, opts) {
      if (users.length === 0) return;
      const revokedAtS = Math.floor(deps.now() / 1000) + 1;
      for (;;) {
        const { revocations, revision } = await read(opts);
        const added = users.filter(
          (u) => !revocations.some((r) => r.publicKey === u.publicKey),
        );
        if (added.length === 0) break;
        try {
          await store.put(
            AGENTS_REVOCATIONS,
            AGENTS_REVOCATIONS_KEY,
            {
              revocations: [
                ...revocations,
                ...added.map((u) => ({
                  publicKey: u.publicKey,
                  revokedAtS,
                  expiresAtMs: u.expiresAtMs,
                })),
              ],
            },
            { expectedRevision: revision, signal: opts?.signal },
          );
          break;
        } catch (error) {
          if (!isRevisionConflict(error)) throw error;
        }
      }
      // Recorded: a failed push is retried in the background, and at every start.
      await push().catch(() => undefined);
    },
  };
}

/** Undefined when the server took the JWT; otherwise what it said. */
function parseClaimsReply(text: string): string | undefined {
  try {
    const reply = JSON.parse(text) as {
      data?: { code?: number; message?: string };
      error?: { code?: number; description?: string };
    };
    if (reply.error !== undefined) {
      return reply.error.description ?? JSON.stringify(reply.error);
    }
    if (reply.data?.code === 200) return undefined;
    return text.slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}
