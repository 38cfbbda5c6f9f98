/**
 * Strategy + clusters → a frozen run (docs/semantics.md#membership): membership, resolved limits,
 * gates. Everything that depends on the fleet is decided here once, so later fleet changes cannot
 * reshuffle a run.
 */
import { compareNames, type Cluster } from "../cluster.js";
import {
  concurrency,
  failureBudget,
  intOrPercentToString,
  type IntOrPercent,
} from "../int-or-percent.js";
import { matchesSelector } from "../label-selector.js";
import { hasConstraints, type WindowScope } from "../maintenance/windows.js";
import { fail, ok, type Problem, type Result } from "../result.js";
import {
  MAX_STAGE_CONCURRENCY,
  type GateSpec,
  type StageSpec,
  type UpdateStrategy,
} from "../update-strategy.js";
import {
  memberUpgradeDecision,
  selectConsistentNodeImages,
  upgradeWindowScope,
  type AvailableVersions,
} from "../upgrade.js";
import { orderMembers } from "./member-order.js";
import type {
  Gate,
  Group,
  Member,
  Run,
  RunOrigin,
  RunPayload,
  Stage,
} from "./run.js";
import { compact } from "../compact.js";

/** Default progress deadline per member (docs/semantics.md#failure-budget). */
export const DEFAULT_PROGRESS_DEADLINE_SECONDS = 3600;

/** Everything a run is created from. */
export interface ResolveRunInput {
  readonly name: string;
  /** Absent: members update one by one (docs/semantics.md#staged-runs). */
  readonly strategy?: UpdateStrategy;
  /** The clusters the run may touch (the fleet for upgrades, the bundle's targets for bundles). */
  readonly clusters: readonly Cluster[];
  readonly payload: RunPayload;
  readonly createdAtMs: number;
  readonly progressDeadlineSeconds?: number;
  /** Versions the platform offers; needed for node-image targets. */
  readonly available?: AvailableVersions;
  /** Overrides the AKS stage-concurrency ceiling (benchmarks only). */
  readonly maxStageConcurrency?: number;
  /**
   * Which clusters' agents are unreachable now (docs/semantics.md#offline-clusters): their members
   * start out held. Absent: every agent is reachable. Later changes reach the run as
   * `MemberUnreachable` / `MemberReachable` events.
   */
  readonly isUnreachable?: (cluster: string) => boolean;
  /** The auto-upgrade profile the run is made from, kept on the run. */
  readonly origin?: RunOrigin;
  /**
   * Bundle runs: whether the cluster already holds the run's revision Ready; its member is then
   * Skipped with reason AlreadyAtTarget (docs/semantics.md#staged-bundle-runs).
   */
  readonly atTarget?: (cluster: string) => boolean;
}

interface GroupDraft {
  readonly name: string;
  readonly path: string;
  readonly members: Cluster[];
  readonly maxConcurrency?: IntOrPercent;
  readonly maxAllowedFailures?: IntOrPercent;
  readonly beforeGates: readonly GateSpec[];
  readonly afterGates: readonly GateSpec[];
  readonly implicit: boolean;
}

const ONE_BY_ONE: UpdateStrategy = {
  stages: [
    {
      name: "default",
      memberSelector: { requirements: [], source: "" },
      maxConcurrency: { kind: "int", value: 1 },
      afterStageWaitInSeconds: 0,
      beforeGates: [],
      afterGates: [],
    },
  ],
};

/**
 * Resolves a run; a cluster selected by two groups is an error (docs/semantics.md#membership
 * Decision).
 */
