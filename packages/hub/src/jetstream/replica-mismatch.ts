/**
 * Streams that existed before the hub started keep the replica count they were created with: the
 * hub does not change it (a rolling restart of hubs with different settings would flip it back and
 * forth; `nats stream edit STREAM --replicas N` changes it on purpose). Each one that differs from
 * `--jetstream-replicas` is named in a warning (docs/running.md).
 */
import type { JetStreamManager } from "@nats-io/jetstream";
import { isStreamNotFound } from "@flotilla/node";
import type { Logger } from "../logger.js";
import type { HubStream } from "./hub-streams.js";

/** A stream whose replica count is not the one wanted. */
export interface ReplicaMismatch extends HubStream {
  readonly replicas: number;
}

/** The streams of `streams` that exist with another replica count than `wanted`. */
export async function findReplicaMismatches(
  jsm: JetStreamManager,
  streams: readonly HubStream[],
  wanted: number,
): Promise<ReplicaMismatch[]> {
  const found = await Promise.all(
    streams.map(async (s): Promise<ReplicaMismatch[]> => {
      try {
        const { config } = await jsm.streams.info(s.stream);
        return config.num_replicas === wanted
          ? []
          : [{ ...s, replicas: config.num_replicas }];
      } catch (error) {
        if (isStreamNotFound(error)) return [];
        throw error;
      }
    }),
  );
  return found.flat();
}

/**
 * Finds the streams of `streams` that exist with another replica count than `wanted` and logs one
 * warning for each, naming the stream, its replicas, the count wanted and how to change it.
 */
export async function warnReplicaMismatches(
  deps: { readonly jsm: JetStreamManager; readonly log: Logger },
  streams: readonly HubStream[],
  wanted: number,
  flag: string,
): Promise<ReplicaMismatch[]> {
  const mismatches = await findReplicaMismatches(deps.jsm, streams, wanted);
  for (const m of mismatches) {
    deps.log.warn(
      { stream: m.stream, replicas: m.replicas, wanted },
      `The existing ${m.label} has ${String(m.replicas)} replica(s), not the ${String(wanted)} of ${flag}; it is used as it is (change it with: nats stream edit ${m.stream} --replicas ${String(wanted)})`,
    );
  }
  return mismatches;
}
