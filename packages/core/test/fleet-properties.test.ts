import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Cluster } from "../src/cluster.js";
import { formPartitions } from "../src/fleet/partitions.js";
import {
  isUnavailable,
  rolloutPass,
  type DeploymentObservation,
  type PassResult,
} from "../src/fleet/rollout-pass.js";
import type { Maintenance } from "../src/maintenance/windows.js";
import { cluster, strategy } from "./fleet-fixtures.js";
import { compact } from "../src/compact.js";

const NOW = Date.UTC(2026, 2, 2, 10);
const HOUR = 3_600_000;
const closedWindow: Maintenance = {
  windows: {
    kubernetes: [],
    nodeImage: [],
    workloads: [{ type: "OneOff", startMs: NOW + HOUR, endMs: NOW + 2 * HOUR }],
  },
  freezes: [],
};

const int = fc.integer;
const strategyArb = fc.record({
  maxUnavailable: fc.constantFrom<number | string>(
    0,
    1,
    2,
    5,
    "0%",
    "10%",
    "50%",
    "100%",
  ),
  maxUnavailablePartitions: fc.constantFrom<number | string>(0, 1, 2, "50%"),
  autoPartitionSize: fc.constantFrom<number | string>(0, 2, 3, "25%", "50%"),
  autoPartitionThreshold: fc.constantFrom(0, 1, 4, 200),
  maxNew: fc.constantFrom(0, 1, 3, 50),
  unassigned: fc.constantFrom("report", "autoPartition"),
  manual: fc.boolean(),
});

type StrategyInput =
  typeof strategyArb extends fc.Arbitrary<infer T> ? T : never;

function toRaw(s: StrategyInput): unknown {
  const { manual, ...rest } = s;
  if (!manual) return rest;
  return {
    ...rest,
    partitions: [
      {
        name: "first",
        maxUnavailable: 1,
        clusterSelector: { matchLabels: { env: "a" } },
      },
      {
        name: "second",
        clusterSelector: {
          matchExpressions: [
            { key: "env", operator: "In", values: ["a", "b"] },
          ],
        },
      },
    ],
  };
}

const revision = fc.constantFrom<string | undefined>(undefined, "r1", "r2");
const observationArb = fc.record({
  releasedRevision: revision,
  appliedRevision: revision,
  ready: fc.boolean(),
  errored: fc.boolean(),
  modified: fc.boolean(),
  unreachable: fc.boolean(),
});
const memberArb = fc.record({
  env: fc.constantFrom("a", "b", "c"),
  closed: fc.boolean(),
  observed: fc.option(observationArb, { nil: undefined }),
});
const fleetArb = fc.uniqueArray(fc.tuple(int({ min: 0, max: 60 }), memberArb), {
  selector: ([n]) => n,
  minLength: 0,
  maxLength: 30,
});

type Member = [
  number,
  { env: string; closed: boolean; observed: DeploymentObservation | undefined },
];

function build(members: readonly Member[], closedWindows = true) {
  // Unpadded names, so byte order ("c-10" < "c-2") differs from numeric order.
  const targets: Cluster[] = members.map(([n, m]) => ({
    ...cluster(`c-${String(n)}`, { env: m.env }),
    ...(m.closed && closedWindows ? { maintenance: closedWindow } : {}),
  }));
  const deployments = new Map<string, DeploymentObservation>();
  for (const [n, m] of members) {
    if (m.observed === undefined) continue;
    const { releasedRevision, appliedRevision, ...flags } = m.observed;
    deployments.set(`c-${String(n)}`, {
      ...flags,
      ...compact({ releasedRevision, appliedRevision }),
    });
  }
  return { targets, deployments };
}

const plain = (r: PassResult) => ({ ...r, states: [...r.states] });

describe("fleet rollout properties", () => {
  it("gives the same partitions and the same pass result for the same clusters in any input order", () => {
    fc.assert(
      fc.property(
        strategyArb,
        fleetArb,
        fc.boolean(),
        (raw, members, paused) => {
          const s = strategy(toRaw(raw));
          const { targets, deployments } = build(members);
          const reversed = [...targets].reverse();
          const shuffled = [...targets].sort(
            (a, b) =>
              a.name.length - b.name.length || (a.name < b.name ? 1 : -1),
          );
          const base = {
            strategy: s,
            clusterGroups: [],
            revision: "r2",
            deployments,
            nowMs: NOW,
            paused,
          };
          const expected = plain(rolloutPass({ ...base, targets }));
          for (const order of [reversed, shuffled]) {
            expect(formPartitions(s, order, [])).toEqual(
              formPartitions(s, targets, []),
            );
            expect(plain(rolloutPass({ ...base, targets: order }))).toEqual(
              expected,
            );
          }
        },
      ),
    );
  });

  it("never releases more than maxNew clusters in one pass, nor any cluster twice or one already current", () => {
    fc.assert(
      fc.property(strategyArb, fleetArb, (raw, members) => {
        const s = strategy(toRaw(raw));
        const { targets, deployments } = build(members);
        const r = rolloutPass({
          strategy: s,
          targets,
          clusterGroups: [],
          revision: "r2",
          deployments,
          nowMs: NOW,
        });
        expect(r.release.length).toBeLessThanOrEqual(s.maxNew);
        const names = r.release.map((d) => d.cluster);
        expect(new Set(names).size).toBe(names.length);
        for (const n of names)
          expect(deployments.get(n)?.releasedRevision).not.toBe("r2");
        for (const n of r.unassigned) expect(names).not.toContain(n);
      }),
    );
  });

  it("never lifts bundle-wide unavailability above max(limit, 1) with updates, unless it already was", () => {
    const healthyUpdate = fc.record({
      env: fc.constantFrom("a", "b", "c"),
      closed: fc.constant(false),
      observed: fc.record({
        releasedRevision: fc.constantFrom("r1", "r2"),
        appliedRevision: fc.constantFrom("r1", "r2"),
        ready: fc.boolean(),
        errored: fc.constant(false),
        modified: fc.boolean(),
        unreachable: fc.constant(false),
      }),
    });
    const updateFleet = fc.uniqueArray(
      fc.tuple(int({ min: 0, max: 60 }), healthyUpdate),
      {
        selector: ([n]) => n,
        maxLength: 30,
      },
    );
    fc.assert(
      fc.property(strategyArb, updateFleet, (raw, members) => {
        const s = strategy(toRaw(raw));
        const { targets, deployments } = build(members, false);
        const before = [...deployments.values()].filter(isUnavailable).length;
        const r = rolloutPass({
          strategy: s,
          targets,
          clusterGroups: [],
          revision: "r2",
          deployments,
          nowMs: NOW,
        });
        expect(r.release.every((d) => d.kind === "update")).toBe(true);
        expect(r.unavailable).toBeLessThanOrEqual(
          Math.max(before, Math.max(r.limits.maxUnavailable, 1)),
        );
        for (const p of r.partitions) {
          const partitionBefore = p.clusters.filter((n) => {
            const o = deployments.get(n);
            return o !== undefined && isUnavailable(o);
          }).length;
          expect(p.unavailable).toBeLessThanOrEqual(
            Math.max(partitionBefore, Math.max(p.maxUnavailable, 1)),
          );
        }
      }),
    );
  });
});
