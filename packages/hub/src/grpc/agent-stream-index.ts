/**
 * The agent streams with an open session, by cluster: how the registry's news reaches a live
 * stream. A cluster back from Unreachable is asked to resync (it may have reported into the void
 * while its stream was stuck); a revoked session (cluster removed, or a silent session replaced)
 * has its stream refused.
 */
import { FlotillaError, showValue } from "@flotilla/core";
import type {
  ClusterRegistry,
  SessionHandle,
} from "../clusters/cluster-registry.js";
import type { RevokeReason } from "../clusters/cluster-listeners.js";

/** What the index can do to a live stream. */
export interface LiveStream {
  refuse(error: FlotillaError): void;
  resync(reason: string): void;
}

export interface AgentStreamIndex {
  add(session: SessionHandle, stream: LiveStream): void;
  /** Forgets the session's stream, unless a newer session of its cluster took its place. */
  remove(session: SessionHandle): void;
}

/** Why a revoked session's stream is refused. */
export function revocationError(
  cluster: string,
  why: RevokeReason,
): FlotillaError {
  return why === "removed"
    ? new FlotillaError(
        "permission_denied",
        `Cluster ${showValue(cluster)} was removed from the fleet by an operator`,
      )
    : new FlotillaError(
        "unavailable",
        `Cluster ${showValue(cluster)} was silent past its heartbeat timeout and another session took over`,
      );
}

export function createAgentStreamIndex(
  registry: Pick<ClusterRegistry, "onChange" | "onSessionRevoked">,
): AgentStreamIndex {
  const byCluster = new Map<
    string,
    { readonly session: SessionHandle; readonly stream: LiveStream }
  >();

  // An agent back from Unreachable may have reported into the void (reports sent while its
  // stream was stuck): ask it for its current status of everything.
  registry.onChange((change) => {
    if (change.type !== "reachable") return;
    byCluster.get(change.cluster)?.stream.resync("back from unreachable");
  });

  registry.onSessionRevoked((session, why) => {
    const live = byCluster.get(session.cluster);
    if (live?.session.id === session.id) {
      live.stream.refuse(revocationError(session.cluster, why));
    }
  });

  return {
    add(session, stream) {
      byCluster.set(session.cluster, { session, stream });
    },
    remove(session) {
      if (byCluster.get(session.cluster)?.session.id === session.id) {
        byCluster.delete(session.cluster);
      }
    },
  };
}
