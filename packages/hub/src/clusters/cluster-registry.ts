/**
 * The clusters the hub knows, their agents' sessions and their reachability (docs/agent-protocol.md).
 *
 * Records live in the StateStore and are cached here (cluster-records.ts); agents' sessions and
 * heartbeats are kept in memory only (cluster-sessions.ts). A hub that restarts loads every record
 * as Disconnected, seen at its start: a cluster whose agent does not come back becomes Unreachable
 * one heartbeat timeout later, as if the hub had never gone away. A cluster that registered and
 * whose agent never connected shows NeverConnected (its record says so), even once the schedulers
 * count it unreachable: it never had a session to lose.
 *
 * Listeners (cluster-listeners.ts) hear every change that matters to the schedulers, and the
 * agent service hears which live sessions must end.
 */
import type { ClusterGroup, LabelSelector } from "@flotilla/core";
import type { ClusterFacts } from "@flotilla/protocol";
import type { StateStore } from "../store/state-store.js";
import { createClusterAdmin, type ClusterAdmin } from "./cluster-admin.js";
import type { ClusterDirectory } from "./cluster-directory.js";
import type { ClusterStatus } from "./cluster-entry.js";
import {
  createClusterListeners,
  type ClusterChange,
  type RevokeListener,
} from "./cluster-listeners.js";
import { createClusterRecords } from "./cluster-records.js";
import {
  createClusterReplication,
  type ClusterReplication,
} from "./cluster-replication.js";
import {
  createClusterSessions,
  type ClusterSessions,
} from "./cluster-sessions.js";

export type {
  ClusterStatus,
  ConnectionState,
  SessionHandle,
} from "./cluster-entry.js";
export type { ClusterChange } from "./cluster-listeners.js";

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
  /** A record written by another replica could not be taken in. */
  readonly onFollowError?: (error: unknown) => void;
}

export interface ClusterRegistry
  extends ClusterDirectory, ClusterSessions, ClusterAdmin, ClusterReplication {
  start(): Promise<void>;
  onChange(listener: (change: ClusterChange) => void): () => void;
  /** Writes records kept in memory while the store was unavailable. */
  flush(): Promise<void>;
  status(name: string): ClusterStatus | undefined;
  list(selector?: LabelSelector): ClusterStatus[];
  /** Ends live sessions (cluster removed, or a silent session replaced): the agent service listens. */
  onSessionRevoked(listener: RevokeListener): void;
  connectedCount(): number;
  /** What the cluster's agent reported last (with its catalogue), or undefined when unknown. */
  factsOf(name: string): ClusterFacts | undefined;
}

export function createClusterRegistry(
  deps: ClusterRegistryDeps,
): ClusterRegistry {
  const records = createClusterRecords(deps.store);
  const listeners = createClusterListeners(() => {
    records.invalidate();
  });
  const sessions = createClusterSessions({
    records,
    listeners,
    now: deps.now,
    unreachableAfterMs: deps.unreachableAfterMs,
    stalls: deps.stalls,
  });
  const admin = createClusterAdmin({
    store: deps.store,
    records,
    listeners,
    now: deps.now,
  });

  const replication = createClusterReplication({
    store: deps.store,
    records,
    listeners,
    now: deps.now,
    onError: (error) => deps.onFollowError?.(error),
  });

  return {
    ...sessions,
    ...admin,
    ...replication,
    start: () => records.load(deps.now()),
    onChange: (listener) => listeners.onChange(listener),
    onSessionRevoked: (listener) => {
      listeners.onSessionRevoked(listener);
    },
    flush: () => records.flush(),
    status: (name) => records.status(name),
    list: (selector) => records.list(selector),
    connectedCount: () => records.connectedCount(),
    factsOf: (name) => records.get(name)?.record.facts,

    // ClusterDirectory
    clusters: () => records.clusters(),
    cluster: (name) => records.get(name)?.cluster,
    groups: () => deps.groups(),
    isUnreachable: (name) => records.get(name)?.unreachable ?? false,
  };
}
