import { createManualClock, type ManualClock } from "@flotilla/node/testing";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import {
  createLeaseKeeper,
  createMemoryLeaseBucket,
  type LeaseBucket,
  type LeaseKeeper,
} from "@flotilla/hub/testing";

const TTL = 4_000;

interface Replica {
  readonly keeper: LeaseKeeper;
  readonly events: string[];
  readonly logs: string[];
}

function replica(
  bucket: LeaseBucket,
  clock: ManualClock,
  id: string,
  units: () => Iterable<string>,
  options: {
    version?: string;
    incarnation?: string;
    startedAtMs?: number;
    settings?: Record<string, string | number>;
  } = {},
): Replica {
  const events: string[] = [];
  const logs: string[] = [];
  const logger = pino(
    { level: "info" },
    { write: (line: string) => logs.push(line) },
  );
  const keeper = createLeaseKeeper({
    bucket,
    clock,
    logger,
    self: {
      id,
      incarnation: options.incarnation ?? `${id}-1`,
      address: `${id}:7070`,
      version: options.version ?? "1.0.0",
      settings: options.settings ?? { leaseTtlMs: TTL },
      startedAtMs: options.startedAtMs ?? clock.now(),
    },
    units,
    onAcquired: (unit, lease) => {
      events.push(`+${unit}@${String(lease.epoch)}`);
    },
    onLost: (unit, reason) => {
      events.push(`-${unit}: ${reason}`);
    },
  });
  return { keeper, events, logs };
}

const UNITS = [
  "bundles",
  ...Array.from({ length: 12 }, (_, i) => `run/r${String(i)}`),
];

function setup(): { clock: ManualClock; bucket: LeaseBucket } {
  const clock = createManualClock();
  const bucket = createMemoryLeaseBucket({ ttlMs: TTL, clock });
  return { clock, bucket };
}

/** Every unit has exactly one holder among `replicas`. */
function expectExclusive(replicas: readonly Replica[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const unit of UNITS) {
    const owners = replicas.filter((r) => r.keeper.held(unit) !== undefined);
    expect(owners.length, unit).toBe(1);
  }
  replicas.forEach((r, i) =>
    counts.set(String(i), r.keeper.heldUnits().length),
  );
  return counts;
}

