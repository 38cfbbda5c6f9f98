/**
 * What a hub replica learns of the clusters from the other replicas (docs/high-availability.md):
 *
 * - **Records** written by another replica (an agent's hello, facts, windows, labels set through
 *   it, a cluster removed there) arrive through a watch on the `clusters` bucket and are taken in
 *   as the registry's own changes would be: listeners hear `joined`, `changed`, `windows`, `left`.
 * - **Presence**: each replica says which clusters have a live session with it; a cluster seen
 *   in another replica's presence counts as heard from (it is Connected, through that replica,
 *   and does not become Unreachable while the presence keeps coming).
 */
import type { StateStore } from "../store/state-store.js";
import { followCollection } from "../store/follow-collection.js";
import { heardAt, loadedEntry, setRecord } from "./cluster-entry.js";
import { factChanges, type ClusterListeners } from "./cluster-listeners.js";
import { CLUSTERS, type ClusterRecord } from "./cluster-record.js";
import type { ClusterRecords } from "./cluster-records.js";

export interface ClusterReplication {
  /** Follows records written by other replicas until `signal` aborts. */
  follow(signal: AbortSignal): Promise<void>;
  /** Clusters with a live, reachable session on this replica (what it tells the others). */
  presence(): string[];
  /** `replica` says these clusters have a live session with it. */
  remotePresence(replica: string, clusters: readonly string[]): void;
}

export function createClusterReplication(deps: {
  readonly store: StateStore;
  readonly records: ClusterRecords;
  readonly listeners: ClusterListeners;
  readonly now: () => number;
  readonly onError: (error: unknown) => void;
}): ClusterReplication {
  const { records, listeners } = deps;

  const taken = (
    name: string,
    record: ClusterRecord,
    revision: number,
  ): void => {
    const entry = records.get(name);
    if (entry === undefined) {
      records.set(loadedEntry(record, revision, deps.now()));
      listeners.emit({ type: "joined", cluster: name });
      return;
    }
    if (revision <= entry.revision || entry.unsaved === true) return;
    const before = entry.record;
    entry.revision = revision;
    if (JSON.stringify(before) === JSON.stringify(record)) return;
    setRecord(entry, record);
    if (record.neverConnected !== true) entry.everConnected = true;
    listeners.emit({ type: "changed", cluster: name });
    for (const change of factChanges(name, before.facts, record.facts))
      listeners.emit(change);
  };

  return {
    follow(signal) {
      return followCollection(deps.store, CLUSTERS, signal, {
        put: taken,
        delete(name) {
          const entry = records.get(name);
          if (entry === undefined || entry.session !== undefined) return;
          records.delete(name);
          listeners.emit({ type: "left", cluster: name });
        },
        error: deps.onError,
      });
    },

    presence() {
      const names: string[] = [];
      for (const entry of records.entries()) {
        if (entry.session !== undefined && !entry.unreachable) {
          names.push(entry.record.name);
        }
      }
      return names;
    },

    remotePresence(replica, clusters) {
      const now = deps.now();
      for (const name of clusters) {
        const entry = records.get(name);
        if (entry === undefined || entry.session !== undefined) continue;
        entry.remote = replica;
        entry.everConnected = true;
        if (heardAt(entry, now)) {
          listeners.emit({ type: "reachable", cluster: name });
        }
      }
    },
  };
}
