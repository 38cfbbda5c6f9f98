/**
 * Staged runs of bundle revisions in the engine (docs/semantics.md#staged-bundle-runs): members
 * already at the revision are Skipped at creation, each start asks for a release of the revision
 * (`again` on a retry), a stored run implies a release to every member it started, the agent's
 * last state is kept on the member and named when it times out, and upgrade runs ask for none.
 */
import { describe, expect, it } from "vitest";
import { bundleReleasesOf, runBundleReleases } from "../src/staged/intents.js";
import { step } from "../src/staged/step.js";
import {
  BUNDLE,
  T0,
  cluster,
  fullUpgrade,
  member,
  oneStage,
  resolve,
} from "./staged-fixtures.js";

function threeMembers(atTarget: (c: string) => boolean = () => false) {
  const clusters = ["a", "b", "c"].map((name) =>
    cluster(name, { updateGroup: "g", kubernetesVersion: "1.30.5" }),
  );
  return resolve(
    oneStage([{ name: "g", maxConcurrency: 1, maxAllowedFailures: 1 }]),
    clusters,
    { payload: BUNDLE, progressDeadlineSeconds: 60, atTarget },
  );
}

describe("staged runs of bundle revisions", () => {
  it("skips members already at the revision when the run is created", () => {
    const run = threeMembers((c) => c === "b");
    expect(member(run, "b")).toMatchObject({
      state: "Skipped",
      reason: "AlreadyAtTarget",
      message: "Already Ready at revision rev-2",
    });
    expect(member(run, "a").state).toBe("NotStarted");
  });

  it("asks for a release of the revision at each start, and again after a retry", () => {
    const run = threeMembers();
    const started = step(run, { type: "StartRun" }, T0);
    expect(started.releases).toEqual([
      { member: "a", bundle: "web", revision: "rev-2", again: false },
    ]);
    // Bundle runs change no upgrade in intents.
    expect([...started.intents]).toEqual([]);
    const progress = step(
      run,
      { type: "MemberReported", member: "a", state: "NotReady: 0/1 ready" },
      T0 + 1000,
    );
    expect(progress.releases).toEqual([]);
    expect(member(run, "a").lastReport).toBe("NotReady: 0/1 ready");

    const timedOut = step(run, { type: "Tick" }, T0 + 61_000);
    expect(member(run, "a")).toMatchObject({
      state: "Failed",
      reason: "TimedOut",
      message:
        "Did not succeed within the progress deadline of 60s; last reported: NotReady: 0/1 ready",
    });
    expect(timedOut.releases).toEqual([
      { member: "b", bundle: "web", revision: "rev-2", again: false },
    ]);
    // The failed member still holds the revision in a stored run; b is in flight.
    expect(runBundleReleases(run).map((r) => r.member)).toEqual(["a", "b"]);

    step(run, { type: "RetryMembers", members: ["a"] }, T0 + 62_000);
    const next = step(
      run,
      { type: "MemberSucceeded", member: "b" },
      T0 + 63_000,
    );
    expect(next.releases).toEqual([
      { member: "a", bundle: "web", revision: "rev-2", again: true },
    ]);
    expect(member(run, "a").lastReport).toBeUndefined();
    // Republishing never makes agents apply again.
    expect(runBundleReleases(run).every((r) => !r.again)).toBe(true);
  });

  it("upgrade runs ask for no bundle release", () => {
    const run = resolve(
      oneStage([{ name: "g", maxConcurrency: 1 }]),
      [cluster("a", { updateGroup: "g", kubernetesVersion: "1.30.5" })],
      { payload: fullUpgrade("1.31.2") },
    );
    const result = step(run, { type: "StartRun" }, T0);
    expect(result.releases).toEqual([]);
    expect(bundleReleasesOf(run, result.actions)).toEqual([]);
    expect(runBundleReleases(run)).toEqual([]);
  });
});
