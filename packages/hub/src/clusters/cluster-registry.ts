/**
 * The clusters the hub knows, their agents' sessions and their reachability
 * (docs/semantics.md#offline-clusters).
 *
 * Records live in the StateStore and are cached here; agents' heartbeats are kept in memory only
 * (persisting 10,000 heartbeats every 10 s would be most of the hub's writes). A hub that restarts
 * loads every record as Disconnected, seen at its start: a cluster whose agent does not come back
 * becomes Unreachable one heartbeat timeout later, as if the hub had never gone away. A cluster
 * that registered and whose agent never connected shows NeverConnected (its record says so), even
 * once the schedulers count it unreachable: it never had a session to lose.
 *
 * Listeners hear every change that matters to the schedulers: a cluster joined, left, changed its
 * facts or labels, its windows changed, it became unreachable or reachable again.
 */
import {
  compareNames,
  FlotillaError,
  matchesSelector,
  showValue,
  type Cluster,
  type ClusterGroup,
  type LabelSelector,
  type Maintenance,
} from "@flotilla/core";
import type { ClusterFacts } from "@flotilla/protocol";
import { nameKey } from "../store/keys.js";
import { isRevisionConflict, type StateStore } from "../store/state-store.js";
import { createUpdateQueue } from "../store/update-queue.js";
import type { ClusterDirectory } from "./cluster-directory.js";
import { createHeartbeatStalls } from "./heartbeat-stalls.js";
import {
  applyLabelChange,
  CLUSTERS,
  labelCountProblem,
  recordToCluster,
  type ClusterRecord,
  type LabelChange,
} from "./cluster-record.js";

export type ConnectionState =
  "NeverConnected" | "Connected" | "Disconnected" | "Unreachable";

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

/** A cluster with its live connection state, for status and the admin API. */
export interface ClusterStatus {
  readonly record: ClusterRecord;
  readonly cluster: Cluster;
  readonly revision: number;
  readonly connection: ConnectionState;
  readonly lastSeenAtMs: number;
  /** The highest intent generation the agent says it finished (from hello and heartbeats). */
  readonly appliedGeneration: number;
}

interface Entry {
  record: ClusterRecord;
  revision: number;
  cluster: Cluster;
  session?: number;
  lastSeenAtMs: number;
  /** Where the silence that makes it Unreachable starts: lastSeenAtMs, moved on by hub stalls. */
  silenceFromMs: number;
  unreachable: boolean;
  everConnected: boolean;
  appliedGeneration: number;
  /** The record changed while the store was unavailable: {@link ClusterRegistry.flush} writes it. */
  unsaved?: boolean;
}

export interface ClusterRegistryDeps {
  readonly store: StateStore;
  readonly now: () => number;
  /** How long without a message before an agent is Unreachable (3 heartbeat intervals). */
  readonly unreachableAfterMs: number;
  /**
   * How heartbeats are checked, so that a stalled hub does not count its own stall as the agents'
   * silence (heartbeat-stalls.ts); absent: silence is measured by the clock alone.
   */
  readonly stalls?: {
    readonly checkIntervalMs: number;
    readonly heartbeatIntervalMs: number;
  };
  /** The cluster groups, for {@link ClusterDirectory.groups}. */
  readonly groups: () => readonly ClusterGroup[];
}

/** A session handle: pass it back so a stale session cannot touch a newer one's cluster. */
export interface SessionHandle {
  readonly cluster: string;
  readonly id: number;
}

