/**
 * The lease keeper: each replica's loop that decides which units of scheduling work it owns
 * (docs/high-availability.md). Every round it
 * 1. writes its own replica record (id, incarnation, version, settings, what it holds), which
 *    expires with the bucket's TTL when the replica dies;
 * 2. renews every lease it holds with compare-and-set; a renewal that loses, or no renewal for
 *    most of a TTL, loses the lease at once;
 * 3. reads the replicas and leases, and for every unit that exists computes the preferred owner
 *    among the live replicas that may take leases (rendezvous hashing); it takes a free unit it
 *    is preferred for (or any unit left free for several rounds), and hands a unit it holds to the
 *    preferred replica once that one has been seen live for two rounds.
 *
 * A lease's **epoch** is the bucket revision at which it was taken. It only grows, so a write
 * fenced with an epoch (the run journal, intents) tells a newer owner's writes from a deposed
 * owner's. A restarted replica (same id, new incarnation) takes its own leases back at once, with
 * a new epoch, instead of waiting for them to expire; so does a replica that gave its leases up
 * when it lost NATS, once it is back.
 *
 * Compatibility: replicas with different versions or settings must not share work. When a live
 * replica differs, the newer one (by version; by start time when versions are equal) takes no
 * leases and says why in its log until the difference is gone.
 */
import type { Clock } from "@flotilla/node";
import type { Logger } from "pino";
import { z } from "zod";
import { decodeKeyToken, leaseKey, replicaKey } from "../store/keys.js";
import type { LeaseBucket } from "./lease-bucket.js";
import { preferredReplica } from "./rendezvous.js";

/** Who this replica is. */
export interface ReplicaIdentity {
  /** Stable across restarts (pod name, or host and listen address). */
  readonly id: string;
  /** New on every start. */
  readonly incarnation: string;
  /** The hub's gRPC address as agents and admins reach it. */
  readonly address: string;
  readonly version: string;
  /** Settings every replica must share; a difference stops the newer replica taking leases. */
  readonly settings: Readonly<Record<string, string | number>>;
  readonly startedAtMs: number;
}

/** A replica as it announces itself in the bucket. */
export interface ReplicaRecord extends ReplicaIdentity {
  /** False while it refuses leases (an incompatible replica is live). */
  readonly eligible: boolean;
  /** Agent sessions it holds. */
  readonly sessions: number;
  /** Units it holds leases on. */
  readonly leases: readonly string[];
  /** When it wrote this record. */
  readonly seenAtMs: number;
}

/** A lease this replica holds. */
export interface Lease {
  readonly unit: string;
  readonly epoch: number;
  /** The revision of its latest write (what a renewal compares against). */
  readonly revision: number;
  /** Past this instant (local clock) the lease counts as lost unless renewed. */
  readonly validUntilMs: number;
}

/** Who holds a unit, as last read. */
export interface LeaseHolder {
  readonly replica: string;
  readonly epoch: number;
}

export interface LeaseKeeperDeps {
  readonly bucket: LeaseBucket;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly self: ReplicaIdentity;
  /** The units that exist now (runs not finished, `bundles`, ...). */
  readonly units: () => Iterable<string>;
  /** Agent sessions this replica holds (for its record). */
  readonly sessions?: () => number;
  /** This replica now owns `unit` with `lease.epoch`; resolves once it acts as owner. */
  readonly onAcquired: (unit: string, lease: Lease) => Promise<void> | void;
  /** This replica no longer owns `unit`: stop writing for it at once. */
  readonly onLost: (unit: string, reason: string) => void;
  /** Before handing `unit` to another replica: resolves when nothing is being written for it. */
  readonly onReleasing?: (unit: string) => Promise<void>;
  /** Time between rounds; default a quarter of the TTL. */
  readonly roundEveryMs?: number;
  /**
   * This replica took `unit`; `from` is the replica that held it last (its lease may have expired
   * or been released since), undefined for a unit never seen held.
   */
  readonly onTakeover?: (unit: string, from: string | undefined) => void;
}

