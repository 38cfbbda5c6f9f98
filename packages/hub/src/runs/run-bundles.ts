/**
 * Staged runs of bundle revisions (docs/semantics.md#staged-bundle-runs), seen from the runs: what
 * they need of the bundles (the bundle manager provides it; hub.ts wires the two), and how an
 * agent's report on the run's bundle becomes a core event. Core decides which members hold the
 * revision (`bundleReleasesOf`, `runBundleReleases`); the bundles write it as partition releases
 * are written.
 */
import {
  locateMember,
  type BundleRelease,
  type Cluster,
  type Run,
  type RunEvent,
} from "@flotilla/core";
import type {
  ResourceReason,
  StatusPhase,
  StatusReport,
} from "@flotilla/protocol";
import type { Fence } from "../intents/intent-fences.js";
import type { LetGoCause } from "../bundles/bundle-runs.js";

/** The bundle as a new staged run of one of its revisions sees it. */
export interface BundleRunBasis {
  /** The revision the run rolls out (the current one when the request gave none). */
  readonly revision: string;
  /** The bundle's targets now: the run's clusters. */
  readonly clusters: readonly Cluster[];
  /** Whether a target already holds the revision Ready (its member is Skipped). */
  readonly atTarget: (cluster: string) => boolean;
  /** The run driving the bundle now, if any (the run manager decides whether it still does). */
  readonly drivenBy?: string;
}

/** What runs of bundle revisions need of the bundles (the bundle manager). */
export interface RunBundles {
  /**
   * What a new staged run of `revision` ("" for the current one) of bundle `name` starts from.
   * NOT_FOUND for an unknown bundle, INVALID_ARGUMENT for a revision the hub does not keep.
   */
  runBasis(name: string, revision: string): Promise<BundleRunBasis>;
  /**
   * Records that `run` drives bundle `name` at `revision` (compare-and-set), replacing the record
   * of `replacing` (a run that no longer drives it), else refusing any other driver with
   * FAILED_PRECONDITION; the partition rollout releases nothing new from then on. `pendingOnly`: only
   * in place of a pending driver (the hub's run of a staged bundle's revision, made once).
   */
  drive(
    name: string,
    run: string,
    revision: string,
    replacing?: string,
    pendingOnly?: boolean,
  ): Promise<void>;
  /**
   * Writes run releases into the members' intents as partition releases are written; a release
   * `again` grows the member's redeploy counter first. Resolves with the members whose intent
   * could not be written, with the error.
   */
  releaseForRun(
    releases: readonly BundleRelease[],
    fence?: Fence,
  ): Promise<Map<string, unknown>>;
  /** The latest counted report of `cluster` on bundle `name`, if any. */
  observed(name: string, cluster: string): BundleState | undefined;
  /**
   * `run` stops driving bundle `name` (if it does) because of `cause` (default `completed`): back
   * to its partition rollout, except a staged bundle whose run did not complete
   * (docs/semantics.md#staged-bundles).
   */
  letGo(name: string, run: string, cause?: LetGoCause): Promise<void>;
  /**
   * The bundles a run drives now, with the run; `pending`: the run of a staged bundle's new
   * revision that the hub has not made yet.
   */
  drivers(): {
    readonly bundle: string;
    readonly run: string;
    readonly pending?: boolean;
  }[];
}

/** What an agent reported of its copy of a bundle: a counted report, or the latest one kept. */
export interface BundleState {
  readonly revision: string;
  readonly phase: StatusPhase;
  readonly reasons: readonly ResourceReason[];
  readonly message?: string;
  readonly error?: string;
}

/** The Fleet state a report short of Ready names (docs/semantics.md#cluster-states). */
function reportedState(report: BundleState): string {
  switch (report.phase) {
    case "Failed":
      return `ErrApplied: ${report.error ?? report.message ?? "the agent could not apply it"}`;
    case "NotReady": {
      const reason = report.reasons[0];
      const detail =
        report.message ??
        (reason === undefined
          ? "resources are not ready"
          : `${reason.kind}/${reason.name}: ${reason.message}`);
      return `NotReady: ${detail}`;
    }
    case "Applying":
    case "Applied":
    case "Pending":
      return `WaitApplied: ${report.message ?? report.phase}`;
    case "Ready":
      return "Ready";
    case "Modified":
      return "Modified";
  }
}

/**
 * The event what an agent reports of `member`'s copy of a bundle run's bundle stands for: the
 * member succeeds on Ready (or Modified) at the run's revision only; any other state of that
 * revision is kept on the member (MemberReported, only when it changes) and named if the member
 * times out. Undefined when it says nothing to the run (another revision, a member not in flight).
 */
export function bundleStateEvent(
  run: Run,
  member: string,
  state: BundleState,
): RunEvent | undefined {
  const { payload } = run;
  if (payload.kind !== "bundle" || state.revision !== payload.revision)
    return undefined;
  const found = locateMember(run, member)?.member;
  if (found?.state !== "Running") return undefined;
  if (state.phase === "Ready" || state.phase === "Modified")
    return { type: "MemberSucceeded", member };
  const reported = reportedState(state);
  return found.lastReport === reported
    ? undefined
    : { type: "MemberReported", member, state: reported };
}

/** {@link bundleStateEvent} of an agent's counted report on the run's bundle. */
export function bundleReportEvent(
  run: Run,
  cluster: string,
  report: StatusReport,
): RunEvent | undefined {
  const { payload } = run;
  if (
    payload.kind !== "bundle" ||
    report.subject.kind !== "bundle" ||
    report.subject.bundle !== payload.bundle
  )
    return undefined;
  return bundleStateEvent(run, cluster, {
    ...report,
    revision: report.subject.revision,
  });
}