export interface ClusterRegistry extends ClusterDirectory {
  start(): Promise<void>;
  onChange(listener: (change: ClusterChange) => void): () => void;
  /** Opens a session for an agent; `already_exists` while another live session holds the name. */
  connect(
    cluster: string,
    agentVersion: string,
    facts: ClusterFacts | undefined,
  ): Promise<SessionHandle>;
  /**
   * Records a cluster that registered and has not connected yet: NeverConnected until
   * its agent connects. A known cluster is left as it is.
   */
  enroll(cluster: string, agentVersion: string): Promise<void>;
  /** The agent's facts changed (or arrived after hello). */
  updateFacts(session: SessionHandle, facts: ClusterFacts): Promise<void>;
  /** The agent's windows changed. */
  updateMaintenance(
    session: SessionHandle,
    maintenance: Maintenance | undefined,
  ): Promise<void>;
  /** Any message from the agent; hello and heartbeats also say which generation it finished. */
  seen(session: SessionHandle, appliedGeneration?: number): void;
  isCurrent(session: SessionHandle): boolean;
  disconnect(session: SessionHandle): Promise<void>;
  /** Writes records kept in memory while the store was unavailable. */
  flush(): Promise<void>;
  /** Marks agents silent for too long Unreachable; returns their names. */
  checkHeartbeats(): string[];
  status(name: string): ClusterStatus | undefined;
  list(selector?: LabelSelector): ClusterStatus[];
  label(name: string, change: LabelChange): Promise<ClusterStatus>;
  remove(name: string): Promise<void>;
  /** Ends live sessions (cluster removed, or a silent session replaced): the agent service listens. */
  onSessionRevoked(
    listener: (session: SessionHandle, why: "removed" | "replaced") => void,
  ): void;
  connectedCount(): number;
}