export interface LeaseKeeper {
  /** Runs the first round (so a single replica owns everything before it serves), then loops. */
  start(): Promise<void>;
  /** Stops the loop and releases every lease, so other replicas take over at once. */
  stop(): Promise<void>;
  /** One round now (tests; also what the loop runs). */
  round(): Promise<void>;
  /** The lease held on `unit`, if any. */
  held(unit: string): Lease | undefined;
  /** Every lease held. */
  heldUnits(): readonly string[];
  /** Who holds each unit, as of the last round (this replica included). */
  holders(): ReadonlyMap<string, LeaseHolder>;
  /** The live replicas as of the last round, this one included. */
  replicas(): readonly ReplicaRecord[];
  /** False while this replica refuses leases. */
  readonly eligible: boolean;
  /** Gives up every lease locally at once (NATS lost); they are taken again by later rounds. */
  dropAll(reason: string): void;
}

const leaseValue = z.object({
  holder: z.string(),
  incarnation: z.string(),
  epoch: z.number().int().nonnegative(),
});
type LeaseValue = z.infer<typeof leaseValue>;

const replicaValue = z.object({
  id: z.string(),
  incarnation: z.string(),
  address: z.string(),
  version: z.string(),
  settings: z.record(z.string(), z.union([z.string(), z.number()])),
  startedAtMs: z.number(),
  eligible: z.boolean(),
  sessions: z.number(),
  leases: z.array(z.string()),
  seenAtMs: z.number(),
});

/** Rounds a unit stays free before a replica that is not preferred takes it anyway. */
const FREE_ROUNDS_BEFORE_ANY = 3;
/** Rounds a preferred replica must be seen live before a unit is handed to it. */
const LIVE_ROUNDS_BEFORE_HANDOFF = 2;

