/**
 * Whether NATS can keep the replica count the hub is configured with (`--jetstream-replicas`):
 * a single server keeps one copy only, and a cluster as many as it has servers to place them on.
 * Checked before the hub creates anything, and JetStream's own refusals are turned into the same
 * kind of error, naming the flag, the value and the cause (docs/running.md).
 */
import { FlotillaError, compact } from "@flotilla/core";
import { JetStreamApiError } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";

/** JetStream's error codes for replica counts it cannot keep. */
const NOT_CLUSTERED = 10074; // replicas > 1 not supported in non-clustered mode
const NO_SUITABLE_PEERS = 10005; // no suitable peers for placement
const ABOVE_MAXIMUM = 10052; // maximum replicas is 5

/** Fails when `replicas` > 1 and the server `nc` is connected to is not part of a cluster. */
export function checkReplicasPossible(
  nc: Pick<NatsConnection, "info">,
  replicas: number,
  flag: string,
): void {
  if (replicas > 1 && nc.info !== undefined && nc.info.cluster === undefined) {
    throw notClustered(replicas, flag, undefined);
  }
}

/**
 * The error to report when `error` (or one of its causes) is JetStream refusing the replica
 * count; undefined for any other error.
 */
export function replicaRefusal(
  error: unknown,
  replicas: number,
  flag: string,
): FlotillaError | undefined {
  const refusal = jetStreamApiError(error);
  if (refusal === undefined) return undefined;
  switch (refusal.code) {
    case NOT_CLUSTERED:
      return notClustered(replicas, flag, error);
    case NO_SUITABLE_PEERS:
      return new FlotillaError(
        "failed_precondition",
        `${flag} ${String(replicas)}: the NATS cluster cannot place ${String(replicas)} replicas (JetStream: ${refusal.message}); it needs at least ${String(replicas)} servers with JetStream running, or a lower ${flag}`,
        { cause: error },
      );
    case ABOVE_MAXIMUM:
      return new FlotillaError(
        "failed_precondition",
        `${flag} ${String(replicas)}: JetStream refuses that many replicas (${refusal.message})`,
        { cause: error },
      );
    default:
      return undefined;
  }
}

function notClustered(
  replicas: number,
  flag: string,
  cause: unknown,
): FlotillaError {
  return new FlotillaError(
    "failed_precondition",
    `${flag} ${String(replicas)}: the NATS server is not clustered (JetStream replicas > 1 need a NATS cluster of at least ${String(replicas)} servers); use ${flag} 1 with a single server`,
    compact({ cause }),
  );
}

/** The first JetStreamApiError along `error`'s chain of causes. */
function jetStreamApiError(error: unknown): JetStreamApiError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 10; depth++) {
    if (e instanceof JetStreamApiError) return e;
    e = e.cause;
  }
  return undefined;
}
