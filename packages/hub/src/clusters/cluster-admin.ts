/**
 * What changes a cluster's record outside its agent's session: registration enrolls it before its
 * agent first connects, operators label it or remove it from the fleet.
 */
import { FlotillaError, showValue } from "@flotilla/core";
import { nameKey } from "../store/keys.js";
import { isRevisionConflict, type StateStore } from "../store/state-store.js";
import { createUpdateQueue } from "../store/update-queue.js";
import { newEntry, statusOf, type ClusterStatus } from "./cluster-entry.js";
import type { ClusterListeners } from "./cluster-listeners.js";
import {
  applyLabelChange,
  CLUSTERS,
  labelCountProblem,
  type LabelChange,
} from "./cluster-record.js";
import { clusterNotFound, type ClusterRecords } from "./cluster-records.js";

export interface ClusterAdminDeps {
  readonly store: StateStore;
  readonly records: ClusterRecords;
  readonly listeners: ClusterListeners;
  readonly now: () => number;
}

export interface ClusterAdmin {
  /**
   * Records a cluster that registered and has not connected yet: NeverConnected until its agent
   * connects. A known cluster is left as it is.
   */
  enroll(cluster: string, agentVersion: string): Promise<void>;
  label(name: string, change: LabelChange): Promise<ClusterStatus>;
  /** Deletes the record and ends the cluster's live session, if any. */
  remove(name: string): Promise<void>;
}

export function createClusterAdmin(deps: ClusterAdminDeps): ClusterAdmin {
  const { records, listeners } = deps;
  const labelUpdates = createUpdateQueue();
  return {
    async enroll(cluster, agentVersion) {
      if (records.has(cluster)) return;
      const entry = newEntry(cluster, agentVersion, deps.now(), {});
      const { record } = entry;
      records.set(entry);
      try {
        await records.write(entry, record, 0);
      } catch (error) {
        if (records.get(cluster) === entry) records.delete(cluster);
        // Another hub (or a connect here) recorded it first: that record stands.
        if (isRevisionConflict(error)) return;
        throw error;
      }
      listeners.emit({ type: "joined", cluster });
    },

    label(name, change) {
      return labelUpdates.update(name, {
        what: `cluster ${showValue(name)}`,
        expectedRevision: change.expectedRevision,
        write: async () => {
          const entry = records.get(name);
          if (entry === undefined) throw clusterNotFound(name);
          const record = applyLabelChange(entry.record, change);
          const tooMany = labelCountProblem(entry.record, record);
          if (tooMany !== undefined)
            throw FlotillaError.invalid("cluster labels", [tooMany]);
          await records.write(
            entry,
            record,
            change.expectedRevision ?? entry.revision,
          );
          listeners.emit({ type: "changed", cluster: name });
          return statusOf(entry);
        },
        reload: () => records.reload(name),
      });
    },

    async remove(name) {
      const entry = records.get(name);
      if (entry === undefined) throw clusterNotFound(name);
      await deps.store.delete(CLUSTERS, nameKey(name), {
        expectedRevision: entry.revision,
      });
      records.delete(name);
      if (entry.session !== undefined) {
        listeners.revoke({ cluster: name, id: entry.session }, "removed");
      }
      listeners.emit({ type: "left", cluster: name });
    },
  };
}
