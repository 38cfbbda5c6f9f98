/**
 * What the outside world says to a run, as core events: operator commands, agents' reports on
 * members, cluster changes from the registry, and the reachability a run loaded after a restart
 * must catch up with. Pure: no store, no clock.
 */
import type { Run, RunEvent } from "@flotilla/core";
import type { StatusReport } from "@flotilla/protocol";
import type { ClusterChange } from "../clusters/cluster-registry.js";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import { compact } from "@flotilla/core";

/** Commands an operator sends; `member` events come from agents and the registry. */
export type RunCommand = Extract<
  RunEvent,
  {
    type:
      | "StartRun"
      | "StopRun"
      | "SkipStage"
      | "SkipGroup"
      | "SkipMember"
      | "RetryMembers"
      | "ApproveGate"
      | "CompleteGate";
  }
>;

/**
 * The event an agent's counted report on a member stands for; undefined for progress only (a
 * member finishes on Ready, Failed or its deadline).
 */
export function reportEvent(
  cluster: string,
  report: StatusReport,
): RunEvent | undefined {
  switch (report.phase) {
    case "Ready":
      return {
        type: "MemberSucceeded",
        member: cluster,
        ...compact({ message: report.message }),
      };
    case "Failed":
      return {
        type: "MemberFailed",
        member: cluster,
        error: report.error ?? report.message ?? "the agent reported a failure",
      };
    case "Pending":
      return {
        type: "MemberDeferred",
        member: cluster,
        message: report.message ?? "the agent cannot start now",
        ...compact({ untilMs: report.pendingUntilMs }),
      };
    case "Applying":
    case "Applied":
    case "NotReady":
    case "Modified":
      return undefined;
  }
}

/** The event a registry change stands for in the runs holding the cluster, if any. */
export function clusterEvent(change: ClusterChange): RunEvent | undefined {
  switch (change.type) {
    case "unreachable":
      return { type: "MemberUnreachable", member: change.cluster };
    case "reachable":
      return { type: "MemberReachable", member: change.cluster };
    case "left":
      return { type: "MemberLeft", member: change.cluster };
    case "windows":
      return {
        type: "MemberWindowsChanged",
        member: change.cluster,
        ...compact({ maintenance: change.maintenance }),
      };
    case "supportPlan":
      return {
        type: "MemberSupportPlanChanged",
        member: change.cluster,
        ...compact({ supportPlan: change.supportPlan }),
      };
    case "joined":
    case "changed":
      // A run's membership is frozen when it is created (docs/engine.md, "Staged update runs").
      return undefined;
  }
}

/**
 * Events that bring the run's view of its members' reachability in line with the directory's (a
 * member not yet started while its agent is unreachable waits, Pending). Cluster events keep the
 * two in step while a run is loaded; this covers what no event reports: a run loaded after a hub
 * restart (the new registry counts every agent reachable until it stays away a whole timeout, so
 * a member flagged before the crash whose agent came back would never hear "reachable").
 */
export function reachabilityEvents(
  run: Run,
  directory: ClusterDirectory,
): RunEvent[] {
  const events: RunEvent[] = [];
  for (const stage of run.stages) {
    for (const group of stage.groups) {
      for (const member of group.members) {
        const unreachable = directory.isUnreachable(member.name);
        if (member.unreachable === unreachable) continue;
        events.push({
          type: unreachable ? "MemberUnreachable" : "MemberReachable",
          member: member.name,
        });
      }
    }
  }
  return events;
}
