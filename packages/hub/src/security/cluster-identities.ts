/**
 * The clusters that hold an identity (docs/security.md): collection "identities", keyed by cluster
 * name, with the serials of the certificates issued to each (the current one, and the previous one
 * until it expires, so that rotation needs no downtime) and the NATS user issued with each. A
 * certificate counts only while its serial is listed here: registering again replaces the list
 * (older certificates stop working), and removing the cluster deletes the record (every
 * certificate of the cluster stops working). In both cases the NATS users of the certificates
 * that stop working are revoked (agents-account.ts), so the server refuses them within seconds.
 *
 * Removal takes effect in this process at once ({@link ClusterIdentities.forget} is synchronous
 * for {@link ClusterIdentities.holds}), before the record's deletion is written. The revocation
 * is recorded before the deletion, so that a hub stopped in between has nothing left to undo.
 */
import { FlotillaError, showValue } from "@flotilla/core";
import { z } from "zod";
import { nameKey } from "../store/keys.js";
import {
  defineCollection,
  isRevisionConflict,
  type OperationOptions,
  type StateStore,
} from "../store/state-store.js";

/** One certificate issued to a cluster. */
export interface IssuedSerial {
  readonly serial: string;
  readonly issuedAtMs: number;
  readonly expiresAtMs: number;
  /** The public key of the NATS user issued with it (same expiry), when NATS has users. */
  readonly natsUser?: string;
}

/** Revokes NATS users before they expire (agents-account.ts). */
export interface NatsUserRevoker {
  revoke(
    users: readonly {
      readonly publicKey: string;
      readonly expiresAtMs: number;
    }[],
    options?: OperationOptions,
  ): Promise<void>;
}

/** A registered cluster's identity record. */
export interface ClusterIdentityRecord {
  readonly cluster: string;
  readonly registeredAtMs: number;
  /** Newest first: the current certificate, then the previous one while it is valid. */
  readonly certificates: readonly IssuedSerial[];
}

const serialSchema = z.object({
  serial: z.string().regex(/^[0-9a-f]+$/),
  issuedAtMs: z.number(),
  expiresAtMs: z.number(),
  natsUser: z
    .string()
    .regex(/^U[A-Z2-7]{55}$/)
    .optional(),
});

/** The "identities" collection. */
export const IDENTITIES = defineCollection<ClusterIdentityRecord>(
  "identities",
  (value) =>
    z
      .object({
        cluster: z.string().min(1),
        registeredAtMs: z.number(),
        certificates: z.array(serialSchema),
      })
      .parse(value),
);

export interface ClusterIdentities {
  get(
    cluster: string,
    options?: OperationOptions,
  ): Promise<ClusterIdentityRecord | undefined>;
  /**
   * Records a registration: a new record, or (when `replace`) one that replaces the cluster's
   * current record and so revokes its older certificates. `already_exists` when the cluster is
   * registered and `replace` is false, or when a concurrent registration won.
   */
  register(
    cluster: string,
    certificate: IssuedSerial,
    replace: boolean,
    options?: OperationOptions,
  ): Promise<ClusterIdentityRecord>;
  /**
   * Adds a renewed certificate; keeps the previous one while it is valid. `unauthenticated` when
   * the cluster is not registered (removed meanwhile).
   */
  renew(
    cluster: string,
    certificate: IssuedSerial,
    options?: OperationOptions,
  ): Promise<ClusterIdentityRecord>;
  /** Whether the certificate `serial` of `cluster` is one the hub issued and still honours. */
  holds(
    cluster: string,
    serial: string,
    options?: OperationOptions,
  ): Promise<boolean>;
  /** Deletes the cluster's identity (RemoveCluster); refused by {@link holds} at once. */
  forget(cluster: string, options?: OperationOptions): Promise<void>;
}

export interface ClusterIdentitiesDeps {
  readonly store: StateStore;
  readonly now: () => number;
  /** Absent: agents have no NATS users of their own (nothing to revoke). */
  readonly natsUsers?: NatsUserRevoker;
}

