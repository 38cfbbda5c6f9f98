/**
 * How the hub's JetStream streams are doing, as `flotilla hub status` shows them: each stream's
 * replica count and, on a NATS cluster, which server leads it and whether every other copy is
 * current, how far behind it is, or offline (JetStream's stream info). A stream whose state cannot
 * be read is reported with the reason, not left out (docs/high-availability.md).
 */
import type { JetStreamManager } from "@nats-io/jetstream";
import type { HubStream } from "./hub-streams.js";

/** One copy of a stream on a NATS server other than the leader. */
export interface StreamPeerHealth {
  readonly name: string;
  readonly current: boolean;
  /** Operations behind the leader. */
  readonly lag: number;
  readonly offline: boolean;
}

/** A stream's health, or why it could not be read. */
export interface StreamHealth extends HubStream {
  readonly replicas: number;
  /** Empty when the stream has no leader (or on a server that does not say). */
  readonly leader: string;
  readonly peers: readonly StreamPeerHealth[];
  /** Set when the stream's info could not be read; the other fields are then empty. */
  readonly error?: string;
}

/** Reads the health of each of `streams`, in their order. */
export async function readStreamHealth(
  jsm: Pick<JetStreamManager, "streams">,
  streams: readonly HubStream[],
): Promise<StreamHealth[]> {
  return Promise.all(
    streams.map(async (s): Promise<StreamHealth> => {
      try {
        const { config, cluster } = await jsm.streams.info(s.stream);
        return {
          ...s,
          replicas: config.num_replicas,
          leader: cluster?.leader ?? "",
          peers: (cluster?.replicas ?? []).map((p) => ({
            name: p.name,
            current: p.current,
            lag: p.lag ?? 0,
            offline: p.offline,
          })),
        };
      } catch (error) {
        return {
          ...s,
          replicas: 0,
          leader: "",
          peers: [],
          error: error instanceof Error ? error.message : String(error),
        };
      }
    }),
  );
}
