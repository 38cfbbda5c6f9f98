/**
 * Follows the live state of one applied bundle revision through watches (one per type and
 * namespace, selecting `flotilla.dev/bundle=<bundle>`), and judges each object: Missing (deleted
 * outside flotilla), Modified (an applied field changed, see drift.ts), NotReady or Failed (see
 * readiness.ts), or Ready. Watches rather than polling: readiness and drift are seen as soon as
 * they happen with one long request per type, instead of a GET per object per interval. A watch
 * that ends (server timeout, network) is restarted after `retryMs`, and the objects it covers are
 * re-read, so deletions missed while it was down are noticed.
 */
import type { Logger } from "pino";
import type { Clock } from "@flotilla/node";
import { describeDrift, driftOf } from "./drift.js";
import type { ResourceStatus } from "./gateway.js";
import { BUNDLE_LABEL } from "./inventory.js";
import type { KubeClient, KubeObject, WatchTarget } from "./kube-client.js";
import { resourceKey, type ResourceRef } from "./manifest.js";
import { readinessOf } from "./readiness.js";

/** One applied object: where it is, what was sent, and what the server answered. */
export interface AppliedObject {
  readonly ref: ResourceRef;
  readonly applied: KubeObject;
  readonly live: KubeObject;
}

/** Dependencies of {@link trackBundle}. */
export interface TrackBundleDeps {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** A running tracker. */
export interface BundleTracker {
  /** Every object's judgement, in bundle order (Ready ones included). */
  judge(): ResourceStatus[];
  /** Records what the server answered to a re-apply. */
  update(object: KubeObject): void;
  stop(): void;
}

function refOf(object: KubeObject): ResourceRef {
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  return {
    apiVersion: String(object.apiVersion),
    kind: String(object.kind),
    namespace: typeof metadata.namespace === "string" ? metadata.namespace : "",
    name: String(metadata.name),
  };
}

/** Starts watching a bundle's objects; `onChange` runs after every change of a tracked object. */
export function trackBundle(
  deps: TrackBundleDeps,
  bundle: string,
  objects: readonly AppliedObject[],
  options: { retryMs: number; onChange: () => void },
): BundleTracker {
  const { client, clock, logger } = deps;
  const live = new Map<string, KubeObject | undefined>();
  const tracked = new Map(objects.map((o) => [resourceKey(o.ref), o]));
  for (const o of objects) live.set(resourceKey(o.ref), o.live);
  const lifetime = new AbortController();
  const stops: (() => void)[] = [];

  const record = (type: string, object: KubeObject): void => {
    // Watch objects carry kind and apiVersion; keep the applied apiVersion for the key.
    const key = resourceKey(refOf(object));
    if (!tracked.has(key)) return;
    live.set(key, type === "DELETED" ? undefined : object);
    options.onChange();
  };

  const targets = new Map<string, WatchTarget>();
  for (const { ref } of objects) {
    const target = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      namespace: ref.namespace,
      labelSelector: `${BUNDLE_LABEL}=${bundle}`,
    };
    targets.set(JSON.stringify(target), target);
  }

  const resync = async (target: WatchTarget): Promise<void> => {
    for (const o of objects) {
      if (
        o.ref.apiVersion !== target.apiVersion ||
        o.ref.kind !== target.kind ||
        o.ref.namespace !== target.namespace
      )
        continue;
      const found = await client.get(o.ref, { signal: lifetime.signal });
      live.set(resourceKey(o.ref), found);
    }
    options.onChange();
  };

  const start = async (
    target: WatchTarget,
    restarted: boolean,
  ): Promise<void> => {
    if (lifetime.signal.aborted) return;
    const stop = await client.watch(
      target,
      (event) => {
        if (!lifetime.signal.aborted) record(event.type, event.object);
      },
      (error: unknown) => {
        if (lifetime.signal.aborted) return;
        logger.debug(
          { err: error, kind: target.kind, namespace: target.namespace },
          "Watch ended; restarting",
        );
        clock.sleep(options.retryMs, { signal: lifetime.signal }).then(
          () => {
            restart(target);
          },
          () => undefined,
        );
      },
    );
    stops.push(stop);
    if (lifetime.signal.aborted) stop();
    else if (restarted) await resync(target);
  };

  const restart = (target: WatchTarget, restarted = true): void => {
    start(target, restarted).catch((error: unknown) => {
      if (lifetime.signal.aborted) return;
      logger.warn(
        { err: error, kind: target.kind, namespace: target.namespace },
        "Cannot watch objects; retrying",
      );
      clock.sleep(options.retryMs, { signal: lifetime.signal }).then(
        () => {
          restart(target);
        },
        () => undefined,
      );
    });
  };
  for (const target of targets.values()) restart(target, false);

  return {
    judge() {
      return objects.map(({ ref, applied }): ResourceStatus => {
        const base = {
          kind: ref.kind,
          namespace: ref.namespace,
          name: ref.name,
        };
        const current = live.get(resourceKey(ref));
        if (current === undefined)
          return {
            ...base,
            state: "Missing",
            message: "deleted outside flotilla",
          };
        const drift = driftOf(applied, current);
        if (drift.length > 0)
          return { ...base, state: "Modified", message: describeDrift(drift) };
        const readiness = readinessOf(current);
        return { ...base, state: readiness.state, message: readiness.message };
      });
    },
    update(object) {
      const key = resourceKey(refOf(object));
      if (tracked.has(key)) live.set(key, object);
    },
    stop() {
      lifetime.abort();
      for (const stop of stops) stop();
    },
  };
}