/** The NATS users of `record`'s certificates that have not expired yet. */
function liveNatsUsers(
  record: ClusterIdentityRecord | undefined,
  nowMs: number,
): { publicKey: string; expiresAtMs: number }[] {
  return (record?.certificates ?? []).flatMap((c) =>
    c.natsUser !== undefined && c.expiresAtMs > nowMs
      ? [{ publicKey: c.natsUser, expiresAtMs: c.expiresAtMs }]
      : [],
  );
}

export function createClusterIdentities(
  deps: ClusterIdentitiesDeps,
): ClusterIdentities {
  const { store, now } = deps;
  const revoke = async (
    record: ClusterIdentityRecord | undefined,
    options: OperationOptions | undefined,
  ): Promise<void> => {
    const users = liveNatsUsers(record, now());
    if (users.length > 0) await deps.natsUsers?.revoke(users, options);
  };
  // Removed in this process and not registered again since: refused before the store says so.
  const forgotten = new Set<string>();

  return {
    async get(cluster, options) {
      return (await store.get(IDENTITIES, nameKey(cluster), options))?.value;
    },

    async register(cluster, certificate, replace, options) {
      const key = nameKey(cluster);
      const existing = await store.get(IDENTITIES, key, options);
      if (existing !== undefined && !replace) {
        throw new FlotillaError(
          "already_exists",
          `Cluster ${showValue(cluster)} is already registered: registering it again needs a bootstrap token bound to its name`,
        );
      }
      const record: ClusterIdentityRecord = {
        cluster,
        registeredAtMs: now(),
        certificates: [certificate],
      };
      try {
        await store.put(IDENTITIES, key, record, {
          ...options,
          expectedRevision: existing?.revision ?? 0,
        });
      } catch (error) {
        if (!isRevisionConflict(error)) throw error;
        throw new FlotillaError(
          "already_exists",
          `Cluster ${showValue(cluster)} was registered by another request at the same time`,
          { cause: error },
        );
      }
      forgotten.delete(cluster);
      // The replaced certificates' NATS users stop working with them.
      await revoke(existing?.value, options);
      return record;
    },

    async renew(cluster, certificate, options) {
      const key = nameKey(cluster);
      for (;;) {
        const existing = forgotten.has(cluster)
          ? undefined
          : await store.get(IDENTITIES, key, options);
        if (existing === undefined) {
          throw new FlotillaError(
            "unauthenticated",
            `Cluster ${showValue(cluster)} is not registered (it was removed from the fleet)`,
          );
        }
        const nowMs = now();
        const [current] = existing.value.certificates;
        const record: ClusterIdentityRecord = {
          ...existing.value,
          certificates: [
            certificate,
            ...(current !== undefined && current.expiresAtMs > nowMs
              ? [current]
              : []),
          ],
        };
        try {
          await store.put(IDENTITIES, key, record, {
            ...options,
            expectedRevision: existing.revision,
          });
          return record;
        } catch (error) {
          if (!isRevisionConflict(error)) throw error;
        }
      }
    },

    async holds(cluster, serial, options) {
      if (forgotten.has(cluster)) return false;
      const record = (await store.get(IDENTITIES, nameKey(cluster), options))
        ?.value;
      const nowMs = now();
      return (
        record?.certificates.some(
          (c) => c.serial === serial && c.expiresAtMs >= nowMs,
        ) ?? false
      );
    },

    async forget(cluster, options) {
      forgotten.add(cluster);
      const key = nameKey(cluster);
      try {
        await revoke(
          (await store.get(IDENTITIES, key, options))?.value,
          options,
        );
        await store.delete(IDENTITIES, key, options);
      } catch (error) {
        // Not removed: the cluster stays as it was, and the removal can be asked for again.
        forgotten.delete(cluster);
        throw error;
      }
    },
  };
}
