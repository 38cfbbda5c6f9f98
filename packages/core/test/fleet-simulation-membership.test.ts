/**
 * Clusters joining and leaving during a simulated Fleet rollout (docs/plan-and-simulate.md):
 * partitions are recomputed every pass, so a cluster that joins is sorted into place and gets the
 * revision in its turn, and a cluster that leaves drops out of the rollout.
 */
import { describe, expect, it } from "vitest";
import { simulate } from "../src/simulate.js";
import type { SimulationOutput } from "../src/preview-types.js";

const clusters = ["c-000", "c-001", "c-002", "c-003", "c-004"].map((name) => ({
  name,
}));

// An update released one cluster at a time, each Ready 10 minutes after its release.
function simulated(actions: unknown[]): SimulationOutput {
  const result = simulate({
    clusters,
    strategy: { rolloutStrategy: { maxUnavailable: 1 } },
    scenario: {
      start: "2026-03-02T10:00:00Z",
      kind: "update",
      defaults: { readyAfterSeconds: 600 },
      actions,
    },
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

const released = (out: SimulationOutput): [string, string | undefined][] =>
  out.timeline
    .filter((e) => e.type === "released")
    .map((e) => [e.at, e.cluster]);
const names = (out: SimulationOutput): string[] =>
  out.waves.flatMap((w) =>
    w.groups.flatMap((g) => g.members.map((m) => m.name)),
  );

describe("Fleet rollout with clusters joining and leaving", () => {
  it("a cluster that leaves before its turn drops out: the next one takes its place", () => {
    const out = simulated([{ at: "+5m", action: "leave", cluster: "c-001" }]);
    expect(released(out)).toEqual([
      ["2026-03-02T10:00:00Z", "c-000"],
      ["2026-03-02T10:10:00Z", "c-002"],
      ["2026-03-02T10:20:00Z", "c-003"],
      ["2026-03-02T10:30:00Z", "c-004"],
    ]);
    expect(out.timeline.find((e) => e.type === "left")).toMatchObject({
      at: "2026-03-02T10:05:00Z",
      cluster: "c-001",
      message: "Cluster left the fleet",
    });
    expect(names(out)).not.toContain("c-001");
    expect(out).toMatchObject({
      finalState: "Ready",
      end: "2026-03-02T10:40:00Z",
    });
  });

  it("a cluster that joins later is not a target before it joins, then gets the revision as a first deployment", () => {
    const out = simulated([{ at: "+25m", action: "join", cluster: "c-001" }]);
    expect(released(out).slice(0, 3)).toEqual([
      ["2026-03-02T10:00:00Z", "c-000"],
      ["2026-03-02T10:10:00Z", "c-002"],
      ["2026-03-02T10:20:00Z", "c-003"],
    ]);
    expect(out.timeline.find((e) => e.type === "joined")).toMatchObject({
      at: "2026-03-02T10:25:00Z",
      cluster: "c-001",
    });
    const joined = out.timeline.find(
      (e) => e.type === "released" && e.cluster === "c-001",
    );
    expect(joined?.message).toBe("Released revision 2 (first deployment)");
    expect(Date.parse(joined?.at ?? "")).toBeGreaterThanOrEqual(
      Date.parse("2026-03-02T10:25:00Z"),
    );
    expect(names(out)).toEqual(["c-000", "c-001", "c-002", "c-003", "c-004"]);
    expect(out.finalState).toBe("Ready");
  });

  it("a cluster that leaves while its release is in flight stops counting as unavailable", () => {
    const out = simulated([{ at: "+5m", action: "leave", cluster: "c-000" }]);
    // c-000 held the one unavailable slot; once it is gone, c-001 is released at once.
    expect(released(out).slice(0, 2)).toEqual([
      ["2026-03-02T10:00:00Z", "c-000"],
      ["2026-03-02T10:05:00Z", "c-001"],
    ]);
    expect(
      out.timeline.some((e) => e.type === "ready" && e.cluster === "c-000"),
    ).toBe(false);
  });
});
