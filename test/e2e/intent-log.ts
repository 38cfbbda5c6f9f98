/**
 * Records every intent the hub stores, as agents hear it: one core subscription to the intents'
 * republished subject (`<prefix>.intents.>`, see `@flotilla/protocol` intents.ts), each message
 * decoded with `parseIntentDocument`. Tests use it to check that one (cluster, generation) never
 * carries two payloads, whatever crashes happen in between.
 *
 * The repository root has no NATS client of its own; the hub's (`@nats-io/transport-node`, a
 * dependency of packages/hub) is loaded from there at run time and typed by the few members used.
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import {
  DEFAULT_INTENTS_PREFIX,
  parseIntentDocument,
} from "@flotilla/protocol";
import { intentsRepublish } from "@flotilla/protocol/testing";
import { REPO_ROOT } from "@flotilla/testkit";

/** The part of nats.js this file uses (the root cannot resolve the package's own types). */
interface NatsMsg {
  readonly subject: string;
  readonly data: Uint8Array;
}
interface NatsConnection {
  subscribe(
    subject: string,
    options: { callback: (error: Error | null, msg: NatsMsg) => void },
  ): { unsubscribe(): void };
  flush(): Promise<void>;
  close(): Promise<void>;
}
interface NatsModule {
  readonly connect: (options: {
    servers: string | string[];
    name: string;
    maxReconnectAttempts: number;
    reconnectTimeWait: number;
  }) => Promise<NatsConnection>;
}

/** `@nats-io/transport-node` as packages/hub resolves it. */
async function natsClient(): Promise<NatsModule> {
  const require = createRequire(`${REPO_ROOT}packages/hub/package.json`);
  const url = pathToFileURL(require.resolve("@nats-io/transport-node")).href;
  return (await import(url)) as NatsModule;
}

/** One stored intent write, in the order the subscription received it. */
export interface IntentRecord {
  readonly cluster: string;
  readonly generation: number;
  readonly hash: string;
  /** The run of the intent's upgrade, if any. */
  readonly upgradeRun?: string;
  /** Local receive time (ms), to tell writes before and after an event apart. */
  readonly atMs: number;
}

/** A (cluster, generation) seen with more than one hash. */
export interface IntentConflict {
  readonly cluster: string;
  readonly generation: number;
  readonly hashes: readonly string[];
}

export interface IntentLog {
  /** Every write received so far. */
  readonly records: readonly IntentRecord[];
  /** Messages that did not decode as intent documents (never expected). */
  readonly invalid: readonly string[];
  /** Every (cluster, generation) received with two or more different hashes. */
  conflicts(): IntentConflict[];
  /** Writes for `cluster`, in order. */
  of(cluster: string): IntentRecord[];
  close(): Promise<void>;
}

/**
 * Subscribes to every cluster's intent subject on `natsUrl` (one URL, or several of one NATS
 * cluster); reconnects across server restarts.
 */
export async function watchIntents(
  natsUrl: string | readonly string[],
  prefix: string = DEFAULT_INTENTS_PREFIX,
): Promise<IntentLog> {
  const { connect } = await natsClient();
  const nc = await connect({
    servers: typeof natsUrl === "string" ? natsUrl : [...natsUrl],
    name: "e2e-intent-log",
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
  const records: IntentRecord[] = [];
  const invalid: string[] = [];
  const { dest } = intentsRepublish(prefix);
  const base = dest.slice(0, -1); // "<prefix>.intents."
  const sub = nc.subscribe(dest, {
    callback: (error, msg) => {
      if (error !== null) {
        invalid.push(`subscription error: ${error.message}`);
        return;
      }
      const cluster = msg.subject.slice(base.length);
      // Deletes (a cluster left the fleet) are republished with an empty body.
      if (msg.data.byteLength === 0) return;
      const parsed = parseIntentDocument(msg.data, cluster);
      if (!parsed.ok) {
        invalid.push(`${msg.subject}: ${JSON.stringify(parsed.problems)}`);
        return;
      }
      const { intent, hash } = parsed.value;
      records.push({
        cluster,
        generation: intent.generation,
        hash,
        ...(intent.upgrade === undefined
          ? {}
          : { upgradeRun: intent.upgrade.run }),
        atMs: Date.now(),
      });
    },
  });
  // The subscription is registered with the server once a round trip has completed.
  await nc.flush();
  return {
    records,
    invalid,
    conflicts() {
      const seen = new Map<string, Set<string>>();
      for (const r of records) {
        const key = `${r.cluster}\u0000${String(r.generation)}`;
        const hashes = seen.get(key) ?? new Set<string>();
        hashes.add(r.hash);
        seen.set(key, hashes);
      }
      return [...seen]
        .filter(([, hashes]) => hashes.size > 1)
        .map(([key, hashes]) => {
          const [cluster = "", generation = "0"] = key.split("\u0000");
          return {
            cluster,
            generation: Number(generation),
            hashes: [...hashes],
          };
        });
    },
    of(cluster) {
      return records.filter((r) => r.cluster === cluster);
    },
    async close() {
      sub.unsubscribe();
      await nc.close();
    },
  };
}
