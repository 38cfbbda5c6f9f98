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
import type { StatusReport } from "@flotilla/protocol";
import type { Fence } from "../intents/intent-fences.js";

/** What runs of bundle revisions need of the bundles. */
export interface RunBundles {
  /** The basis of a new run (bundle-runs.ts); NOT_FOUND / INVALID_ARGUMENT refusals. */
  runBasis(
    name: string,
    revision: string,
  ): Promise<{
    readonly revision: string;
    readonly clusters: readonly Cluster[];
    readonly atTarget: (cluster: string) => boolean;
    readonly drivenBy?: string;
  }>;
  drive(
    name: string,
    run: string,
    revision: string,
    replacing?: string,
  ): Promise<void>;
  releaseForRun(
    releases: readonly BundleRelease[],
    fence?: Fence,
  ): Promise<Map<string, unknown>>;
  readyAt(name: string, cluster: string, revision: string): boolean;
  letGo(name: string, run: string): Promise<void>;
  drivers(): { readonly bundle: string; readonly run: string }[];
}

/** The Fleet state a report short of Ready names (docs/semantics.md#cluster-states). */
function reportedState(report: StatusReport): string {
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
 * The event an agent's counted report on a bundle run's bundle stands for: the member succeeds on
 * Ready (or Modified) at the run's revision only; any other state of that revision is kept on the
 * member (MemberReported, only when it changes) and named if the member times out. Undefined when
 * the report says nothing to the run.
 */
export function bundleReportEvent(
  run: Run,
  cluster: string,
  report: StatusReport,
): RunEvent | undefined {
  const { payload } = run;
  if (payload.kind !== "bundle" || report.subject.kind !== "bundle")
    return undefined;
  if (
    report.subject.bundle !== payload.bundle ||
    report.subject.revision !== payload.revision
  )
    return undefined;
  const member = locateMember(run, cluster)?.member;
  if (member?.state !== "Running") return undefined;
  if (report.phase === "Ready" || report.phase === "Modified")
    return { type: "MemberSucceeded", member: cluster };
  const state = reportedState(report);
  return member.lastReport === state
    ? undefined
    : { type: "MemberReported", member: cluster, state };
}
