/**
 * The partitioned-rollout simulator: the real release pass in virtual time
 * (docs/semantics.md#releasing, docs/semantics.md#offline-planning).
 */
import { describe, expect, it } from "vitest";
import { simulate } from "../src/simulate.js";
import type { SimulationOutput } from "../src/preview-types.js";

const START = "2026-03-02T10:00:00Z";

function fleetOf(n: number, extra: Record<string, unknown> = {}): unknown[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `c-${String(i).padStart(3, "0")}`,
    ...extra,
  }));
}

function run(
  clusters: unknown,
  strategy: unknown,
  scenario: Record<string, unknown>,
): SimulationOutput {
  const result = simulate({
    clusters,
    strategy,
    scenario: { start: START, ...scenario },
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

function releaseTimes(out: SimulationOutput): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of out.timeline)
    if (e.type === "released") counts.set(e.at, (counts.get(e.at) ?? 0) + 1);
  return counts;
}

describe("Fleet rollout simulation", () => {
  it("first deployments of 120 clusters with the defaults go out in maxNew batches of 50, 50, 20, one pass interval apart", () => {
    const out = run(
      fleetOf(120),
      { rolloutStrategy: {} },
      { kind: "firstDeployment", defaults: { readyAfterSeconds: 600 } },
    );
    expect([...releaseTimes(out).entries()]).toEqual([
      ["2026-03-02T10:00:00Z", 50],
      ["2026-03-02T10:00:05Z", 50],
      ["2026-03-02T10:00:10Z", 20],
    ]);
    expect(out).toMatchObject({
      dialect: "fleet",
      finalState: "Ready",
      truncated: false,
      durationSeconds: 610,
    });
  });

  it("100 clusters at maxUnavailable 10%: 50 released at once, the rest only once fewer than 10 are not Ready", () => {
    const clusters = fleetOf(100);
    const scenario = {
      kind: "firstDeployment",
      defaults: { readyAfterSeconds: 60 },
      // Half of the first batch is slow: the second batch must wait for them.
      clusters: Object.fromEntries(
        Array.from({ length: 45 }, (_, i) => [
          `c-${String(i).padStart(3, "0")}`,
          { readyAfterSeconds: 600 },
        ]),
      ),
    };
    const out = run(
      clusters,
      { rolloutStrategy: { maxUnavailable: "10%" } },
      scenario,
    );
    expect([...releaseTimes(out).entries()]).toEqual([
      ["2026-03-02T10:00:00Z", 50],
      ["2026-03-02T10:10:00Z", 50],
    ]);
    expect(out.finalState).toBe("Ready");
  });

  it("a cluster that never becomes Ready leaves the rollout NotReady and the result says it did not finish", () => {
    const out = run(
      fleetOf(5),
      { rolloutStrategy: {} },
      { kind: "update", clusters: { "c-002": { neverReady: true } } },
    );
    expect(out.finalState).toBe("NotReady");
    expect(out.truncated).toBe(true);
    const members = out.waves.flatMap((w) =>
      w.groups.flatMap((g) => g.members),
    );
    expect(members.find((m) => m.name === "c-002")?.state).toBe("NotReady");
    expect(members.filter((m) => m.state === "Ready")).toHaveLength(4);
  });

  it("an offline agent reports its result when it comes back; until then it counts as unavailable", () => {
    const out = run(
      fleetOf(3),
      { rolloutStrategy: { maxUnavailable: 1 } },
      {
        kind: "update",
        defaults: { readyAfterSeconds: 60 },
        clusters: { "c-000": { offline: [{ from: "+30s", to: "+10m" }] } },
      },
    );
    const c000 = out.timeline
      .filter((e) => e.cluster === "c-000")
      .map((e) => `${e.at} ${e.type}`);
    expect(c000).toEqual([
      "2026-03-02T10:00:00Z released",
      "2026-03-02T10:00:30Z offline",
      "2026-03-02T10:10:00Z online",
      "2026-03-02T10:10:00Z ready",
    ]);
    // One unavailable cluster at a time: c-001 waits for c-000.
    expect(
      out.timeline.find((e) => e.cluster === "c-001" && e.type === "released")
        ?.at,
    ).toBe("2026-03-02T10:10:00Z");
    expect(out.finalState).toBe("Ready");
  });

  it("a closed workloads window holds a cluster's release until it opens", () => {
    const clusters = [
      {
        name: "a",
        maintenance: {
          workloads: {
            start: "2026-03-02T12:00:00Z",
            end: "2026-03-02T13:00:00Z",
          },
        },
      },
      { name: "b" },
    ];
    const out = run(
      clusters,
      { rolloutStrategy: {} },
      { kind: "update", defaults: { readyAfterSeconds: 60 } },
    );
    const a = out.timeline
      .filter((e) => e.cluster === "a")
      .map((e) => `${e.at} ${e.type}`);
    expect(a).toEqual([
      "2026-03-02T10:00:00Z held",
      "2026-03-02T12:00:00Z released",
      "2026-03-02T12:01:00Z ready",
    ]);
    expect(
      out.timeline.find((e) => e.cluster === "b" && e.type === "released")?.at,
    ).toBe(START);
  });

  it("a platform upgrade cannot use a Fleet rolloutStrategy: the scenario kind is rejected with its path", () => {
    const result = simulate({
      clusters: fleetOf(1),
      strategy: { rolloutStrategy: {} },
      scenario: {
        start: START,
        kind: "upgrade",
        upgrade: { type: "Full", kubernetesVersion: "1.31.2" },
      },
    });
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems.map((p) => `${p.source}:${p.path}`)).toEqual([
        "scenario:kind",
      ]);
  });

  it("is deterministic: the same inputs in any order give the same output", () => {
    const clusters = fleetOf(30);
    const strategy = {
      rolloutStrategy: {
        maxUnavailable: 3,
        partitions: [{ name: "all", clusterSelector: {} }],
      },
    };
    const scenario = {
      kind: "update",
      clusters: { "c-007": { fail: true, failAfterSeconds: 20 } },
    };
    expect(run([...clusters].reverse(), strategy, scenario)).toEqual(
      run(clusters, strategy, scenario),
    );
  });
});
