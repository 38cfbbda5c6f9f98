/**
 * Keeps one cluster's identity current: registration and rotation. On start it loads
 * the stored identity, or, when there is none (or it expired) and a bootstrap token was given,
 * registers with the hub, retrying with backoff while the hub cannot be reached (on its next
 * address, when it has several), and stores what it got. The token is used once and never stored.
 *
 * Then, in the background, it renews the certificate once 2/3 of its lifetime has passed (at once if
 * that is already the case): a new key, `RenewIdentity` authenticated by the current certificate,
 * the new identity stored as a whole, and the `onRenewed` listeners told so they can reconnect with
 * it. A failed renewal is logged and retried with backoff; the working identity is never deleted.
 * Readers (`hubTls()`, `current()`) always see the newest identity.
 */
import { FlotillaError, showValue, compact } from "@flotilla/core";
import type { ChannelOptions } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { createBackoff, type BackoffOptions } from "@flotilla/node";
import { createHubRotation, type HubAddresses } from "../hub/hub-rotation.js";
import type { HubTls } from "../hub/transport.js";
import type { Clock } from "@flotilla/node";
import {
  checkIdentity,
  renewAtMs,
  type AgentIdentity,
  type Validity,
} from "./agent-identity.js";
import type { IdentityStore } from "./identity-store.js";
import {
  isRetryable,
  registerCluster,
  renewClusterIdentity,
} from "./registration.js";

/** Dependencies of {@link createIdentityKeeper}. */
export interface IdentityKeeperDeps {
  readonly store: IdentityStore;
  readonly clock: Clock;
  /** Uniform in [0, 1), for backoff jitter; default Math.random. */
  readonly random?: () => number;
  /** Already carries `clusterName`. */
  readonly logger: Logger;
}

/** Options of {@link createIdentityKeeper}. */
export interface IdentityKeeperOptions {
  readonly clusterName: string;
  /**
   * The hub's AgentService address, `HOST:PORT`, or the addresses of its replicas: each call goes
   * to one, and a failed call is retried on the next (hub-rotation.ts).
   */
  readonly hub: HubAddresses;
  /** PEM CA certificate(s) of `--tls-ca`: verify the hub at registration, and trusted after it. */
  readonly hubCa: Buffer;
  readonly agentVersion: string;
  /** A bootstrap token, used only when no valid identity is stored. */
  readonly bootstrapToken?: string;
  readonly channelOptions?: ChannelOptions;
  /** Deadline of each Register/RenewIdentity call; default 30000 ms. */
  readonly callTimeoutMs?: number;
  /** Retries of an unreachable hub at registration; default 1 s doubling to 60 s. */
  readonly registerBackoff?: Omit<BackoffOptions, "random">;
  /** Retries of a failed renewal; default 10 s doubling to 10 min. */
  readonly renewBackoff?: Omit<BackoffOptions, "random">;
}

/** One cluster's identity, kept current. */
export interface IdentityKeeper extends AsyncDisposable {
  readonly clusterName: string;
  /** Loads or registers the identity; then renews it in the background until `stop()`. */
  start(options?: { readonly signal?: AbortSignal }): Promise<void>;
  stop(): Promise<void>;
  /** The newest identity; throws `failed_precondition` before `start()` resolved. */
  current(): AgentIdentity;
  /** TLS material of the newest identity for the hub: its CA and `--tls-ca`, its cert and key. */
  hubTls(): HubTls;
  /**
   * When the current identity is due for renewal, epoch ms: 2/3 into its lifetime, counted from
   * when it was issued to this agent (from its notBefore for one loaded from the store).
   */
  nextRenewalAtMs(): number;
  /** Calls `listener` after every renewal; returns the unsubscribe function. */
  onRenewed(listener: (identity: AgentIdentity) => void): () => void;
  /**
   * Renews now rather than at the usual time, because `reason` (NATS refused the cluster's
   * credentials: the hub's NATS setup was made anew, or the user was revoked). At most once per
   * {@link FORCED_RENEWAL_INTERVAL_MS}; does nothing before `start()` or after `stop()`.
   */
  renewSoon(reason: string): void;
}

/** Least time between two renewals asked for by {@link IdentityKeeper.renewSoon}. */
export const FORCED_RENEWAL_INTERVAL_MS = 30_000;