export function resolveRun(input: ResolveRunInput): Result<Run> {
  const strategy = input.strategy ?? ONE_BY_ONE;
  const clusters = [...input.clusters].sort((a, b) =>
    compareNames(a.name, b.name),
  );
  const drafts = strategy.stages.map((stage, si) =>
    draftGroups(stage, si, clusters),
  );
  const problems = findDoubleMembership(drafts.flat());
  if (problems.length > 0) return fail(problems);

  const scope: WindowScope =
    input.payload.kind === "upgrade"
      ? upgradeWindowScope(input.payload.upgrade)
      : "workloads";
  const consistent =
    input.payload.kind === "upgrade" &&
    input.payload.upgrade.nodeImageSelection === "Consistent"
      ? // "Available to all members" (docs/semantics.md#upgrades): unassigned clusters are not members and must not hold the choice back.
        selectConsistentNodeImages(
          drafts.flat().flatMap((g) => g.members),
          input.available ?? { kubernetes: [], nodeImages: [] },
        ).selected
      : undefined;
  const assigned = new Set<string>();
  const stages: Stage[] = strategy.stages.map((spec, si) => {
    const groupDrafts = drafts[si] ?? [];
    const memberCount = groupDrafts.reduce((n, g) => n + g.members.length, 0);
    const stageLimit = input.maxStageConcurrency ?? MAX_STAGE_CONCURRENCY;
    const stageConcurrency = Math.min(
      spec.maxConcurrency === undefined
        ? MAX_STAGE_CONCURRENCY
        : concurrency(memberCount, spec.maxConcurrency),
      stageLimit,
    );
    const failFast =
      spec.maxAllowedFailures === undefined &&
      groupDrafts.every((g) => g.maxAllowedFailures === undefined);
    const groups = groupDrafts.map((draft): Group => {
      const members = draft.members.map((cluster): Member => {
        assigned.add(cluster.name);
        return createMember(cluster, input, scope, consistent);
      });
      const configured = draft.implicit
        ? spec.maxConcurrency
        : draft.maxConcurrency;
      const wanted = draft.implicit
        ? stageConcurrency
        : draft.maxConcurrency === undefined
          ? 1
          : concurrency(members.length, draft.maxConcurrency);
      const constrained: number[] = [];
      members.forEach((m, i) => {
        if (m.constrained) constrained.push(i);
      });
      const remaining = members.filter((m) => m.state !== "Skipped").length;
      return {
        name: draft.name,
        state: "NotStarted",
        message: "",
        stateChangedAtMs: input.createdAtMs,
        maxConcurrency: Math.max(
          1,
          Math.min(wanted, stageConcurrency, Math.max(members.length, 1)),
        ),
        ...(configured === undefined
          ? {}
          : { configuredMaxConcurrency: intOrPercentToString(configured) }),
        maxAllowedFailures:
          draft.maxAllowedFailures === undefined
            ? null
            : failureBudget(members.length, draft.maxAllowedFailures),
        failureCount: 0,
        succeeded: 0,
        inFlight: 0,
        remaining,
        skipRequested: false,
        beforeGates: gates(
          draft.implicit ? [] : draft.beforeGates,
          `group:${draft.name}:before`,
        ),
        afterGates: gates(
          draft.implicit ? [] : draft.afterGates,
          `group:${draft.name}:after`,
        ),
        members,
        cursor: 0,
        deferred: [],
        constrained,
      };
    });
    return {
      name: spec.name,
      state: "NotStarted",
      message: "",
      stateChangedAtMs: input.createdAtMs,
      maxConcurrency: stageConcurrency,
      ...(spec.maxConcurrency === undefined
        ? {}
        : {
            configuredMaxConcurrency: intOrPercentToString(spec.maxConcurrency),
          }),
      maxAllowedFailures: failFast
        ? 0
        : spec.maxAllowedFailures === undefined
          ? null
          : failureBudget(memberCount, spec.maxAllowedFailures),
      failFast,
      failureCount: 0,
      inFlight: 0,
      skipRequested: false,
      afterStageWaitSeconds: spec.afterStageWaitInSeconds,
      ...compact({ sortingLabelKey: spec.sortingLabelKey }),
      beforeGates: gates(spec.beforeGates, `stage:${spec.name}:before`),
      afterGates: gates(spec.afterGates, `stage:${spec.name}:after`),
      groups,
      memberCount,
    };
  });
  return ok({
    apiVersion: "flotilla.dev/v1",
    name: input.name,
    payload: input.payload,
    windowScope: scope,
    state: "NotStarted",
    message: "Created",
    stateChangedAtMs: input.createdAtMs,
    createdAtMs: input.createdAtMs,
    progressDeadlineSeconds:
      input.progressDeadlineSeconds ?? DEFAULT_PROGRESS_DEADLINE_SECONDS,
    failureCount: 0,
    budgetExceeded: false,
    stopRequested: false,
    currentStage: 0,
    stages,
    unassigned: clusters
      .filter((c) => !assigned.has(c.name))
      .map((c) => c.name),
    ...compact({
      consistentNodeImages: consistent,
      available: input.available,
      origin: input.origin,
    }),
    deadlines: [],
  });
}

