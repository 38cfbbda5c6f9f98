// Looking at hub replicas from outside (docs/high-availability.md), for the benchmarks that run
// two of them: who holds a unit's lease (read from the `<prefix>-leases` KV bucket, as the
// replicas themselves read it), how many agents one replica holds a session for (its /healthz,
// counted on request), and the nats-server's message counters (/varz).
// @ts-check
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect as connectNats } from "@nats-io/transport-node";
import { leaseKey, leasesBucketName } from "@flotilla/hub/testing";

/** The lease bench replicas run with: the hub's default, stated so the output can say it. */
export const LEASE_TTL = "10s";
export const LEASE_TTL_SECONDS = 10;

/**
 * Who holds a unit's lease, its epoch (the bucket revision it was taken at), and when the
 * nats-server stored its last write (ms since the epoch).
 * @typedef {{ holder: string, epoch: number, writtenAtMs: number }} LeaseHolder
 */

/**
 * Opens the lease bucket of the hub replicas on `natsUrl` (state prefix `flotilla`).
 * @param {string} natsUrl
 * @returns {Promise<{
 *   holder: (unit: string) => Promise<LeaseHolder | undefined>,
 *   close: () => Promise<void>,
 * }>}
 */
export async function openLeases(natsUrl) {
  const nc = await connectNats({ servers: natsUrl });
  try {
    const kv = await new Kvm(jetstream(nc)).open(leasesBucketName("flotilla"));
    return {
      async holder(unit) {
        const entry = await kv.get(leaseKey(unit));
        if (entry === null || entry.operation !== "PUT") return undefined;
        const value = /** @type {{ holder?: unknown, epoch?: unknown }} */ (
          entry.json()
        );
        if (typeof value.holder !== "string") return undefined;
        // A lease is written with epoch 0 when taken: its epoch is then the entry's revision.
        const epoch = Number(value.epoch);
        return {
          holder: value.holder,
          epoch: epoch === 0 ? entry.revision : epoch,
          writtenAtMs: entry.created.getTime(),
        };
      },
      close: () => nc.close(),
    };
  } catch (error) {
    await nc.close();
    throw error;
  }
}

/**
 * Agents with a session on the replica serving `/healthz` at `httpAddress` (`HOST:PORT`), as its
 * health check counts them on the request (the /metrics gauge is refreshed every 2 s only).
 * @param {string} httpAddress
 * @returns {Promise<number>}
 */
export async function agentsOn(httpAddress) {
  const response = await fetch(`http://${httpAddress}/healthz`, {
    signal: AbortSignal.timeout(10_000),
  });
  const body = /** @type {{ checks?: Record<string, string> }} */ (
    await response.json()
  );
  const match = /^(\d+) connected/.exec(body.checks?.agents ?? "");
  if (match === null)
    throw new Error(
      `http://${httpAddress}/healthz: no agent count in ${JSON.stringify(body)}`,
    );
  return Number(match[1]);
}

/**
 * The nats-server's message counters from its monitoring port (`/varz`): messages published to it
 * (`in`) and delivered by it (`out`), every client and subject together.
 * @param {string} monitorUrl
 * @returns {Promise<{ in: number, out: number }>}
 */
export async function natsMessageCounters(monitorUrl) {
  const response = await fetch(`${monitorUrl}/varz`, {
    signal: AbortSignal.timeout(10_000),
  });
  const varz = /** @type {{ in_msgs: number, out_msgs: number }} */ (
    await response.json()
  );
  return { in: varz.in_msgs, out: varz.out_msgs };
}
