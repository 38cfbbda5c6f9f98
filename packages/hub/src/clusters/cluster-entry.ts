/**
 * What the cluster registry keeps for one cluster: its stored record and revision, the cluster as
 * the engine sees it, and the live state of its agent (session, when it was last heard, whether it
 * is unreachable). Only the record is persisted; the rest is memory (heartbeats are not written).
 */
import type { Cluster } from "@flotilla/core";
import type { ClusterFacts } from "@flotilla/protocol";
import { recordToCluster, type ClusterRecord } from "./cluster-record.js";
import { compact } from "@flotilla/core";

export type ConnectionState =
  "NeverConnected" | "Connected" | "Disconnected" | "Unreachable";

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

/** A session handle: pass it back so a stale session cannot touch a newer one's cluster. */
export interface SessionHandle {
  readonly cluster: string;
  readonly id: number;
}

export interface ClusterEntry {
  record: ClusterRecord;
  revision: number;
  cluster: Cluster;
  session?: number | undefined;
  lastSeenAtMs: number;
  /** Where the silence that makes it Unreachable starts: lastSeenAtMs, moved on by hub stalls. */
  silenceFromMs: number;
  unreachable: boolean;
  everConnected: boolean;
  appliedGeneration: number;
  /** The record changed while the store was unavailable: the registry's flush writes it. */
  unsaved?: boolean;
  /** The hub replica whose agent session this cluster has, when not this one (presence). */
  remote?: string | undefined;
}

/** The entry of a cluster seen for the first time: connecting now (`session`) or enrolled. */
export function newEntry(
  cluster: string,
  agentVersion: string,
  now: number,
  from: {
    readonly facts?: ClusterFacts | undefined;
    readonly session?: number;
  },
): ClusterEntry {
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
    ...compact({ session: from.session }),
    lastSeenAtMs: now,
    silenceFromMs: now,
    unreachable: false,
    everConnected: from.session !== undefined,
    appliedGeneration: 0,
  };
}

/**
 * The entry of a stored record as the hub starts: Disconnected, seen at the hub's start (or at
 * the record's time if later), so it is Unreachable only if it stays away a whole timeout.
 */
export function loadedEntry(
  record: ClusterRecord,
  revision: number,
  now: number,
): ClusterEntry {
  const seenAtMs = Math.max(record.lastSeenAtMs, now);
  return {
    record,
    revision,
    cluster: recordToCluster(record),
    lastSeenAtMs: seenAtMs,
    silenceFromMs: seenAtMs,
    unreachable: false,
    everConnected: record.neverConnected !== true,
    appliedGeneration: 0,
  };
}

export function connectionOf(entry: ClusterEntry): ConnectionState {
  if (!entry.everConnected) return "NeverConnected";
  if (entry.unreachable) return "Unreachable";
  return entry.session === undefined && entry.remote === undefined
    ? "Disconnected"
    : "Connected";
}

export function statusOf(entry: ClusterEntry): ClusterStatus {
  return {
    record: entry.record,
    cluster: entry.cluster,
    revision: entry.revision,
    connection: connectionOf(entry),
    lastSeenAtMs: entry.lastSeenAtMs,
    appliedGeneration: entry.appliedGeneration,
  };
}

/** Sets the entry's record (and the cluster derived from it) without touching its revision. */
export function setRecord(entry: ClusterEntry, record: ClusterRecord): void {
  entry.record = record;
  entry.cluster = recordToCluster(record);
}

/** The agent was heard now; true when that ends its being unreachable. */
export function heardAt(entry: ClusterEntry, now: number): boolean {
  entry.lastSeenAtMs = now;
  entry.silenceFromMs = now;
  if (!entry.unreachable) return false;
  entry.unreachable = false;
  return true;
}

/** True while the handle names the cluster's live session. */
export function isLive(
  entry: ClusterEntry | undefined,
  session: SessionHandle,
): entry is ClusterEntry {
  return entry !== undefined && entry.session === session.id;
}
