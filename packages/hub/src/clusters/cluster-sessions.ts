/**
 * Agents' sessions in the cluster registry: an agent's hello opens one (at most one live session a
 * cluster), every later message refreshes it, its stream's end closes it. Heartbeats are kept in
 * memory only (persisting 10,000 heartbeats every 10 s would be most of the hub's writes): an
 * agent silent past the timeout is marked Unreachable by {@link ClusterSessions.checkHeartbeats}.
 */
import {
  FlotillaError,
  showValue,
  type Maintenance,
  compact,
} from "@flotilla/core";
import type { ClusterFacts } from "@flotilla/protocol";
import {
  heardAt,
  isLive,
  newEntry,
  type ClusterEntry,
  type SessionHandle,
} from "./cluster-entry.js";
import { factChanges, type ClusterListeners } from "./cluster-listeners.js";
import type { ClusterRecord } from "./cluster-record.js";
import type { ClusterRecords } from "./cluster-records.js";
import { createHeartbeatStalls } from "./heartbeat-stalls.js";

export interface ClusterSessionsDeps {
  readonly records: ClusterRecords;
  readonly listeners: ClusterListeners;
  readonly now: () => number;
  /** How long without a message before an agent is Unreachable (3 heartbeat intervals). */
  readonly unreachableAfterMs: number;
  /** How heartbeats are checked (heartbeat-stalls.ts); absent: silence is measured by the clock. */
  readonly stalls?:
    | {
        readonly checkIntervalMs: number;
        readonly heartbeatIntervalMs: number;
      }
    | undefined;
}

export interface ClusterSessions {
  /** Opens a session for an agent; `already_exists` while another live session holds the name. */
  connect(
    cluster: string,
    agentVersion: string,
    facts: ClusterFacts | undefined,
  ): Promise<SessionHandle>;
  /** The agent's facts changed (or arrived after hello). */
  /**
   * The agent's facts; `keepCatalogue`: its catalogue was refused, the one stored stays
   * (docs/engine.md#the-version-catalogue).
   */
  updateFacts(
    session: SessionHandle,
    facts: ClusterFacts,
    options?: { readonly keepCatalogue?: boolean },
  ): Promise<void>;
  /** The agent's windows changed. */
  updateMaintenance(
    session: SessionHandle,
    maintenance: Maintenance | undefined,
  ): Promise<void>;
  /** Any message from the agent; hello and heartbeats also say which generation it finished. */
  seen(session: SessionHandle, appliedGeneration?: number): void;
  isCurrent(session: SessionHandle): boolean;
  disconnect(session: SessionHandle): Promise<void>;
  /** Marks agents silent for too long Unreachable; returns their names. */
  checkHeartbeats(): string[];
}

export function createClusterSessions(
  deps: ClusterSessionsDeps,
): ClusterSessions {
  const { records, listeners } = deps;
  let nextSession = 1;
  const stalls =
    deps.stalls === undefined
      ? undefined
      : createHeartbeatStalls({
          ...deps.stalls,
          unreachableAfterMs: deps.unreachableAfterMs,
        });

  const live = (session: SessionHandle): ClusterEntry | undefined => {
    const entry = records.get(session.cluster);
    return isLive(entry, session) ? entry : undefined;
  };

  const markSeen = (entry: ClusterEntry): void => {
    if (heardAt(entry, deps.now())) {
      listeners.emit({ type: "reachable", cluster: entry.record.name });
    }
  };

  /** A cluster seen for the first time opens its session with a new record. */
  const join = async (
    cluster: string,
    agentVersion: string,
    facts: ClusterFacts | undefined,
    id: number,
    now: number,
  ): Promise<SessionHandle> => {
    const entry = newEntry(cluster, agentVersion, now, {
      facts,
      session: id,
    });
    const { record } = entry;
    // Reserve the name before the write so a concurrent hello is refused.
    records.set(entry);
    try {
      await records.writeOrDefer(entry, record, 0);
    } catch (error) {
      records.delete(cluster);
      throw error;
    }
    listeners.emit({ type: "joined", cluster });
    return { cluster, id };
  };

  /** A known cluster's agent opens a new session; its record is written only if it changed. */
  const rejoin = async (
    existing: ClusterEntry,
    agentVersion: string,
    facts: ClusterFacts | undefined,
    id: number,
    now: number,
  ): Promise<SessionHandle> => {
    const cluster = existing.record.name;
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
      ...compact({ facts }),
    };
    delete record.neverConnected;
    // An agent restarted with another configuration (--support-plan) says so in its hello.
    const changes =
      facts === undefined
        ? []
        : factChanges(cluster, existing.record.facts, facts);
    try {
      await records.writeOrDefer(existing, record);
    } catch (error) {
      existing.session = undefined;
      existing.everConnected = !wasNeverConnected;
      throw error;
    }
    markSeen(existing);
    listeners.emit({ type: "changed", cluster });
    for (const change of changes) listeners.emit(change);
    return { cluster, id };
  };

  const updateFacts = async (
    session: SessionHandle,
    reported: ClusterFacts,
    options: { readonly keepCatalogue?: boolean } = {},
  ): Promise<void> => {
    const entry = live(session);
    if (entry === undefined) return;
    const kept = entry.record.facts.catalogue;
    const facts: ClusterFacts =
      options.keepCatalogue === true
        ? { ...reported, ...compact({ catalogue: kept }) }
        : reported;
    markSeen(entry);
    const before = JSON.stringify(entry.record.facts);
    if (before === JSON.stringify(facts)) return;
    const changes = factChanges(session.cluster, entry.record.facts, facts);
    await records.writeOrDefer(entry, { ...entry.record, facts });
    listeners.emit({ type: "changed", cluster: session.cluster });
    for (const change of changes) listeners.emit(change);
  };

  return {
    async connect(cluster, agentVersion, facts) {
      const now = deps.now();
      const existing = records.get(cluster);
      if (existing?.session !== undefined && existing.unreachable) {
        // The old session went silent past the heartbeat timeout: its agent is gone (or cut off
        // and about to find its stream closed). The agent connecting now takes the name over.
        const stale = { cluster, id: existing.session };
        existing.session = undefined;
        listeners.revoke(stale, "replaced");
      }
      if (existing?.session !== undefined) {
        throw new FlotillaError(
          "already_exists",
          `Cluster ${showValue(cluster)} already has a connected agent; a second agent cannot register under the same name`,
        );
      }
      const id = nextSession++;
      return existing === undefined
        ? join(cluster, agentVersion, facts, id, now)
        : rejoin(existing, agentVersion, facts, id, now);
    },

    updateFacts,

    async updateMaintenance(session, maintenance) {
      const entry = live(session);
      if (entry === undefined) return;
      const facts: { -readonly [K in keyof ClusterFacts]: ClusterFacts[K] } = {
        ...entry.record.facts,
      };
      if (maintenance === undefined) delete facts.maintenance;
      else facts.maintenance = maintenance;
      await updateFacts(session, facts);
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
        await records.write(entry, {
          ...entry.record,
          lastSeenAtMs: entry.lastSeenAtMs,
        });
      } catch {
        // The in-memory state is right; the persisted lastSeen is only a hint after a restart.
      }
    },

    checkHeartbeats() {
      const now = deps.now();
      const blindMs = stalls?.blindMsAt(now) ?? 0;
      const gone: string[] = [];
      for (const entry of records.entries()) {
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
        entry.remote = undefined;
        gone.push(entry.record.name);
        listeners.emit({ type: "unreachable", cluster: entry.record.name });
      }
      return gone;
    },
  };
}