export function createLeaseKeeper(deps: LeaseKeeperDeps): LeaseKeeper {
  const { bucket, clock, self } = deps;
  const log = deps.logger;
  const ttl = bucket.ttlMs;
  const roundEvery = deps.roundEveryMs ?? Math.max(50, Math.floor(ttl / 4));
  // Renewals start at most `roundEvery` apart; a lease is trusted for 3/4 of the TTL after the
  // start of its last successful write, which leaves a round's time before the server drops it.
  const trustMs = Math.floor((ttl * 3) / 4);
  const held = new Map<string, Lease>();
  let holders = new Map<string, LeaseHolder>();
  /** The last holder seen of each unit, kept after its lease expired or was released. */
  const lastHolders = new Map<string, string>();
  let replicas: ReplicaRecord[] = [];
  const liveRounds = new Map<string, number>();
  const freeRounds = new Map<string, number>();
  const releasing = new Set<string>();
  let eligible = true;
  let refusal: string | undefined;
  let loop: AbortController | undefined;
  let running: Promise<void> | undefined;
  let current: Promise<void> = Promise.resolve();

  const lose = (unit: string, reason: string): void => {
    if (!held.delete(unit)) return;
    log.warn({ unit, reason }, "lease lost: no longer the owner");
    deps.onLost(unit, reason);
  };

  const record = (): ReplicaRecord => ({
    ...self,
    eligible,
    sessions: deps.sessions?.() ?? 0,
    leases: [...held.keys()].sort(),
    seenAtMs: clock.now(),
  });

  const renew = async (lease: Lease, startedAt: number): Promise<void> => {
    const value: LeaseValue = {
      holder: self.id,
      incarnation: self.incarnation,
      epoch: lease.epoch,
    };
    try {
      const revision = await bucket.update(
        leaseKey(lease.unit),
        value,
        lease.revision,
      );
      if (held.get(lease.unit) !== lease) return;
      if (revision === undefined) {
        lose(lease.unit, "another replica holds it now");
        return;
      }
      held.set(lease.unit, {
        ...lease,
        revision,
        validUntilMs: startedAt + trustMs,
      });
    } catch (error) {
      if (held.get(lease.unit) !== lease) return;
      if (clock.now() >= lease.validUntilMs) {
        lose(lease.unit, `not renewed in time: ${String(error)}`);
      } else {
        log.debug({ unit: lease.unit, err: error }, "lease not renewed yet");
      }
    }
  };

  /** Whether this replica may take leases, given the live replicas. */
  const decideEligibility = (others: readonly ReplicaRecord[]): void => {
    let reason: string | undefined;
    for (const other of others) {
      const difference = incompatibility(self, other);
      if (difference === undefined) continue;
      if (isNewer(self, other)) {
        reason = `replica ${other.id} (version ${other.version}, started ${new Date(other.startedAtMs).toISOString()}) ${difference}; this replica (version ${self.version}) takes no leases until every replica runs the same version with the same settings`;
        break;
      }
    }
    if (reason !== refusal) {
      if (reason === undefined) {
        log.info("replicas are compatible again: taking leases");
      } else log.error({ reason }, `not taking leases: ${reason}`);
      refusal = reason;
    }
    eligible = reason === undefined;
  };

  const take = async (
    unit: string,
    existing: { revision: number; value: LeaseValue } | undefined,
  ): Promise<void> => {
    const startedAt = clock.now();
    const value = { holder: self.id, incarnation: self.incarnation, epoch: 0 };
    const revision =
      existing === undefined
        ? await bucket.create(leaseKey(unit), value)
        : await bucket.update(leaseKey(unit), value, existing.revision);
    if (revision === undefined) return;
    // The epoch is the revision the lease was taken at; renewals carry it.
    const lease: Lease = {
      unit,
      epoch: revision,
      revision,
      validUntilMs: startedAt + trustMs,
    };
    held.set(unit, lease);
    deps.onTakeover?.(unit, existing?.value.holder ?? lastHolders.get(unit));
    log.info({ unit, epoch: revision }, "lease taken: now the owner");
    try {
      await deps.onAcquired(unit, lease);
    } catch (error) {
      log.error(
        { unit, err: error },
        "cannot act as owner; giving the lease up",
      );
      await release(unit);
    }
  };

  const release = async (unit: string): Promise<void> => {
    const lease = held.get(unit);
    if (lease === undefined || releasing.has(unit)) return;
    releasing.add(unit);
    try {
      await deps.onReleasing?.(unit);
      const latest = held.get(unit);
      held.delete(unit);
      deps.onLost(unit, "handed to another replica");
      if (latest !== undefined) {
        await bucket.delete(leaseKey(unit), latest.revision).catch(() => false);
      }
    } finally {
      releasing.delete(unit);
    }
  };

  const roundOnce = async (): Promise<void> => {
    const startedAt = clock.now();
    for (const lease of [...held.values()]) {
      if (startedAt >= lease.validUntilMs)
        lose(lease.unit, "not renewed in time");
    }
    await Promise.all([...held.values()].map((l) => renew(l, startedAt)));
    await bucket.put(replicaKey(self.id), record());

    const [replicaEntries, leaseEntries] = await Promise.all([
      bucket.list("replica."),
      bucket.list("lease."),
    ]);
    const live: ReplicaRecord[] = [];
    for (const entry of replicaEntries) {
      const parsed = replicaValue.safeParse(entry.value);
      if (parsed.success) live.push(parsed.data);
    }
    replicas = live;
    const others = live.filter(
      (r) => !(r.id === self.id && r.incarnation === self.incarnation),
    );
    const duplicate = others.find((r) => r.id === self.id);
    decideEligibility(others.filter((r) => r.id !== self.id));
    if (duplicate !== undefined) {
      // Our own record was rewritten by another process with our id: the newest start wins.
      log.error(
        { replica: self.id, other: duplicate.incarnation },
        `another hub uses replica id ${self.id}; give each replica its own --replica-id`,
      );
    }
    const seen = new Set(live.map((r) => r.id));
    for (const id of [...liveRounds.keys()]) {
      if (!seen.has(id)) liveRounds.delete(id);
    }
    for (const id of seen) liveRounds.set(id, (liveRounds.get(id) ?? 0) + 1);

    const leases = new Map<string, { revision: number; value: LeaseValue }>();
    for (const entry of leaseEntries) {
      const parsed = leaseValue.safeParse(entry.value);
      if (!parsed.success) continue;
      const unit = decodeKeyToken(entry.key.slice("lease.".length));
      leases.set(unit, { revision: entry.revision, value: parsed.data });
    }
    const nextHolders = new Map<string, LeaseHolder>();
    for (const [unit, lease] of leases) {
      nextHolders.set(unit, {
        replica: lease.value.holder,
        epoch: lease.value.epoch === 0 ? lease.revision : lease.value.epoch,
      });
    }
    holders = nextHolders;
    for (const [unit, holder] of nextHolders)
      lastHolders.set(unit, holder.replica);

    const candidates = live
      .filter((r) => r.eligible && r.id !== self.id)
      .map((r) => r.id);
    if (eligible) candidates.push(self.id);
    const units = new Set(deps.units());
    const work: Promise<void>[] = [];
    for (const unit of units) {
      const mine = held.get(unit);
      const stored = leases.get(unit);
      const preferred = preferredReplica(unit, candidates);
      if (mine !== undefined) {
        if (!eligible) work.push(release(unit));
        else if (
          preferred !== undefined &&
          preferred !== self.id &&
          (liveRounds.get(preferred) ?? 0) >= LIVE_ROUNDS_BEFORE_HANDOFF
        ) {
          work.push(release(unit));
        }
        continue;
      }
      if (!eligible) continue;
      if (stored !== undefined) {
        freeRounds.delete(unit);
        // Our own lease that we do not act on (a previous incarnation's, or one given up when
        // NATS was lost): take it back now, with a new epoch, rather than wait for it to expire.
        // The compare-and-set fails if anyone else took it meanwhile.
        if (stored.value.holder === self.id && duplicate === undefined) {
          work.push(take(unit, stored));
        }
        continue;
      }
      const rounds = (freeRounds.get(unit) ?? 0) + 1;
      freeRounds.set(unit, rounds);
      if (preferred === self.id || rounds > FREE_ROUNDS_BEFORE_ANY) {
        work.push(take(unit, undefined));
      }
    }
    for (const unit of [...held.keys()]) {
      if (!units.has(unit)) work.push(release(unit));
    }
    for (const unit of [...freeRounds.keys()]) {
      if (!units.has(unit)) freeRounds.delete(unit);
    }
    for (const unit of [...lastHolders.keys()]) {
      if (!units.has(unit)) lastHolders.delete(unit);
    }
    await Promise.all(work);
  };

  const round = (): Promise<void> => {
    // Rounds never overlap: a slow round delays the next.
    const next = current.then(roundOnce, roundOnce);
    current = next.catch((error: unknown) => {
      log.warn({ err: error }, "lease round failed");
    });
    return next;
  };

  return {
    async start() {
      await round();
      const controller = new AbortController();
      loop = controller;
      running = (async () => {
        while (!controller.signal.aborted) {
          try {
            await clock.sleep(roundEvery, { signal: controller.signal });
          } catch {
            return;
          }
          await round().catch(() => undefined);
        }
      })();
    },

    async stop() {
      loop?.abort();
      await running;
      await current;
      await Promise.all([...held.keys()].map((unit) => release(unit)));
      const own = await bucket
        .list(replicaKey(self.id))
        .catch(() => [] as const);
      for (const entry of own) {
        const parsed = replicaValue.safeParse(entry.value);
        if (parsed.success && parsed.data.incarnation === self.incarnation) {
          await bucket.delete(entry.key, entry.revision).catch(() => false);
        }
      }
    },

    round,
    held: (unit) => held.get(unit),
    heldUnits: () => [...held.keys()].sort(),
    holders: () => holders,
    replicas: () => replicas,
    get eligible() {
      return eligible;
    },
    dropAll(reason) {
      for (const unit of [...held.keys()]) lose(unit, reason);
    },
  };
}

