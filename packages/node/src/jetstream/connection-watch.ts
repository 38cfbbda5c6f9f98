/**
 * Whether a NATS connection is up, as an adapter on it needs to know: while it is down every call
 * should fail at once with `unavailable` (a request sent then would be lost and time out), and
 * succeed again once nats.js has reconnected.
 */
import { FlotillaError } from "@flotilla/core";
import type {
  NatsConnection,
  QueuedIterator,
  Status,
} from "@nats-io/transport-node";

/** Follows one connection's status events between `start()` and `stop()`. */
export interface ConnectionWatch {
  /** Starts (or restarts) following; the connection counts as up until a disconnect is seen. */
  start(): void;
  /** Stops following at once. */
  stop(): void;
  /** False after a disconnect until the reconnect, and once the connection is closed. */
  readonly up: boolean;
  /** Throws `unavailable` ("`what`: the NATS connection is down") unless {@link up}. */
  check(what: string): void;
}

/**
 * Creates a {@link ConnectionWatch} on `nc`, which it uses but does not own or close. `onStatus`
 * hears every status event while started, after {@link ConnectionWatch.up} has taken it in.
 */
export function createConnectionWatch(
  nc: NatsConnection,
  onStatus?: (status: Status) => void,
): ConnectionWatch {
  let connected = true;
  let statuses: QueuedIterator<Status> | undefined;
  const stop = (): void => {
    statuses?.stop();
    statuses = undefined;
  };
  return {
    start() {
      stop();
      connected = true;
      // nats.js returns a QueuedIterator; keeping it lets stop() end the loop at once.
      const following = nc.status() as QueuedIterator<Status>;
      statuses = following;
      void (async () => {
        for await (const status of following) {
          if (status.type === "disconnect") connected = false;
          else if (status.type === "reconnect") connected = true;
          onStatus?.(status);
        }
      })().catch(() => undefined);
    },
    stop,
    get up() {
      return connected && !nc.isClosed();
    },
    check(what) {
      if (!this.up) {
        throw new FlotillaError(
          "unavailable",
          `${what}: the NATS connection is down`,
        );
      }
    },
  };
}
