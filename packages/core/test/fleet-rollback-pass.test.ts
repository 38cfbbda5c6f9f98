import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { Cluster } from "../src/cluster.js";
import {
  rollbackPass,
  type RollbackPassInput,
} from "../src/fleet/rollback-pass.js";
import type { DeploymentObservation } from "../src/fleet/rollout-pass.js";
import { cluster, fleetOf, notReadyAt, readyAt } from "./fleet-fixtures.js";

const GOOD = "rev-1";
const BAD = "rev-2";

function pass(
  targets: readonly Cluster[],
  deployments: ReadonlyMap<string, DeploymentObservation>,
  extra: Partial<RollbackPassInput> = {},
) {
  return rollbackPass({
    from: BAD,
    to: GOOD,
    targets,
    deployments,
    maxUnavailable: 2,
    allAtOnce: false,
    ...extra,
  });
}

const errored = (revision: string): DeploymentObservation => ({
  ...notReadyAt(revision),
  errored: true,
});

describe("rollback pacing (docs/semantics.md#rolling-back-a-bundle)", () => {
  it("moves at most maxUnavailable holders of the bad revision per pass while they are not Ready", () => {
    const fleet = fleetOf(6);
    const deployments = new Map(fleet.map((c) => [c.name, readyAt(BAD)]));
    const first = pass(fleet, deployments);
    expect(first.release).toEqual(["c-000", "c-001"]);
    expect(first.held.map((h) => h.cluster)).toEqual([
      "c-002",
      "c-003",
      "c-004",
      "c-005",
    ]);
    expect(first.held[0]?.message).toContain("limit 2");
    expect(first.unavailable).toBe(2);
    expect(first.complete).toBe(false);
  });

  it("does not count clusters still failing at the bad revision as unavailable, and moves them first", () => {
    const fleet = fleetOf(6);
    const deployments = new Map(fleet.map((c) => [c.name, readyAt(BAD)]));
    for (const n of ["c-003", "c-004", "c-005"])
      deployments.set(n, errored(BAD));
    const result = pass(fleet, deployments);
    expect(result.release).toEqual(["c-003", "c-004"]);
  });

  it("counts clusters released the good revision and not Ready at it against the limit", () => {
    const fleet = fleetOf(4);
    const deployments = new Map<string, DeploymentObservation>([
      ["c-000", notReadyAt(GOOD)],
      ["c-001", readyAt(GOOD)],
      ["c-002", readyAt(BAD)],
      ["c-003", readyAt(BAD)],
    ]);
    expect(pass(fleet, deployments).release).toEqual(["c-002"]);
    deployments.set("c-000", readyAt(GOOD));
    expect(pass(fleet, deployments).release).toEqual(["c-002", "c-003"]);
  });

  it("lets one cluster through with maxUnavailable 0 (docs/semantics.md#limit-zero)", () => {
    const fleet = fleetOf(3);
    const deployments = new Map(fleet.map((c) => [c.name, readyAt(BAD)]));
    expect(pass(fleet, deployments, { maxUnavailable: 0 }).release).toEqual([
      "c-000",
    ]);
  });

  it("releases every holder at once with allAtOnce", () => {
    const fleet = fleetOf(5);
    const deployments = new Map(fleet.map((c) => [c.name, readyAt(BAD)]));
    expect(pass(fleet, deployments, { allAtOnce: true }).release).toHaveLength(
      5,
    );
  });

  it("leaves clusters that never got the bad revision untouched", () => {
    const fleet = fleetOf(4);
    const deployments = new Map<string, DeploymentObservation>([
      ["c-000", readyAt("rev-0")],
      ["c-001", readyAt(GOOD)],
      ["c-002", readyAt(BAD)],
    ]);
    const result = pass(fleet, deployments, { allAtOnce: true });
    expect(result.release).toEqual(["c-002"]);
  });

  it("holds everything while the bundle or the cluster is paused", () => {
    const fleet: Cluster[] = [{ ...cluster("a"), paused: true }, cluster("b")];
    const deployments = new Map(fleet.map((c) => [c.name, readyAt(BAD)]));
    const one = pass(fleet, deployments);
    expect(one.release).toEqual(["b"]);
    expect(one.held).toEqual([{ cluster: "a", message: "cluster is paused" }]);
    expect(pass(fleet, deployments, { paused: true }).release).toEqual([]);
  });

  it("is complete once no target holds the bad revision", () => {
    const fleet = fleetOf(2);
    const deployments = new Map(fleet.map((c) => [c.name, notReadyAt(GOOD)]));
    const result = pass(fleet, deployments);
    expect(result).toMatchObject({
      release: [],
      complete: true,
      unavailable: 2,
    });
  });

  it("never has more than max(maxUnavailable, 1) clusters released the good revision and not Ready, unless it was so before", () => {
    const goingBack = notReadyAt(GOOD);
    const state = fc.constantFrom<DeploymentObservation | undefined>(
      readyAt(BAD),
      errored(BAD),
      notReadyAt(BAD),
      readyAt(GOOD),
      goingBack,
      readyAt("rev-0"),
      undefined,
    );
    fc.assert(
      fc.property(
        fc.array(state, { minLength: 1, maxLength: 12 }),
        fc.nat(4),
        (states, maxUnavailable) => {
          const fleet = fleetOf(states.length);
          const deployments = new Map<string, DeploymentObservation>();
          states.forEach((s, i) => {
            const c = fleet[i];
            if (s !== undefined && c !== undefined) deployments.set(c.name, s);
          });
          const before = states.filter((s) => s === goingBack).length;
          const result = pass(fleet, deployments, { maxUnavailable });
          const limit = Math.max(maxUnavailable, 1);
          expect(result.unavailable).toBeLessThanOrEqual(
            Math.max(limit, before),
          );
          const holders = states.filter(
            (s) => s?.releasedRevision === BAD,
          ).length;
          expect(result.release.length + result.held.length).toBe(holders);
          // Independent of input order.
          const reversed = pass([...fleet].reverse(), deployments, {
            maxUnavailable,
          });
          expect(reversed.release).toEqual(result.release);
        },
      ),
    );
  });
});
