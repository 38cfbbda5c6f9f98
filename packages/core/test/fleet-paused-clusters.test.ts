/**
 * Paused clusters in partitioned rollouts (docs/semantics.md#paused-clusters): a paused cluster
 * (Fleet's Cluster `spec.paused`, `paused: true` in a clusters file) receives nothing new and does
 * not count as unavailable, for the bundle or for its partition.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseClusters, type Cluster } from "../src/cluster.js";
import {
  rolloutPass,
  type DeploymentObservation,
} from "../src/fleet/rollout-pass.js";
import { plan } from "../src/plan.js";
import { simulate } from "../src/simulate.js";
import {
  allReady,
  cluster,
  fleetOf,
  notReadyAt,
  readyAt,
  strategy,
} from "./fleet-fixtures.js";
import { compact } from "../src/compact.js";

const NOW = Date.UTC(2026, 2, 2, 10);
const paused = (c: Cluster): Cluster => ({ ...c, paused: true });
const unreachable = (o: DeploymentObservation): DeploymentObservation => ({
  ...o,
  unreachable: true,
});

function pass(
  targets: readonly Cluster[],
  deployments: ReadonlyMap<string, DeploymentObservation>,
  raw: unknown = { maxUnavailable: 1 },
  revision = "r2",
) {
  return rolloutPass({
    strategy: strategy(raw),
    targets,
    clusterGroups: [],
    revision,
    deployments,
    nowMs: NOW,
  });
}

describe("a paused cluster in a pass", () => {
  const four = fleetOf(4);
  const names = four.map((c) => c.name);

  it.each([
    [
      "is never released, and is held with reason Paused",
      [paused(cluster("c-000")), ...four.slice(1)],
      allReady(names, "r1"),
      ["c-001"],
    ],
    [
      "does not hold a slot while it is NotReady at an older revision",
      [paused(cluster("c-000")), ...four.slice(1)],
      new Map([...allReady(names, "r1"), ["c-000", notReadyAt("r1")]]),
      ["c-001"],
    ],
    [
      "does not hold a slot while its agent is unreachable",
      [paused(cluster("c-000")), ...four.slice(1)],
      new Map([
        ...allReady(names, "r1"),
        ["c-000", unreachable(readyAt("r1"))],
      ]),
      ["c-001"],
    ],
    [
      "is not deployed for the first time either",
      [paused(cluster("c-000")), ...four.slice(1)],
      new Map<string, DeploymentObservation>(),
      ["c-001", "c-002", "c-003"],
    ],
  ] as const)("%s", (_what, targets, deployments, released) => {
    const result = pass(targets, deployments);
    expect(result.release.map((r) => r.cluster)).toEqual(released);
    expect(result.held.find((h) => h.cluster === "c-000")).toMatchObject({
      reason: "Paused",
      message: "cluster is paused",
    });
  });

  it("is left out of the bundle's and its partition's unavailable counts and of the partition's NotReady count", () => {
    const targets = [paused(cluster("c-000")), ...four.slice(1)];
    const deployments = new Map([
      ...allReady(names, "r2"),
      ["c-000", notReadyAt("r1")],
    ]);
    const result = pass(targets, deployments, { maxUnavailable: 0 });
    expect(result.unavailable).toBe(0);
    expect(result.partitions[0]).toMatchObject({
      unavailable: 0,
      notReadyCount: 0,
      notReady: false,
    });
    expect(result.states.get("c-000")).toBe("NotReady");
  });

  it("does not keep its partition NotReady, so the next partition starts", () => {
    const targets = [
      paused(cluster("a-1", { ring: "a" })),
      cluster("a-2", { ring: "a" }),
      cluster("b-1", { ring: "b" }),
    ];
    const result = pass(
      targets,
      new Map([
        ["a-1", readyAt("r1")],
        ["a-2", readyAt("r2")],
        ["b-1", readyAt("r1")],
      ]),
      {
        maxUnavailable: 0,
        partitions: [
          { name: "a", clusterSelector: { matchLabels: { ring: "a" } } },
          { name: "b", clusterSelector: { matchLabels: { ring: "b" } } },
        ],
      },
    );
    expect(result.stoppedAfter).toBeUndefined();
    expect(result.release.map((r) => r.cluster)).toEqual(["b-1"]);
  });

  it("never changes what the other clusters get, whatever its own state (property)", () => {
    const observation = fc.record({
      releasedRevision: fc.constantFrom(undefined, "r1", "r2"),
      appliedRevision: fc.constantFrom(undefined, "r1", "r2"),
      ready: fc.boolean(),
      errored: fc.boolean(),
      modified: fc.boolean(),
      unreachable: fc.boolean(),
    });
    const clean = (o: {
      releasedRevision: string | undefined;
      appliedRevision: string | undefined;
      ready: boolean;
      errored: boolean;
      modified: boolean;
      unreachable: boolean;
    }): DeploymentObservation => {
      const { releasedRevision, appliedRevision, ...rest } = o;
      return {
        ...rest,
        ...compact({ releasedRevision, appliedRevision }),
      };
    };
    fc.assert(
      fc.property(
        fc.array(observation, { minLength: 6, maxLength: 6 }),
        observation,
        fc.integer({ min: 0, max: 5 }),
        fc.constantFrom<number | string>(0, 1, 2, "50%"),
        (others, alternative, which, maxUnavailable) => {
          const fleet = fleetOf(6).map((c, i) => (i === which ? paused(c) : c));
          const base = new Map(
            fleet.map((c, i) => [c.name, clean(others[i] ?? alternative)]),
          );
          const changed = new Map(base);
          changed.set(fleet[which]?.name ?? "", clean(alternative));
          const raw = {
            maxUnavailable,
            autoPartitionSize: 2,
            autoPartitionThreshold: 4,
          };
          const a = pass(fleet, base, raw);
          const b = pass(fleet, changed, raw);
          expect(a.release).toEqual(b.release);
          expect(a.release.map((r) => r.cluster)).not.toContain(
            fleet[which]?.name,
          );
          expect(a.unavailable).toBe(b.unavailable);
        },
      ),
    );
  });
});

describe("paused in a clusters file", () => {
  it("reads `paused: true` as Fleet's Cluster spec.paused, and refuses a non-boolean", () => {
    const parsed = parseClusters([
      { name: "c-1", paused: true },
      { name: "c-2", paused: false },
      { name: "c-3" },
    ]);
    expect(parsed.ok && parsed.value.map((c) => c.paused)).toEqual([
      true,
      undefined,
      undefined,
    ]);
    expect(parseClusters([{ name: "c-1", paused: "yes" }])).toEqual({
      ok: false,
      problems: [
        { path: "[0].paused", message: "must be boolean", value: "yes" },
      ],
    });
  });

  it("is listed by plan in a PausedClusters warning", () => {
    const planned = plan({
      clusters: [
        { name: "c-1", paused: true },
        { name: "c-2" },
        { name: "c-3", paused: true },
      ],
      strategy: { maxUnavailable: 1 },
    });
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    expect(
      planned.value.warnings.filter((w) => w.code === "PausedClusters"),
    ).toEqual([
      {
        code: "PausedClusters",
        message:
          "2 cluster(s) are paused: they receive nothing new and do not count as unavailable: c-1, c-3",
      },
    ]);
  });

  it("lets a simulated update finish without it, showing it held and Paused", () => {
    const result = simulate({
      clusters: [
        { name: "c-1" },
        { name: "c-2", paused: true },
        { name: "c-3" },
      ],
      strategy: { maxUnavailable: 1 },
      scenario: {
        start: "2026-03-02T10:00:00Z",
        kind: "update",
        defaults: { readyAfterSeconds: 60 },
      },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const out = result.value;
    expect(out).toMatchObject({
      finalState: "Ready",
      truncated: false,
      durationSeconds: 120,
    });
    expect(
      out.timeline
        .filter((e) => e.cluster === "c-2")
        .map((e) => [e.type, e.message]),
    ).toEqual([["held", "cluster is paused"]]);
    expect(out.waves[0]?.state).toBe("Ready");
    expect(out.waves[0]?.groups[0]?.members).toContainEqual({
      name: "c-2",
      state: "OutOfSync",
      reason: "Paused",
    });
  });
});
