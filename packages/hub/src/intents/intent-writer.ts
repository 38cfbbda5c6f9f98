/**
 * The one place the hub changes a cluster's intent. Staged runs (upgrades) and bundle rollouts
 * both write into the same per-cluster intent, so changes to one cluster are applied one after
 * another: read the stored intent, apply the change (core's `changeIntent`: an unchanged intent
 * keeps its generation), publish. The stored intent in NATS is the source of truth, so a hub that
 * restarts recomputes the same intents and its republishing is a no-op ("persist before publish").
 *
 * When several hubs share the work, a change carries the fence of the unit it is made for
 * (intent-fences.ts). A refused one means this hub no longer owns that unit: the writer forgets
 * the cluster's cached intent and rethrows, and the caller tells it by `isFenced(error)`.
 */
import {
  changeIntent,
  emptyIntent,
  type ClusterIntent,
  type IntentChange,
} from "@flotilla/core";
import {
  IntentRefusedError,
  type IntentPublisher,
  type IntentWriteOptions,
  type PublishedIntent,
} from "./intent-publisher.js";

/** Options of the IntentWriter's changes: the writer's fence, if it writes for a unit. */
export type IntentChangeOptions = Pick<IntentWriteOptions, "fence">;

/** A cluster's current intent as the hub last stored or read it. */
export interface CurrentIntent {
  readonly intent: ClusterIntent;
  /** Empty when nothing is stored for the cluster. */
  readonly hash: string;
}

export interface IntentWriter {
  /**
   * Applies `changes` in order to the cluster's intent and publishes the result (one generation),
   * fenced by `options.fence` if given. Rejects with a `FencedError` when a newer owner of the
   * fence's unit has written the intent.
   */
  change(
    cluster: string,
    changes: readonly IntentChange[],
    options?: IntentChangeOptions,
  ): Promise<CurrentIntent>;
  /** The cluster's current intent (read from NATS once, then cached). */
  current(cluster: string): Promise<CurrentIntent>;
  /**
   * The cluster's intent read from NATS again: another hub replica may have written it since
   * this one cached it (docs/high-availability.md).
   */
  refresh(cluster: string): Promise<CurrentIntent>;
  /**
   * What `current` would resolve with, when that is known now: cached, and no change of the
   * cluster is in progress. Lets a pass over 10,000 clusters skip 10,000 awaits.
   */
  peek(cluster: string): CurrentIntent | undefined;
  /**
   * Keeps the cached intents in step with what other hub replicas store, until `signal` aborts
   * (a no-op on a publisher that cannot watch).
   */
  follow(signal: AbortSignal): Promise<void>;
  /** Removes the cluster's intent (the cluster left the fleet), fenced by `options.fence` if given. */
  remove(cluster: string, options?: IntentChangeOptions): Promise<void>;
}

/** What became of a publish, for metrics. */
export type PublishOutcome = "written" | "unchanged" | "failed";

/** An IntentWriter over `publisher`; `onPublish` observes every publish attempt. */
export function createIntentWriter(
  publisher: IntentPublisher,
  onPublish?: (outcome: PublishOutcome, durationMs: number) => void,
): IntentWriter {
  const cache = new Map<string, CurrentIntent>();
  const queues = new Map<string, Promise<unknown>>();

  // Runs `task` after every earlier task for the same cluster; failures do not block later ones.
  const serial = <T>(cluster: string, task: () => Promise<T>): Promise<T> => {
    const previous = queues.get(cluster) ?? Promise.resolve();
    const run = previous.then(task, task);
    const settled = run.catch(() => undefined);
    queues.set(cluster, settled);
    void settled.then(() => {
      if (queues.get(cluster) === settled) queues.delete(cluster);
    });
    return run;
  };

  const load = async (cluster: string): Promise<CurrentIntent> => {
    const cached = cache.get(cluster);
    if (cached !== undefined) return cached;
    const stored: PublishedIntent | undefined = await publisher.read(cluster);
    const current: CurrentIntent =
      stored === undefined
        ? { intent: emptyIntent(cluster), hash: "" }
        : { intent: stored.intent, hash: stored.hash };
    cache.set(cluster, current);
    return current;
  };

  return {
    change(cluster, changes, options = {}) {
      const attempt = async (): Promise<CurrentIntent> => {
        const before = await load(cluster);
        let intent = before.intent;
        for (const change of changes) intent = changeIntent(intent, change);
        // changeIntent bumps the generation once per effective change; publish one generation.
        if (intent === before.intent) return before;
        const next: ClusterIntent = {
          ...intent,
          generation: before.intent.generation + 1,
        };
        const started = performance.now();
        try {
          const published = await publisher.publish(next, {
            fence: options.fence,
          });
          onPublish?.(
            published.written ? "written" : "unchanged",
            performance.now() - started,
          );
          const current = { intent: published.intent, hash: published.hash };
          cache.set(cluster, current);
          return current;
        } catch (error) {
          onPublish?.("failed", performance.now() - started);
          // Whatever the refusal (a fence, a stale generation), the next change reads afresh.
          cache.delete(cluster);
          throw error;
        }
      };
      return serial(cluster, async () => {
        try {
          return await attempt();
        } catch (error) {
          // Another hub replica wrote the intent since this one cached it (it took the run
          // over from there): apply the change once more on what is stored now.
          if (!(error instanceof IntentRefusedError)) throw error;
          return attempt();
        }
      });
    },
    current(cluster) {
      return serial(cluster, () => load(cluster));
    },
    async follow(signal) {
      await publisher.watch?.(signal, (cluster, stored) => {
        // A change of this cluster in progress here reads and writes for itself.
        if (queues.has(cluster)) return;
        const cached = cache.get(cluster);
        if (cached === undefined) return;
        if (stored === undefined) cache.delete(cluster);
        else if (stored.intent.generation > cached.intent.generation) {
          cache.set(cluster, { intent: stored.intent, hash: stored.hash });
        }
      });
    },
    refresh(cluster) {
      return serial(cluster, () => {
        cache.delete(cluster);
        return load(cluster);
      });
    },
    peek(cluster) {
      return queues.has(cluster) ? undefined : cache.get(cluster);
    },
    remove(cluster, options = {}) {
      return serial(cluster, async () => {
        try {
          await publisher.remove(cluster, { fence: options.fence });
        } finally {
          cache.delete(cluster);
        }
      });
    },
  };
}
