/**
 * A cluster as the hub stores it ("clusters" collection): what its agent reported (facts) and what
 * operators set on top (labels, update group, pause). The effective labels are the agent's with the
 * operator's changes applied, so an agent re-registering does not undo `flotilla cluster label`.
 */
import {
  MAX_LABELS,
  SUPPORT_PLANS,
  type Cluster,
  type Labels,
  type Maintenance,
  type Problem,
  compact,
} from "@flotilla/core";
import type { ClusterFacts, VersionCatalogue } from "@flotilla/protocol";
import { z } from "zod";
import { defineCollection } from "../store/state-store.js";

export interface ClusterRecord {
  readonly name: string;
  readonly facts: ClusterFacts;
  /** Labels operators set (win over the agent's). */
  readonly operatorLabels: Labels;
  /** Agent labels operators removed. */
  readonly removedLabels: readonly string[];
  readonly updateGroup?: string;
  /** Set by an operator (Fleet's Cluster spec.paused): bundle rollouts hold the cluster. */
  readonly paused?: true;
  readonly agentVersion: string;
  readonly registeredAtMs: number;
  /** Persisted on connect and disconnect only (heartbeats are kept in memory). */
  readonly lastSeenAtMs: number;
  /**
   * True while the cluster is registered but its agent has never opened a session (it shows as
   * NeverConnected, also after a hub restart); removed at its first connection. Records stored
   * before the field existed lack it and count as connected once.
   */
  readonly neverConnected?: true;
}

const labels = z.record(z.string(), z.string());

const recordSchema = z.object({
  name: z.string().min(1),
  facts: z.object({
    labels,
    kubernetesVersion: z.string().optional(),
    nodePools: z.array(
      z.object({
        name: z.string(),
        imageFamily: z.string(),
        imageVersion: z.string(),
        kubernetesVersion: z.string().optional(),
      }),
    ),
    region: z.string().optional(),
    supportPlan: z.enum(SUPPORT_PLANS).optional(),
    // Validated by the protocol codec when the agent sent it.
    maintenance: z.custom<Maintenance>((v) => typeof v === "object").optional(),
    // Validated by the protocol codec when the agent sent it (docs/engine.md#the-version-catalogue).
    catalogue: z
      .custom<VersionCatalogue>((v) => typeof v === "object" && v !== null)
      .optional(),
  }),
  operatorLabels: labels,
  removedLabels: z.array(z.string()),
  updateGroup: z.string().optional(),
  paused: z.literal(true).optional(),
  agentVersion: z.string(),
  registeredAtMs: z.number(),
  lastSeenAtMs: z.number(),
  neverConnected: z.literal(true).optional(),
});

export const CLUSTERS = defineCollection<ClusterRecord>("clusters", (value) =>
  recordSchema.parse(value),
);

/** An operator's change of a cluster's labels, update group and pause (LabelCluster). */
export interface LabelChange {
  readonly set: Labels;
  readonly remove: readonly string[];
  /** Absent: unchanged; empty string: cleared. */
  readonly updateGroup?: string;
  /** Absent: unchanged. */
  readonly paused?: boolean;
  readonly expectedRevision?: number;
}

/** `record` with `change` applied: set labels win, removed ones are hidden from the agent's. */
export function applyLabelChange(
  record: ClusterRecord,
  change: LabelChange,
): ClusterRecord {
  const operatorLabels: Record<string, string> = { ...record.operatorLabels };
  const removed = new Set(record.removedLabels);
  for (const key of change.remove) {
    Reflect.deleteProperty(operatorLabels, key);
    removed.add(key);
  }
  for (const [key, value] of Object.entries(change.set)) {
    operatorLabels[key] = value;
    removed.delete(key);
  }
  // Removals of labels the agent does not report are kept (the agent may report them later) only
  // while the list stays within MAX_LABELS; past it, only the ones hiding an agent's label are
  // kept, and those are at most MAX_LABELS, as the agent's labels are.
  if (removed.size > MAX_LABELS) {
    for (const key of removed) {
      if (!Object.hasOwn(record.facts.labels, key)) removed.delete(key);
    }
  }
  const base: { -readonly [K in keyof ClusterRecord]: ClusterRecord[K] } = {
    ...record,
  };
  delete base.updateGroup;
  delete base.paused;
  const paused = change.paused ?? record.paused === true;
  const updateGroup =
    change.updateGroup === undefined
      ? record.updateGroup
      : change.updateGroup === ""
        ? undefined
        : change.updateGroup;
  return {
    ...base,
    operatorLabels,
    removedLabels: [...removed].sort(),
    ...compact({ updateGroup }),
    ...(paused ? { paused: true as const } : {}),
  };
}

/**
 * Why a label change leaves the cluster with too many labels: more than {@link MAX_LABELS}, and
 * more than it had (an agent may have brought it past the bound; a change that does not add to it
 * still goes through). Undefined when it does not.
 */
export function labelCountProblem(
  before: ClusterRecord,
  after: ClusterRecord,
): Problem | undefined {
  const count = Object.keys(effectiveLabels(after)).length;
  if (
    count <= MAX_LABELS ||
    count <= Object.keys(effectiveLabels(before)).length
  ) {
    return undefined;
  }
  return {
    path: "setLabels",
    message: `would give the cluster ${String(count)} labels; a cluster may have at most ${String(MAX_LABELS)}`,
  };
}

/** The labels the cluster has: the agent's, with the operator's changes. */
export function effectiveLabels(record: ClusterRecord): Labels {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(record.facts.labels)) {
    if (!record.removedLabels.includes(key)) out[key] = value;
  }
  return { ...out, ...record.operatorLabels };
}

/** The cluster as the engine sees it. */
export function recordToCluster(record: ClusterRecord): Cluster {
  const { facts } = record;
  return {
    name: record.name,
    labels: effectiveLabels(record),
    groups: [],
    nodePools: facts.nodePools,
    ...compact({
      updateGroup: record.updateGroup,
      maintenance: facts.maintenance,
      kubernetesVersion: facts.kubernetesVersion,
      region: facts.region,
      supportPlan: facts.supportPlan,
    }),
    ...(record.paused === true ? { paused: true as const } : {}),
  };
}