/** How `other` differs from `self` in version or settings, or undefined when it does not. */
function incompatibility(
  self: ReplicaIdentity,
  other: ReplicaRecord,
): string | undefined {
  if (other.version !== self.version) return `runs version ${other.version}`;
  const names = new Set([
    ...Object.keys(self.settings),
    ...Object.keys(other.settings),
  ]);
  const differences: string[] = [];
  for (const name of [...names].sort()) {
    const mine = self.settings[name];
    const theirs = other.settings[name];
    if (mine !== theirs) {
      differences.push(`${name}=${String(theirs)} (here ${String(mine)})`);
    }
  }
  return differences.length === 0
    ? undefined
    : `runs with other settings: ${differences.join(", ")}`;
}

/** Whether `self` is the newer of two incompatible replicas (it then yields). */
function isNewer(self: ReplicaIdentity, other: ReplicaRecord): boolean {
  const order = compareVersions(self.version, other.version);
  if (order !== 0) return order > 0;
  if (self.startedAtMs !== other.startedAtMs) {
    return self.startedAtMs > other.startedAtMs;
  }
  return self.id > other.id;
}

/** Compares dotted versions numerically where both parts are numbers (`0.10.0` > `0.9.1`). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/);
  const pb = b.split(/[.+-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? "";
    const y = pb[i] ?? "";
    if (x === y) continue;
    const nx = Number(x);
    const ny = Number(y);
    if (x !== "" && y !== "" && Number.isInteger(nx) && Number.isInteger(ny)) {
      return nx < ny ? -1 : 1;
    }
    return x < y ? -1 : 1;
  }
  return 0;
}