/** Longest single sleep: Node timers overflow past 2^31 - 1 ms (24.8 days). */
const MAX_SLEEP_MS = 86_400_000;

/** Creates a keeper; nothing happens until `start()`. */
export function createIdentityKeeper(
  deps: IdentityKeeperDeps,
  options: IdentityKeeperOptions,
): IdentityKeeper {
  const { clusterName } = options;
  const { store, clock, logger } = deps;
  const random = deps.random ?? Math.random;
  const lifetime = new AbortController();
  const listeners = new Set<(identity: AgentIdentity) => void>();
  let identity: AgentIdentity | undefined;
  let validity: Validity | undefined;
  /** When to renew the current identity, epoch ms. */
  let renewAt = Number.POSITIVE_INFINITY;
  let renewing: Promise<void> | undefined;
  /** Wakes the renew loop's sleep early (renewSoon). */
  let wake: AbortController | undefined;
  let lastForcedAtMs = Number.NEGATIVE_INFINITY;
  const hubs = createHubRotation(options.hub, random);
  const common = {
    clusterName,
    ...compact({
      channelOptions: options.channelOptions,
      timeoutMs: options.callTimeoutMs,
    }),
  };

  const current = (): AgentIdentity => {
    if (identity === undefined)
      throw new FlotillaError(
        "failed_precondition",
        `The identity of cluster ${showValue(clusterName)} is not loaded yet`,
      );
    return identity;
  };
  const hubTls = (): HubTls => {
    const { caPem, certificatePem, keyPem } = current();
    return {
      ca: Buffer.from(`${caPem.trimEnd()}\n${options.hubCa.toString("utf8")}`),
      cert: Buffer.from(certificatePem),
      key: Buffer.from(keyPem),
    };
  };
  const iso = (ms: number): string => new Date(ms).toISOString();

  /** The stored identity if usable now; undefined if none or expired. */
  const loadStored = async (): Promise<AgentIdentity | undefined> => {
    const stored = await store.load();
    if (stored === undefined) return undefined;
    let storedValidity: Validity;
    try {
      storedValidity = checkIdentity(stored, clusterName, store.location);
    } catch (error) {
      const cause = FlotillaError.from(error);
      throw new FlotillaError("failed_precondition", cause.message, { cause });
    }
    if (storedValidity.notAfterMs <= clock.now()) {
      logger.warn(
        { expiredAt: iso(storedValidity.notAfterMs) },
        "The stored identity has expired",
      );
      return undefined;
    }
    validity = storedValidity;
    renewAt = renewAtMs(storedValidity);
    return stored;
  };

  /**
   * Checks a just-issued identity, stores it and makes it current. Its lifetime counts from now, not from its notBefore:
   * CAs backdate notBefore for clock skew (the hub by minutes), and with a short lifetime 2/3 of it
   * measured from notBefore could already be over, renewing again at once, forever.
   */
  const adopt = async (fresh: AgentIdentity): Promise<void> => {
    const freshValidity = checkIdentity(fresh, clusterName, store.location);
    const nowMs = clock.now();
    if (freshValidity.notAfterMs <= nowMs)
      throw new FlotillaError(
        "internal",
        `Cannot use the certificate the hub issued for cluster ${showValue(clusterName)}: it expired at ${iso(freshValidity.notAfterMs)}`,
      );
    await store.save(fresh);
    identity = fresh;
    validity = freshValidity;
    renewAt = renewAtMs({
      notBeforeMs: Math.max(freshValidity.notBeforeMs, nowMs),
      notAfterMs: freshValidity.notAfterMs,
    });
  };

  const register = async (
    token: string,
    signal: AbortSignal,
  ): Promise<AgentIdentity> => {
    const backoff = createBackoff({
      initialMs: 1_000,
      maxMs: 60_000,
      ...options.registerBackoff,
      random,
    });
    for (;;) {
      try {
        return await registerCluster({
          ...common,
          hub: hubs.current,
          hubCa: options.hubCa,
          token,
          agentVersion: options.agentVersion,
          signal,
        });
      } catch (error) {
        const failure = FlotillaError.from(error);
        if (signal.aborted) throw failure;
        if (!isRetryable(failure)) throw failure;
        hubs.advance();
        const delayMs = backoff.next();
        logger.warn(
          { err: failure, delayMs },
          "Cannot reach the hub to register; retrying",
        );
        await clock.sleep(delayMs, { signal });
      }
    }
  };

  /** Sleeps until `renewAt`, which renewSoon may bring forward meanwhile. */
  const sleepUntilRenewal = async (signal: AbortSignal) => {
    while (clock.now() < renewAt) {
      const woken = new AbortController();
      wake = woken;
      try {
        await clock.sleep(Math.min(renewAt - clock.now(), MAX_SLEEP_MS), {
          signal: AbortSignal.any([signal, woken.signal]),
        });
      } catch (error) {
        if (signal.aborted || !woken.signal.aborted) throw error;
      } finally {
        wake = undefined;
      }
    }
  };

  const renewLoop = async (signal: AbortSignal): Promise<void> => {
    const backoff = createBackoff({
      initialMs: 10_000,
      maxMs: 600_000,
      ...options.renewBackoff,
      random,
    });
    for (;;) {
      if (validity === undefined) return;
      await sleepUntilRenewal(signal);
      try {
        const renewed = await renewClusterIdentity({
          ...common,
          hub: hubs.current,
          tls: hubTls(),
          signal,
        });
        await adopt(renewed);
        backoff.reset();
        logger.info(
          { expiresAt: iso(renewed.expiresAtMs) },
          "Renewed the cluster's identity",
        );
        for (const listener of listeners) {
          try {
            listener(renewed);
          } catch (error) {
            logger.error(
              { err: FlotillaError.from(error) },
              "An identity listener threw",
            );
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        hubs.advance();
        const delayMs = backoff.next();
        const expired = validity.notAfterMs <= clock.now();
        logger[expired ? "error" : "warn"](
          {
            err: FlotillaError.from(error),
            delayMs,
            expiresAt: iso(validity.notAfterMs),
          },
          expired
            ? "Cannot renew the cluster's identity, which has expired; retrying"
            : "Cannot renew the cluster's identity; retrying",
        );
        await clock.sleep(delayMs, { signal });
      }
    }
  };

  let state: "new" | "started" | "stopped" = "new";
  const stop = async (): Promise<void> => {
    state = "stopped";
    lifetime.abort();
    await renewing;
  };

  return {
    clusterName,
    async start(startOptions = {}) {
      if (state !== "new")
        throw new FlotillaError(
          "failed_precondition",
          `Cannot start the identity keeper of cluster ${showValue(clusterName)}: it was ${state}`,
        );
      state = "started";
      const signal =
        startOptions.signal === undefined
          ? lifetime.signal
          : AbortSignal.any([lifetime.signal, startOptions.signal]);
      let loaded = await loadStored();
      if (loaded !== undefined) {
        if (options.bootstrapToken !== undefined)
          logger.info(
            { identityDir: store.location },
            "A valid identity is stored; the bootstrap token is not used",
          );
      } else if (options.bootstrapToken === undefined) {
        throw new FlotillaError(
          "failed_precondition",
          `Cannot connect cluster ${showValue(clusterName)} to the hub: no valid identity is stored in ${showValue(store.location)}; register it with a bootstrap token from \`flotilla token create\` (--bootstrap-token-file FILE or FLOTILLA_BOOTSTRAP_TOKEN)`,
        );
      } else {
        loaded = await register(options.bootstrapToken, signal);
        await adopt(loaded);
        logger.info(
          {
            identityDir: store.location,
            expiresAt: iso(loaded.expiresAtMs),
          },
          "Registered with the hub",
        );
      }
      identity = loaded;
      renewing = renewLoop(lifetime.signal).catch((error: unknown) => {
        if (!lifetime.signal.aborted)
          logger.error(
            { err: FlotillaError.from(error) },
            "Identity renewal stopped unexpectedly",
          );
      });
    },
    stop,
    [Symbol.asyncDispose]: stop,
    current,
    hubTls,
    nextRenewalAtMs: () => renewAt,
    onRenewed(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    renewSoon(reason) {
      const nowMs = clock.now();
      if (
        state !== "started" ||
        nowMs - lastForcedAtMs < FORCED_RENEWAL_INTERVAL_MS
      )
        return;
      lastForcedAtMs = nowMs;
      logger.info({ reason }, "Renewing the cluster's identity now");
      renewAt = nowMs;
      wake?.abort();
    },
  };
}