describe("lease keeper", () => {
  it("a single replica owns every unit after its first round", async () => {
    const { clock, bucket } = setup();
    await bucket.start();
    const a = replica(bucket, clock, "a", () => UNITS);
    await a.keeper.round();
    expect(a.keeper.heldUnits()).toEqual([...UNITS].sort());
    const epochs = UNITS.map((u) => a.keeper.held(u)?.epoch ?? 0);
    expect(new Set(epochs).size).toBe(UNITS.length);
  });

  it("spreads units over replicas, one owner each, and hands units over when a replica joins", async () => {
    const { clock, bucket } = setup();
    await bucket.start();
    const a = replica(bucket, clock, "a", () => UNITS);
    await a.keeper.round();
    const b = replica(bucket, clock, "b", () => UNITS);
    const c = replica(bucket, clock, "c", () => UNITS);
    for (let i = 0; i < 6; i++) {
      for (const r of [a, b, c]) await r.keeper.round();
      await clock.advance(500);
    }
    const counts = expectExclusive([a, b, c]);
    for (const n of counts.values()) expect(n).toBeGreaterThan(0);
    // Every replica agrees on who holds what.
    const view = (r: Replica): string[] =>
      [...r.keeper.holders()].map(([u, h]) => `${u}=${h.replica}`).sort();
    expect(view(b)).toEqual(view(a));
  });

  it("takes over the units of a replica that stopped renewing, with a higher epoch, and the deposed one learns it lost them", async () => {
    const { clock, bucket } = setup();
    await bucket.start();
    const a = replica(bucket, clock, "a", () => UNITS);
    const b = replica(bucket, clock, "b", () => UNITS);
    for (let i = 0; i < 4; i++) {
      await a.keeper.round();
      await b.keeper.round();
      await clock.advance(500);
    }
    const aUnits = a.keeper.heldUnits();
    expect(aUnits.length).toBeGreaterThan(0);
    const epochs = new Map(
      aUnits.map((u) => [u, a.keeper.held(u)?.epoch ?? 0]),
    );
    // `a` is paused: only `b` runs rounds until a's leases and record have expired.
    let rounds = 0;
    while (b.keeper.heldUnits().length < UNITS.length) {
      await clock.advance(500);
      await b.keeper.round();
      rounds += 1;
      expect(rounds).toBeLessThan(20);
    }
    // Taken within the TTL plus the rounds a free unit waits for its preferred owner.
    expect(rounds * 500).toBeLessThanOrEqual(TTL + 4 * 500);
    for (const unit of aUnits) {
      expect(b.keeper.held(unit)?.epoch ?? 0).toBeGreaterThan(
        epochs.get(unit) ?? 0,
      );
    }
    // `a` wakes up: its first round finds it holds nothing.
    await a.keeper.round();
    expect(a.keeper.heldUnits()).toEqual([]);
    for (const unit of aUnits) {
      expect(a.events.some((e) => e.startsWith(`-${unit}:`))).toBe(true);
    }
    expectExclusive([a, b]);
  });

  it("a restarted replica (same id, new incarnation) takes its leases back at once with new epochs", async () => {
    const { clock, bucket } = setup();
    await bucket.start();
    const first = replica(bucket, clock, "a", () => UNITS);
    await first.keeper.round();
    const before = first.keeper.held("bundles")?.epoch ?? 0;
    const second = replica(bucket, clock, "a", () => UNITS, {
      incarnation: "a-2",
    });
    await second.keeper.round();
    expect(second.keeper.heldUnits()).toEqual([...UNITS].sort());
    expect(second.keeper.held("bundles")?.epoch ?? 0).toBeGreaterThan(before);
  });

  it("after giving its leases up (NATS lost), a replica takes them back at its next round with new epochs", async () => {
    const { clock, bucket } = setup();
    await bucket.start();
    const a = replica(bucket, clock, "a", () => UNITS);
    await a.keeper.round();
    const before = a.keeper.held("bundles")?.epoch ?? 0;
    a.keeper.dropAll("the NATS connection is lost");
    expect(a.keeper.heldUnits()).toEqual([]);
    expect(a.events).toContain("-bundles: the NATS connection is lost");
    await a.keeper.round();
    expect(a.keeper.heldUnits()).toEqual([...UNITS].sort());
    expect(a.keeper.held("bundles")?.epoch ?? 0).toBeGreaterThan(before);
  });

  it("a replica of another version takes no leases while an older one is live, and says why", async () => {
    const { clock, bucket } = setup();
    await bucket.start();
    const old = replica(bucket, clock, "a", () => UNITS, { version: "1.0.0" });
    await old.keeper.round();
    const newer = replica(bucket, clock, "b", () => UNITS, {
      version: "1.1.0",
    });
    for (let i = 0; i < 6; i++) {
      await old.keeper.round();
      await newer.keeper.round();
      await clock.advance(500);
    }
    expect(newer.keeper.eligible).toBe(false);
    expect(newer.keeper.heldUnits()).toEqual([]);
    expect(old.keeper.heldUnits().length).toBe(UNITS.length);
    expect(newer.logs.join("")).toContain("replica a (version 1.0.0");
    // The old one leaves: the newer one takes everything.
    await old.keeper.stop();
    await newer.keeper.round();
    await newer.keeper.round();
    expect(newer.keeper.eligible).toBe(true);
    expect(newer.keeper.heldUnits().length).toBe(UNITS.length);
  });

  it("different settings: the later started replica refuses, naming the setting", async () => {
    const { clock, bucket } = setup();
    await bucket.start();
    const a = replica(bucket, clock, "a", () => UNITS, {
      settings: { leaseTtlMs: TTL },
    });
    await a.keeper.round();
    await clock.advance(100);
    const b = replica(bucket, clock, "b", () => UNITS, {
      settings: { leaseTtlMs: 9_000 },
    });
    await b.keeper.round();
    expect(b.keeper.eligible).toBe(false);
    expect(b.logs.join("")).toContain("leaseTtlMs=4000 (here 9000)");
    expect(a.keeper.eligible).toBe(true);
  });

  it("stop() releases every lease so another replica takes over at once", async () => {
    const { clock, bucket } = setup();
    await bucket.start();
    const a = replica(bucket, clock, "a", () => UNITS);
    const b = replica(bucket, clock, "b", () => UNITS);
    await a.keeper.round();
    await b.keeper.round();
    await a.keeper.stop();
    // The freed units are preferred for b now that a's record is gone.
    await b.keeper.round();
    expect(b.keeper.heldUnits().length).toBe(UNITS.length);
  });

  it("a unit that no longer exists is released", async () => {
    const { clock, bucket } = setup();
    await bucket.start();
    let units = UNITS;
    const a = replica(bucket, clock, "a", () => units);
    await a.keeper.round();
    units = UNITS.filter((u) => u !== "run/r3");
    await a.keeper.round();
    expect(a.keeper.held("run/r3")).toBeUndefined();
    expect(a.events).toContain("-run/r3: handed to another replica");
  });
});
