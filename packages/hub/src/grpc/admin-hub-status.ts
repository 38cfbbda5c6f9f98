/**
 * AdminService: GetHubStatus, the hub as an operator sees it (`flotilla hub status`): the replica
 * that answered, every live replica with the agent sessions and leases it holds, and the health of
 * the JetStream streams the hub keeps its state in (docs/high-availability.md). Read-only.
 */
import type { wire } from "@flotilla/protocol";
import type { StreamHealth } from "../jetstream/stream-health.js";
import type { ReplicaRecord } from "../leases/lease-keeper.js";
import { unary } from "./unary.js";

type Handlers = wire.AdminServiceHandlers;

export interface HubStatusDeps {
  /** The replica answering, as of now. */
  readonly self: () => ReplicaRecord;
  /** The live replicas as of the last lease round (its own record is replaced by `self`). */
  readonly replicas: () => readonly ReplicaRecord[];
  /** The hub's streams; absent: the hub does not run on JetStream. */
  readonly streams?: () => Promise<readonly StreamHealth[]>;
}

function replicaToWire(replica: ReplicaRecord): wire.HubReplica {
  return {
    id: replica.id,
    address: replica.address,
    version: replica.version,
    startedAtMs: replica.startedAtMs,
    sessions: replica.sessions,
    leases: [...replica.leases].sort(),
    eligible: replica.eligible,
    seenAtMs: replica.seenAtMs,
  };
}

function streamToWire(stream: StreamHealth): wire.HubStream {
  return {
    label: stream.label,
    name: stream.stream,
    replicas: stream.replicas,
    leader: stream.leader,
    peers: stream.peers.map((p) => ({ ...p })),
    error: stream.error ?? "",
  };
}

export function hubStatusHandlers(
  deps: HubStatusDeps,
): Pick<Handlers, "GetHubStatus"> {
  return {
    GetHubStatus: unary<
      wire.GetHubStatusRequest__Output,
      wire.GetHubStatusResponse
    >(async () => {
      const streams = (await deps.streams?.()) ?? [];
      const self = deps.self();
      return {
        replica: self.id,
        replicas: [self, ...deps.replicas().filter((r) => r.id !== self.id)]
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .map(replicaToWire),
        streams: streams.map(streamToWire),
      };
    }),
  };
}