export function createClusterRegistry(
  deps: ClusterRegistryDeps,
): ClusterRegistry {
  const entries = new Map<string, Entry>();
  let sorted: Cluster[] | undefined;
  const listeners = new Set<(change: ClusterChange) => void>();
  const revokers = new Set<
    (session: SessionHandle, why: "removed" | "replaced") => void
  >();
  let nextSession = 1;
  const labelUpdates = createUpdateQueue();
  const stalls =
    deps.stalls === undefined
      ? undefined
      : createHeartbeatStalls({
          ...deps.stalls,
          unreachableAfterMs: deps.unreachableAfterMs,
        });

  const emit = (change: ClusterChange): void => {
    sorted = undefined;
    for (const listener of listeners) listener(change);
  };

  const notFound = (name: string): FlotillaError =>
    new FlotillaError(
      "not_found",
      `Cluster ${showValue(name)} is not registered`,
    );

  const connection = (entry: Entry): ConnectionState => {
    if (!entry.everConnected) return "NeverConnected";
    if (entry.unreachable) return "Unreachable";
    return entry.session === undefined ? "Disconnected" : "Connected";
  };

  const statusOf = (entry: Entry): ClusterStatus => ({
    record: entry.record,
    cluster: entry.cluster,
    revision: entry.revision,
    connection: connection(entry),
    lastSeenAtMs: entry.lastSeenAtMs,
    appliedGeneration: entry.appliedGeneration,
  });

  const write = async (
    entry: Entry,
    record: ClusterRecord,
    expectedRevision?: number,
  ): Promise<void> => {
    const revision = await deps.store.put(
      CLUSTERS,
      nameKey(record.name),
      record,
      { expectedRevision: expectedRevision ?? entry.revision },
    );
    entry.record = record;
    entry.revision = revision;
    entry.cluster = recordToCluster(record);
  };

  /**
   * What agents tell the hub is kept even while the store is unavailable (a NATS outage must not
   * end agents' sessions): the record is updated in memory and written by the next flush.
   */
  const writeOrDefer = async (
    entry: Entry,
    record: ClusterRecord,
    expectedRevision?: number,
  ): Promise<void> => {
    try {
      await write(entry, record, expectedRevision);
      entry.unsaved = false;
    } catch (error) {
      if (!(error instanceof FlotillaError) || error.code !== "unavailable") {
        throw error;
      }
      entry.record = record;
      entry.cluster = recordToCluster(record);
      entry.unsaved = true;
    }
  };
  let flushing = false;

  const live = (session: SessionHandle): Entry | undefined => {
    const entry = entries.get(session.cluster);
    return entry?.session === session.id ? entry : undefined;
  };

  /** The entry of a cluster seen for the first time: connecting now (`session`) or enrolled. */
  const newEntry = (
    cluster: string,
    agentVersion: string,
    now: number,
    from: {
      readonly facts?: ClusterFacts | undefined;
      readonly session?: number;
    },
  ): Entry => {
    const record: ClusterRecord = {
      name: cluster,
      facts: from.facts ?? { labels: {}, nodePools: [] },
      operatorLabels: {},
      removedLabels: [],
      agentVersion,
      registeredAtMs: now,
      lastSeenAtMs: now,
      ...(from.session === undefined ? { neverConnected: true } : {}),
    };
    return {
      record,
      revision: 0,
      cluster: recordToCluster(record),
      ...(from.session === undefined ? {} : { session: from.session }),
      lastSeenAtMs: now,
      silenceFromMs: now,
      unreachable: false,
      everConnected: from.session !== undefined,
      appliedGeneration: 0,
    };
  };

  const markSeen = (entry: Entry): void => {
    entry.lastSeenAtMs = deps.now();
    entry.silenceFromMs = entry.lastSeenAtMs;
    if (entry.unreachable) {
      entry.unreachable = false;
      emit({ type: "reachable", cluster: entry.record.name });
    }
  };

  return {
    async start() {
      const now = deps.now();
      for (const { value, revision } of await deps.store.list(CLUSTERS)) {
        const seenAtMs = Math.max(value.lastSeenAtMs, now);
        entries.set(value.name, {
          record: value,
          revision,
          cluster: recordToCluster(value),
          // Seen at the hub's start: Unreachable only if it stays away a whole timeout.
          lastSeenAtMs: seenAtMs,
          silenceFromMs: seenAtMs,
          unreachable: false,
          everConnected: value.neverConnected !== true,
          appliedGeneration: 0,
        });
      }
      sorted = undefined;
    },

    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async connect(cluster, agentVersion, facts) {
      const now = deps.now();
      const existing = entries.get(cluster);
      if (existing?.session !== undefined && existing.unreachable) {
        // The old session went silent past the heartbeat timeout: its agent is gone (or cut off
        // and about to find its stream closed). The agent connecting now takes the name over.
        const stale = { cluster, id: existing.session };
        existing.session = undefined;
        for (const revoke of revokers) revoke(stale, "replaced");
      }
      if (existing?.session !== undefined) {
        throw new FlotillaError(
          "already_exists",
          `Cluster ${showValue(cluster)} already has a connected agent; a second agent cannot register under the same name`,
        );
      }
      const id = nextSession++;
      if (existing === undefined) {
        const entry = newEntry(cluster, agentVersion, now, {
          facts,
          session: id,
        });
        const { record } = entry;
        // Reserve the name before the write so a concurrent hello is refused.
        entries.set(cluster, entry);
        try {
          await writeOrDefer(entry, record, 0);
        } catch (error) {
          entries.delete(cluster);
          throw error;
        }
        emit({ type: "joined", cluster });
        return { cluster, id };
      }
      existing.session = id;
      const wasNeverConnected = !existing.everConnected;
      existing.everConnected = true;
      const same =
        !wasNeverConnected &&
        existing.record.agentVersion === agentVersion &&
        (facts === undefined ||
          JSON.stringify(existing.record.facts) === JSON.stringify(facts));
      if (same) {
        // A reconnect that changes nothing stored (after a hub restart, 10,000 of them at once)
        // writes nothing: the record's lastSeenAtMs stays at the last change, the live time is
        // in memory.
        markSeen(existing);
        return { cluster, id };
      }
      const record: {
        -readonly [K in keyof ClusterRecord]: ClusterRecord[K];
      } = {
        ...existing.record,
        agentVersion,
        lastSeenAtMs: now,
        ...(facts === undefined ? {} : { facts }),
      };
      delete record.neverConnected;
      try {
        await writeOrDefer(existing, record);
      } catch (error) {
        existing.session = undefined;
        existing.everConnected = !wasNeverConnected;
        throw error;
      }
      markSeen(existing);
      emit({ type: "changed", cluster });
      return { cluster, id };
    },

    async enroll(cluster, agentVersion) {
      if (entries.has(cluster)) return;
      const entry = newEntry(cluster, agentVersion, deps.now(), {});
      const { record } = entry;
      entries.set(cluster, entry);
      try {
        await write(entry, record, 0);
      } catch (error) {
        if (entries.get(cluster) === entry) entries.delete(cluster);
        // Another hub (or a connect here) recorded it first: that record stands.
        if (isRevisionConflict(error)) return;
        throw error;
      }
      emit({ type: "joined", cluster });
    },

    async updateFacts(session, facts) {
      const entry = live(session);
      if (entry === undefined) return;
      markSeen(entry);
      const before = JSON.stringify(entry.record.facts);
      if (before === JSON.stringify(facts)) return;
      const windowsChanged =
        JSON.stringify(entry.record.facts.maintenance) !==
        JSON.stringify(facts.maintenance);
      await writeOrDefer(entry, { ...entry.record, facts });
      emit({ type: "changed", cluster: session.cluster });
      if (windowsChanged) {
        emit({
          type: "windows",
          cluster: session.cluster,
          ...(facts.maintenance === undefined
            ? {}
            : { maintenance: facts.maintenance }),
        });
      }
    },

    async updateMaintenance(session, maintenance) {
      const entry = live(session);
      if (entry === undefined) return;
      const facts: { -readonly [K in keyof ClusterFacts]: ClusterFacts[K] } = {
        ...entry.record.facts,
      };
      if (maintenance === undefined) delete facts.maintenance;
      else facts.maintenance = maintenance;
      await this.updateFacts(session, facts);
    },

    seen(session, appliedGeneration) {
      const entry = live(session);
      if (entry === undefined) return;
      markSeen(entry);
      if (appliedGeneration !== undefined)
        entry.appliedGeneration = appliedGeneration;
    },

    isCurrent(session) {
      return live(session) !== undefined;
    },

    async disconnect(session) {
      const entry = live(session);
      if (entry === undefined) return;
      entry.session = undefined;
      entry.lastSeenAtMs = deps.now();
      entry.silenceFromMs = entry.lastSeenAtMs;
      try {
        await write(entry, {
          ...entry.record,
          lastSeenAtMs: entry.lastSeenAtMs,
        });
      } catch {
        // The in-memory state is right; the persisted lastSeen is only a hint after a restart.
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

    checkHeartbeats() {
      const now = deps.now();
      const blindMs = stalls?.blindMsAt(now) ?? 0;
      const gone: string[] = [];
      for (const entry of entries.values()) {
        if (stalls !== undefined && blindMs > 0) {
          entry.silenceFromMs = stalls.silenceFromAfter(
            entry.silenceFromMs,
            blindMs,
            now,
          );
        }
        if (entry.unreachable) continue;
        if (now - entry.silenceFromMs < deps.unreachableAfterMs) continue;
        entry.unreachable = true;
        gone.push(entry.record.name);
        emit({ type: "unreachable", cluster: entry.record.name });
      }
      return gone;
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

    label(name, change) {
      return labelUpdates.update(name, {
        what: `cluster ${showValue(name)}`,
        expectedRevision: change.expectedRevision,
        write: async () => {
          const entry = entries.get(name);
          if (entry === undefined) throw notFound(name);
          const record = applyLabelChange(entry.record, change);
          const tooMany = labelCountProblem(entry.record, record);
          if (tooMany !== undefined)
            throw FlotillaError.invalid("cluster labels", [tooMany]);
          await write(entry, record, change.expectedRevision ?? entry.revision);
          emit({ type: "changed", cluster: name });
          return statusOf(entry);
        },
        reload: async () => {
          const stored = await deps.store.get(CLUSTERS, nameKey(name));
          const entry = entries.get(name);
          if (stored === undefined || entry === undefined) throw notFound(name);
          // Facts kept in memory through a store outage are newer than the stored ones.
          entry.record =
            entry.unsaved === true
              ? { ...stored.value, facts: entry.record.facts }
              : stored.value;
          entry.revision = stored.revision;
          entry.cluster = recordToCluster(entry.record);
        },
      });
    },

    async remove(name) {
      const entry = entries.get(name);
      if (entry === undefined) throw notFound(name);
      await deps.store.delete(CLUSTERS, nameKey(name), {
        expectedRevision: entry.revision,
      });
      entries.delete(name);
      if (entry.session !== undefined) {
        const session = { cluster: name, id: entry.session };
        for (const revoke of revokers) revoke(session, "removed");
      }
      emit({ type: "left", cluster: name });
    },

    onSessionRevoked(listener) {
      revokers.add(listener);
    },

    connectedCount() {
      let n = 0;
      for (const entry of entries.values())
        if (entry.session !== undefined) n++;
      return n;
    },

    // ClusterDirectory
    clusters() {
      sorted ??= [...entries.values()]
        .map((e) => e.cluster)
        .sort((a, b) => compareNames(a.name, b.name));
      return sorted;
    },
    cluster(name) {
      return entries.get(name)?.cluster;
    },
    groups() {
      return deps.groups();
    },
    isUnreachable(name) {
      return entries.get(name)?.unreachable ?? false;
    },
  };
}
