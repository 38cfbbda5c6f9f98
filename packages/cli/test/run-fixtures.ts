/**
 * Runs for the run command tests, made by core's own engine (resolveRun + step) and encoded with
 * protocol's codecs, so the fake hub answers with what a real hub would send.
 */
import {
  formatProblem,
  parseUpdateStrategy,
  resolveRun,
  step,
  type Result,
  type Run,
  type RunEvent,
} from "@flotilla/core";
import { parseClusters } from "@flotilla/core/testing";
import {
  runSummaryToWire,
  runToWire,
  transitionToWire,
  type Transition,
  type wire,
} from "@flotilla/protocol";
import { NOW_MS } from "./fixtures.js";

export const MINUTE = 60_000;

/** The run's creation: 30 minutes before the tests' "now". */
export const CREATED_MS = NOW_MS - 30 * MINUTE;

function valueOf<T>(result: Result<T>): T {
  if (!result.ok)
    throw new Error(result.problems.map(formatProblem).join("\n"));
  return result.value;
}

/** Two canaries with a budget of one failure and an approval after; two prod clusters after that. */
export const STRATEGY = {
  stages: [
    {
      name: "canary",
      groups: [{ name: "canary", maxConcurrency: 2, maxAllowedFailures: 1 }],
      afterGates: [{ type: "Approval", displayName: "Canary looks good" }],
    },
    { name: "prod", groups: [{ name: "prod", maxConcurrency: 2 }] },
  ],
};

/** A new run (NotStarted) over canary-1, canary-2, prod-1, prod-2, upgrading to 1.31.2. */
export function newRun(): Run {
  const clusters = valueOf(
    parseClusters(
      ["canary-1", "canary-2", "prod-1", "prod-2"].map((name) => ({
        name,
        labels: { env: name.split("-")[0] ?? "" },
        updateGroup: name.split("-")[0] ?? "",
        kubernetesVersion: "1.30.4",
      })),
    ),
  );
  return valueOf(
    resolveRun({
      name: "upgrade-1-31",
      strategy: valueOf(parseUpdateStrategy(STRATEGY)),
      clusters,
      payload: {
        kind: "upgrade",
        upgrade: {
          type: "Full",
          kubernetesVersion: "1.31.2",
          nodeImageSelection: "Latest",
        },
      },
      createdAtMs: CREATED_MS,
    }),
  );
}

/** Applies events to `run` and returns the transitions they caused. */
export function advance(
  run: Run,
  events: readonly (readonly [RunEvent, number])[],
): Transition[] {
  const transitions: Transition[] = [];
  for (const [event, nowMs] of events) {
    const result = step(run, event, nowMs);
    if (result.rejected !== undefined) throw new Error(result.rejected.message);
    for (const action of result.actions)
      if (action.type === "Transitioned") transitions.push(action);
  }
  return transitions;
}

/** Started; canary-1 succeeded, canary-2 failed (within budget): the after-canary approval is Pending. */
export function runAtApproval(): Run {
  const run = newRun();
  advance(run, [
    [{ type: "StartRun", actor: "alice", reason: "go" }, CREATED_MS + MINUTE],
    [{ type: "MemberSucceeded", member: "canary-1" }, CREATED_MS + 5 * MINUTE],
    [
      {
        type: "MemberFailed",
        member: "canary-2",
        error: "kubelet did not come back",
      },
      CREATED_MS + 6 * MINUTE,
    ],
  ]);
  return run;
}

/** A WatchUpdateRun change message: the run's summary and the transitions. */
export function changeOf(
  run: Run,
  transitions: readonly Transition[],
): wire.WatchUpdateRunResponse {
  return {
    change: {
      summary: runSummaryToWire(run),
      transitions: transitions.map(transitionToWire),
    },
  };
}

/** A WatchUpdateRun snapshot message. */
export function snapshotOf(run: Run): wire.WatchUpdateRunResponse {
  return { snapshot: runToWire(run, 3) };
}
