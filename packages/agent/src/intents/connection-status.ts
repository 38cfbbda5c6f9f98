/**
 * One status listener per NATS connection, shared by all its watchers: a thousand watchers on one
 * connection should not mean a thousand status iterators.
 */
import type {
  NatsConnection,
  QueuedIterator,
  Status,
} from "@nats-io/transport-node";

interface SharedStatus {
  readonly statuses: QueuedIterator<Status>;
  readonly listeners: Set<(status: Status) => void>;
  connected: boolean;
}
const shared = new WeakMap<NatsConnection, SharedStatus>();

/** Calls `listener` with every status of `nc` until {@link unwatchConnection}. */
export function watchConnection(
  nc: NatsConnection,
  listener: (status: Status) => void,
): void {
  let entry = shared.get(nc);
  if (entry === undefined) {
    const created: SharedStatus = {
      statuses: nc.status() as QueuedIterator<Status>,
      listeners: new Set(),
      connected: true,
    };
    entry = created;
    shared.set(nc, created);
    void (async () => {
      for await (const status of created.statuses) {
        if (status.type === "disconnect") created.connected = false;
        else if (status.type === "reconnect") created.connected = true;
        for (const l of created.listeners) l(status);
      }
    })().catch(() => undefined);
  }
  entry.listeners.add(listener);
}

/** Stops calling `listener`; the last listener of a connection stops its status iterator. */
export function unwatchConnection(
  nc: NatsConnection,
  listener: (status: Status) => void,
): void {
  const entry = shared.get(nc);
  if (entry === undefined) return;
  entry.listeners.delete(listener);
  if (entry.listeners.size === 0) {
    entry.statuses.stop();
    shared.delete(nc);
  }
}

/** Whether `nc` is open and, as far as its watched statuses tell, connected. */
export function isConnected(nc: NatsConnection): boolean {
  return !nc.isClosed() && (shared.get(nc)?.connected ?? true);
}
