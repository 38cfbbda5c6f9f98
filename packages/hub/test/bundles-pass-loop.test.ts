// The pass loop coalesces requests: one batch at a time, everything asked meanwhile in one more.
import { describe, expect, test } from "vitest";
import { createPassLoop, type PassBatch } from "../src/bundles/pass-loop.js";
import {
  BundleObservations,
  deploymentObservation,
  type BundleReport,
} from "../src/bundles/bundle-observations.js";
import type { StatusReport } from "@flotilla/protocol";
import { compact } from "@flotilla/core";

/** A run function whose batches finish when the test says so. */
function gatedRun() {
  const batches: PassBatch[] = [];
  const gates: (() => void)[] = [];
  const run = (batch: PassBatch): Promise<void> => {
    batches.push(batch);
    return new Promise((resolve) => gates.push(resolve));
  };
  const release = (): void => {
    gates.shift()?.();
  };
  return { batches, run, release };
}

const names = (b: PassBatch | undefined) =>
  b === "all" || b === undefined ? b : [...b].sort();

describe("createPassLoop", () => {
  test("runs at most one batch at a time and merges requests made meanwhile", async () => {
    const { batches, run, release } = gatedRun();
    const loop = createPassLoop(run, () => undefined);
    loop.request("a");
    await Promise.resolve();
    await Promise.resolve();
    expect(batches.map(names)).toEqual([["a"]]);
    loop.request("b");
    loop.request("c");
    loop.request("b");
    expect(batches).toHaveLength(1);
    release();
    const idle = loop.idle();
    await new Promise((r) => setImmediate(r));
    expect(batches.map(names)).toEqual([["a"], ["b", "c"]]);
    loop.request();
    loop.request("d");
    release();
    await new Promise((r) => setImmediate(r));
    expect(batches.map(names)).toEqual([["a"], ["b", "c"], "all"]);
    release();
    await idle;
    expect(batches).toHaveLength(3);
  });

  test("a failing batch is reported and the loop goes on", async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const loop = createPassLoop(
      () => {
        calls++;
        return calls === 1
          ? Promise.reject(new Error("boom"))
          : Promise.resolve();
      },
      (e) => errors.push(e),
    );
    loop.request("a");
    await loop.idle();
    loop.request("a");
    await loop.idle();
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
  });

  test("stop waits for the running batch and runs no more", async () => {
    const { batches, run, release } = gatedRun();
    const loop = createPassLoop(run, () => undefined);
    loop.request("a");
    await new Promise((r) => setImmediate(r));
    loop.request("b");
    const stopped = loop.stop();
    release();
    await stopped;
    loop.request("c");
    await loop.idle();
    expect(batches.map(names)).toEqual([["a"]]);
  });
});

describe("pass spacing", () => {
  test("waits between back-to-back batches, and what is asked meanwhile joins the next one", async () => {
    const { batches, run, release } = gatedRun();
    const spacings: number[] = [];
    const loop = createPassLoop(run, () => undefined, {
      spacingMs: (lastMs) => {
        spacings.push(lastMs);
        return 30;
      },
    });
    loop.request("a");
    await new Promise((r) => setImmediate(r));
    loop.request("b");
    release();
    // Asked after the first batch ended, before the spacing is over: same batch as "b".
    await new Promise((r) => setImmediate(r));
    loop.request("c");
    expect(batches).toHaveLength(1);
    await expect.poll(() => batches.length).toBe(2);
    expect(batches.map(names)).toEqual([["a"], ["b", "c"]]);
    expect(spacings).toHaveLength(1);
    release();
    await loop.idle();
  });
});

describe("BundleObservations.record", () => {
  const report = (
    revision: string,
    phase: StatusReport["phase"],
    message?: string,
  ): StatusReport => ({
    sequence: 1,
    generation: 1,
    subject: { kind: "bundle", bundle: "web", revision },
    phase,
    reasons: [],
    reasonsTruncated: 0,
    ...compact({ message }),
    observedAtMs: 1,
  });

  test("says whether a report changes what a pass decides on: revision or phase", () => {
    const observations = new BundleObservations();
    expect(observations.record("c1", report("r1", "Applying"))).toBe(true);
    expect(observations.record("c1", report("r1", "Applying", "50%"))).toBe(
      false,
    );
    expect(observations.record("c1", report("r1", "Ready"))).toBe(true);
    expect(observations.record("c1", report("r1", "Ready"))).toBe(false);
    expect(observations.record("c2", report("r1", "Ready"))).toBe(true);
    expect(observations.record("c1", report("r2", "Ready"))).toBe(true);
    // The latest report is kept even when it changes nothing decisive.
    observations.record("c1", report("r2", "Ready", "all good"));
    expect(observations.get("web", "c1")?.message).toBe("all good");
  });
});

describe("deploymentObservation", () => {
  const at = (
    revision: string,
    phase: BundleReport["phase"],
  ): BundleReport => ({
    revision,
    phase,
    reasons: [],
    reasonsTruncated: 0,
    observedAtMs: 1,
  });

  test("maps the latest report on the released revision to core's observation", () => {
    expect(deploymentObservation(undefined, at("r1", "Ready"), false)).toEqual({
      ready: false,
      errored: false,
      modified: false,
      unreachable: false,
    });
    expect(deploymentObservation("r2", at("r2", "Ready"), false)).toMatchObject(
      {
        releasedRevision: "r2",
        appliedRevision: "r2",
        ready: true,
      },
    );
    expect(
      deploymentObservation("r2", at("r2", "Modified"), true),
    ).toMatchObject({
      ready: true,
      modified: true,
      unreachable: true,
    });
    expect(
      deploymentObservation("r2", at("r2", "NotReady"), false),
    ).toMatchObject({
      appliedRevision: "r2",
      ready: false,
    });
    expect(
      deploymentObservation("r2", at("r2", "Applying"), false),
    ).not.toHaveProperty("appliedRevision");
    expect(deploymentObservation("r2", at("r2", "Failed"), false).errored).toBe(
      true,
    );
    // A failure of an older revision says nothing about the released one.
    expect(deploymentObservation("r2", at("r1", "Failed"), false).errored).toBe(
      false,
    );
    expect(deploymentObservation("r2", at("r1", "Ready"), false)).toMatchObject(
      {
        releasedRevision: "r2",
        appliedRevision: "r1",
      },
    );
  });
});
