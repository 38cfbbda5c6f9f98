/**
 * The index of live agent streams: a cluster back from Unreachable is asked to resync, a revoked
 * session's stream is refused with why, and a stale session never touches its successor's stream.
 */
import type { FlotillaError } from "@flotilla/core";
import { describe, expect, it } from "vitest";
import type {
  ClusterChange,
  SessionHandle,
} from "../src/clusters/cluster-registry.js";
import type { RevokeReason } from "../src/clusters/cluster-listeners.js";
import {
  createAgentStreamIndex,
  revocationError,
} from "../src/grpc/agent-stream-index.js";

function setup() {
  let change: (c: ClusterChange) => void = () => undefined;
  let revoke: (s: SessionHandle, why: RevokeReason) => void = () => undefined;
  const index = createAgentStreamIndex({
    onChange: (listener) => {
      change = listener;
      return () => undefined;
    },
    onSessionRevoked: (listener) => {
      revoke = listener;
    },
  });
  const heard: unknown[] = [];
  const stream = (name: string) => ({
    refuse: (e: FlotillaError) => heard.push([name, "refuse", e.code]),
    resync: (reason: string) => heard.push([name, "resync", reason]),
  });
  return {
    index,
    heard,
    stream,
    change: (c: ClusterChange) => {
      change(c);
    },
    revoke: (s: SessionHandle, why: RevokeReason) => {
      revoke(s, why);
    },
  };
}

describe("agent stream index", () => {
  it("asks a cluster back from unreachable to resync", () => {
    const t = setup();
    t.index.add({ cluster: "c-1", id: 1 }, t.stream("s1"));
    t.change({ type: "reachable", cluster: "c-1" });
    t.change({ type: "unreachable", cluster: "c-1" });
    t.change({ type: "reachable", cluster: "c-2" });
    expect(t.heard).toEqual([["s1", "resync", "back from unreachable"]]);
  });

  it("refuses the stream of a revoked session, not of a newer one", () => {
    const t = setup();
    t.index.add({ cluster: "c-1", id: 2 }, t.stream("s2"));
    t.revoke({ cluster: "c-1", id: 1 }, "replaced");
    expect(t.heard).toEqual([]);
    t.revoke({ cluster: "c-1", id: 2 }, "removed");
    expect(t.heard).toEqual([["s2", "refuse", "permission_denied"]]);
  });

  it("forgets a session's stream only while it is the cluster's", () => {
    const t = setup();
    t.index.add({ cluster: "c-1", id: 2 }, t.stream("s2"));
    t.index.remove({ cluster: "c-1", id: 1 });
    t.change({ type: "reachable", cluster: "c-1" });
    t.index.remove({ cluster: "c-1", id: 2 });
    t.change({ type: "reachable", cluster: "c-1" });
    expect(t.heard).toEqual([["s2", "resync", "back from unreachable"]]);
  });

  it("says why a revoked session ends", () => {
    expect(revocationError("c-1", "removed")).toMatchObject({
      code: "permission_denied",
      message: 'Cluster "c-1" was removed from the fleet by an operator',
    });
    expect(revocationError("c-1", "replaced")).toMatchObject({
      code: "unavailable",
      message:
        'Cluster "c-1" was silent past its heartbeat timeout and another session took over',
    });
  });
});
