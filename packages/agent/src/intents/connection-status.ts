/**
 * One status listener per NATS connection, shared by all its watchers: a thousand watchers on one
 * connection should not mean a thousand status iterators.
 */
import { createConnectionWatch, type ConnectionWatch } from "@flotilla/node";
import type { NatsConnection, Status } from "@nats-io/transport-node";

interface SharedStatus {
  readonly watch: ConnectionWatch;
  readonly listeners: Set<(status: Status) => void>;
}
const shared = new WeakMap<NatsConnection, SharedStatus>();

/** Calls `listener` with every status of `nc` until {@link unwatchConnection}. */
export function watchConnection(
  nc: NatsConnection,
  listener: (status: Status) => void,
): void {
  let entry = shared.get(nc);
  if (entry === undefined) {
    const listeners = new Set<(status: Status) => void>();
    const created: SharedStatus = {
      watch: createConnectionWatch(nc, (status) => {
        for (const l of listeners) l(status);
      }),
      listeners,
    };
    entry = created;
    shared.set(nc, created);
    created.watch.start();
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
    entry.watch.stop();
    shared.delete(nc);
  }
}

/** Whether `nc` is open and, as far as its watched statuses tell, connected. */
export function isConnected(nc: NatsConnection): boolean {
  return shared.get(nc)?.watch.up ?? !nc.isClosed();
}
