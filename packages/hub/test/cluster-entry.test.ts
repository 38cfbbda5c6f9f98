/**
 * A cluster's entry in the registry: how a new or loaded entry starts, which connection state it
 * shows, and how hearing its agent ends its being unreachable.
 */
import { describe, expect, it } from "vitest";
import {
  connectionOf,
  heardAt,
  isLive,
  loadedEntry,
  newEntry,
  statusOf,
} from "../src/clusters/cluster-entry.js";

describe("cluster entries", () => {
  it("starts a connecting cluster Connected and an enrolled one NeverConnected", () => {
    const connecting = newEntry("c-1", "v1", 5_000, { session: 3 });
    expect(connecting.record).toEqual({
      name: "c-1",
      facts: { labels: {}, nodePools: [] },
      operatorLabels: {},
      removedLabels: [],
      agentVersion: "v1",
      registeredAtMs: 5_000,
      lastSeenAtMs: 5_000,
    });
    expect(connecting.session).toBe(3);
    expect(connectionOf(connecting)).toBe("Connected");

    const enrolled = newEntry("c-2", "v1", 5_000, {});
    expect(enrolled.record.neverConnected).toBe(true);
    expect("session" in enrolled).toBe(false);
    expect(connectionOf(enrolled)).toBe("NeverConnected");
  });

  it("keeps the facts a connecting agent sent", () => {
    const facts = { labels: { env: "prod" }, nodePools: [], region: "eu" };
    const entry = newEntry("c-1", "v1", 0, { facts, session: 1 });
    expect(entry.record.facts).toBe(facts);
    expect(entry.cluster.labels).toEqual({ env: "prod" });
    expect(entry.cluster.region).toBe("eu");
  });

  it("loads a stored record Disconnected, seen at the hub's start", () => {
    const record = newEntry("c-1", "v1", 1_000, { session: 1 }).record;
    const entry = loadedEntry(record, 7, 9_000);
    expect(entry.revision).toBe(7);
    expect(entry.lastSeenAtMs).toBe(9_000);
    expect(entry.silenceFromMs).toBe(9_000);
    expect(connectionOf(entry)).toBe("Disconnected");
    // A record from a clock ahead of the hub's keeps its time.
    expect(loadedEntry(record, 7, 500).lastSeenAtMs).toBe(1_000);
    // A record that never connected stays NeverConnected after a restart.
    const enrolled = newEntry("c-2", "v1", 1_000, {}).record;
    expect(connectionOf(loadedEntry(enrolled, 1, 9_000))).toBe(
      "NeverConnected",
    );
  });

  it("shows Unreachable until its agent is heard again", () => {
    const entry = newEntry("c-1", "v1", 0, { session: 1 });
    entry.unreachable = true;
    expect(statusOf(entry).connection).toBe("Unreachable");
    expect(heardAt(entry, 40_000)).toBe(true);
    expect(statusOf(entry)).toMatchObject({
      connection: "Connected",
      lastSeenAtMs: 40_000,
      revision: 0,
      appliedGeneration: 0,
    });
    expect(entry.silenceFromMs).toBe(40_000);
    expect(heardAt(entry, 50_000)).toBe(false);
  });

  it("knows a stale session handle from the live one", () => {
    const entry = newEntry("c-1", "v1", 0, { session: 2 });
    expect(isLive(entry, { cluster: "c-1", id: 2 })).toBe(true);
    expect(isLive(entry, { cluster: "c-1", id: 1 })).toBe(false);
    expect(isLive(undefined, { cluster: "c-1", id: 2 })).toBe(false);
  });
});