function draftGroups(
  stage: StageSpec,
  si: number,
  clusters: readonly Cluster[],
): GroupDraft[] {
  const inStage =
    stage.memberSelector === undefined
      ? clusters
      : clusters.filter(
          (c) =>
            stage.memberSelector !== undefined &&
            matchesSelector(stage.memberSelector, c.labels),
        );
  const key = stage.sortingLabelKey;
  if (stage.groups === undefined) {
    return [
      {
        name: stage.name,
        path: `stages[${String(si)}]`,
        members: orderMembers(inStage, key),
        beforeGates: [],
        afterGates: [],
        implicit: true,
      },
    ];
  }
  return stage.groups.map((g, gi) => ({
    name: g.name,
    path: `stages[${String(si)}].groups[${String(gi)}]`,
    members: orderMembers(
      inStage.filter((c) =>
        g.memberSelector === undefined
          ? c.updateGroup === g.name
          : matchesSelector(g.memberSelector, c.labels),
      ),
      key,
    ),
    ...compact({
      maxConcurrency: g.maxConcurrency,
      maxAllowedFailures: g.maxAllowedFailures,
    }),
    beforeGates: g.beforeGates,
    afterGates: g.afterGates,
    implicit: false,
  }));
}

function findDoubleMembership(groups: readonly GroupDraft[]): Problem[] {
  const owner = new Map<string, GroupDraft>();
  const problems: Problem[] = [];
  for (const group of groups) {
    for (const cluster of group.members) {
      const first = owner.get(cluster.name);
      if (first === undefined) owner.set(cluster.name, group);
      else {
        problems.push({
          path: group.path,
          message: `cluster "${cluster.name}" is selected by group "${first.name}" (${first.path}) and by group "${group.name}"; a cluster may be in one group only`,
        });
      }
    }
  }
  return problems;
}

function gates(specs: readonly GateSpec[], position: string): Gate[] {
  return specs.map((spec, i) => ({
    id: i === 0 ? position : `${position}#${String(i + 1)}`,
    type: spec.type,
    displayName:
      spec.displayName ??
      (spec.type === "Approval"
        ? "Approval"
        : spec.type === "Metric"
          ? "Metric"
          : "Scheduled start"),
    state: "NotStarted",
    ...(spec.type === "ScheduledStart"
      ? { schedule: spec.scheduledStartConfiguration }
      : {}),
    ...(spec.type === "Metric"
      ? {
          metric: {
            query: spec.query,
            ...compact({
              successCondition: spec.successCondition,
              failureCondition: spec.failureCondition,
            }),
            intervalSeconds: spec.intervalSeconds,
            count: spec.count,
            failureLimit: spec.failureLimit,
            inconclusiveLimit: spec.inconclusiveLimit,
            measurements: [],
          },
        }
      : {}),
    message: "",
  }));
}

function createMember(
  cluster: Cluster,
  input: ResolveRunInput,
  scope: WindowScope,
  consistent: Readonly<Record<string, string>> | undefined,
): Member {
  const member: Member = {
    name: cluster.name,
    state: "NotStarted",
    message: "",
    stateChangedAtMs: input.createdAtMs,
    failureCount: 0,
    unreachable: input.isUnreachable?.(cluster.name) ?? false,
    ...compact({
      maintenance: cluster.maintenance,
      kubernetesVersion: cluster.kubernetesVersion,
      region: cluster.region,
      supportPlan: cluster.supportPlan,
    }),
    ...(cluster.nodePools.length === 0
      ? {}
      : { nodePools: cluster.nodePools.map((p) => ({ ...p })) }),
    constrained: hasConstraints(cluster.maintenance, scope),
  };
  if (input.payload.kind === "upgrade") {
    const decision = memberUpgradeDecision(
      cluster,
      input.payload.upgrade,
      input.available ?? { kubernetes: [], nodeImages: [] },
      consistent,
    );
    // A `fail` decision waits for the member's turn (staged/advance.ts): it counts against the
    // failure budget of the stage the run is in then, as any failed member does.
    if (decision.action === "skip") {
      member.state = "Skipped";
      member.reason = decision.reason;
      member.message = decision.message;
      member.finishedAtMs = input.createdAtMs;
    }
  } else if (input.atTarget?.(cluster.name) === true) {
    member.state = "Skipped";
    member.reason = "AlreadyAtTarget";
    member.message = `Already Ready at revision ${input.payload.revision}`;
    member.finishedAtMs = input.createdAtMs;
  }
  return member;
}
