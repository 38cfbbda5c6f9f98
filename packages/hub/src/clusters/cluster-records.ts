/**
 * The cluster registry's read model: every known cluster's entry, loaded from the StateStore at
 * start and written back as records change, with the queries status, the admin API and the
 * schedulers ask. What agents tell the hub is kept even while the store is unavailable (a NATS
 * outage must not end agents' sessions): such records stay in memory, marked unsaved, until the
 * next flush writes them.
 */
import {
  compareNames,
  FlotillaError,
  matchesSelector,
  showValue,
  type Cluster,
  type LabelSelector,
} from "@flotilla/core";
import { nameKey } from "../store/keys.js";
import type { StateStore } from "../store/state-store.js";
import {
  loadedEntry,
  setRecord,
  statusOf,
  type ClusterEntry,
  type ClusterStatus,
} from "./cluster-entry.js";
import {
  CLUSTERS,
  recordToCluster,
  type ClusterRecord,
} from "./cluster-record.js";

export interface ClusterRecords {
  /** Loads every stored record (each Disconnected, seen now). */
  load(now: number): Promise<void>;
  get(name: string): ClusterEntry | undefined;
  has(name: string): boolean;
  set(entry: ClusterEntry): void;
  delete(name: string): void;
  entries(): IterableIterator<ClusterEntry>;
  /** Writes `record` at `expectedRevision` (default: the entry's) and updates the entry. */
  write(
    entry: ClusterEntry,
    record: ClusterRecord,
    expectedRevision?: number,
  ): Promise<void>;
  /** As write, but an unavailable store keeps the record in memory, unsaved, for the next flush. */
  writeOrDefer(
    entry: ClusterEntry,
    record: ClusterRecord,
    expectedRevision?: number,
  ): Promise<void>;
  /** Writes records kept in memory while the store was unavailable. */
  flush(): Promise<void>;
  /** Reads the stored record of `name` again (after a revision conflict). */
  reload(name: string): Promise<void>;
  /** The cached sorted cluster list is stale (a change was emitted). */
  invalidate(): void;
  status(name: string): ClusterStatus | undefined;
  list(selector?: LabelSelector): ClusterStatus[];
  clusters(): readonly Cluster[];
  connectedCount(): number;
}

export function clusterNotFound(name: string): FlotillaError {
  return new FlotillaError(
    "not_found",
    `Cluster ${showValue(name)} is not registered`,
  );
}

export function createClusterRecords(store: StateStore): ClusterRecords {
  const entries = new Map<string, ClusterEntry>();
  let sorted: Cluster[] | undefined;
  let flushing = false;

  const write = async (
    entry: ClusterEntry,
    record: ClusterRecord,
    expectedRevision?: number,
  ): Promise<void> => {
    const revision = await store.put(CLUSTERS, nameKey(record.name), record, {
      expectedRevision: expectedRevision ?? entry.revision,
    });
    setRecord(entry, record);
    entry.revision = revision;
  };

  return {
    async load(now) {
      for (const { value, revision } of await store.list(CLUSTERS)) {
        entries.set(value.name, loadedEntry(value, revision, now));
      }
      sorted = undefined;
    },

    get: (name) => entries.get(name),
    has: (name) => entries.has(name),
    set(entry) {
      entries.set(entry.record.name, entry);
    },
    delete(name) {
      entries.delete(name);
    },
    entries: () => entries.values(),

    write,

    async writeOrDefer(entry, record, expectedRevision) {
      try {
        await write(entry, record, expectedRevision);
        entry.unsaved = false;
      } catch (error) {
        if (!(error instanceof FlotillaError) || error.code !== "unavailable") {
          throw error;
        }
        setRecord(entry, record);
        entry.unsaved = true;
      }
    },

    async flush() {
      if (flushing) return;
      flushing = true;
      try {
        for (const entry of entries.values()) {
          if (entry.unsaved !== true) continue;
          await write(entry, entry.record);
          entry.unsaved = false;
        }
      } finally {
        flushing = false;
      }
    },

    async reload(name) {
      const stored = await store.get(CLUSTERS, nameKey(name));
      const entry = entries.get(name);
      if (stored === undefined || entry === undefined) {
        throw clusterNotFound(name);
      }
      // Facts kept in memory through a store outage are newer than the stored ones.
      entry.record =
        entry.unsaved === true
          ? { ...stored.value, facts: entry.record.facts }
          : stored.value;
      entry.revision = stored.revision;
      entry.cluster = recordToCluster(entry.record);
    },

    invalidate() {
      sorted = undefined;
    },

    status(name) {
      const entry = entries.get(name);
      return entry === undefined ? undefined : statusOf(entry);
    },

    list(selector) {
      return [...entries.values()]
        .filter(
          (e) =>
            selector === undefined ||
            matchesSelector(selector, e.cluster.labels),
        )
        .sort((a, b) => compareNames(a.record.name, b.record.name))
        .map(statusOf);
    },

    clusters() {
      sorted ??= [...entries.values()]
        .map((e) => e.cluster)
        .sort((a, b) => compareNames(a.name, b.name));
      return sorted;
    },

    connectedCount() {
      let n = 0;
      for (const entry of entries.values())
        if (entry.session !== undefined) n++;
      return n;
    },
  };
}
