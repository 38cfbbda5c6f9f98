/**
 * Who hears about the cluster registry's changes: the schedulers, told every change that matters
 * to them (a cluster joined, left, changed its facts or labels, its windows changed, it became
 * unreachable or reachable again), and the agent service, told which live sessions must end.
 */
import type { Maintenance } from "@flotilla/core";
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
