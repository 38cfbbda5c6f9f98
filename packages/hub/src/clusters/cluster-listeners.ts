/**
 * Who hears about the cluster registry's changes: the schedulers, told every change that matters
 * to them (a cluster joined, left, changed its facts or labels, its windows or support plan changed, it became
 * unreachable or reachable again), and the agent service, told which live sessions must end.
 */
import { compact, type Maintenance, type SupportPlan } from "@flotilla/core";
import type { ClusterFacts } from "@flotilla/protocol";
import type { SessionHandle } from "./cluster-entry.js";

/** A change the schedulers react to. */
export type ClusterChange =
  | { readonly type: "joined"; readonly cluster: string }
  | { readonly type: "changed"; readonly cluster: string }
  | {
      readonly type: "windows";
      readonly cluster: string;
      readonly maintenance?: Maintenance;
    }
  | {
      readonly type: "supportPlan";
      readonly cluster: string;
      readonly supportPlan?: SupportPlan;
    }
  | { readonly type: "left"; readonly cluster: string }
  | { readonly type: "unreachable"; readonly cluster: string }
  | { readonly type: "reachable"; readonly cluster: string };

/** Why a live session is ended: its cluster was removed, or a silent session was replaced. */
export type RevokeReason = "removed" | "replaced";

export type ChangeListener = (change: ClusterChange) => void;
export type RevokeListener = (
  session: SessionHandle,
  why: RevokeReason,
) => void;

export interface ClusterListeners {
  onChange(listener: ChangeListener): () => void;
  onSessionRevoked(listener: RevokeListener): void;
  emit(change: ClusterChange): void;
  revoke(session: SessionHandle, why: RevokeReason): void;
}

/** `beforeEmit` runs before the listeners hear a change (the registry drops its cached list). */
export function createClusterListeners(
  beforeEmit: () => void,
): ClusterListeners {
  const listeners = new Set<ChangeListener>();
  const revokers = new Set<RevokeListener>();
  return {
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onSessionRevoked(listener) {
      revokers.add(listener);
    },
    emit(change) {
      beforeEmit();
      for (const listener of listeners) listener(change);
    },
    revoke(session, why) {
      for (const revoke of revokers) revoke(session, why);
    },
  };
}

/**
 * The changes runs follow one by one that a new set of facts brings (`before` absent: none): the
 * windows, and the support plan (docs/engine.md#long-term-support).
 */
export function factChanges(
  cluster: string,
  before: ClusterFacts | undefined,
  after: ClusterFacts,
): ClusterChange[] {
  if (before === undefined) return [];
  const changes: ClusterChange[] = [];
  if (JSON.stringify(before.maintenance) !== JSON.stringify(after.maintenance))
    changes.push({
      type: "windows",
      cluster,
      ...compact({ maintenance: after.maintenance }),
    });
  if (before.supportPlan !== after.supportPlan)
    changes.push({
      type: "supportPlan",
      cluster,
      ...compact({ supportPlan: after.supportPlan }),
    });
  return changes;
}
