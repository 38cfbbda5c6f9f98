/**
 * The simulated cluster's {@link KubeGateway}: bundles live in memory, time to ready and failures
 * follow the cluster's config, and every wait runs on the injected clock. Drift is injected with
 * `drift()`, as an owner editing an object by hand would cause it.
 */
import { FlotillaError, formatProblem } from "@flotilla/core";
import type {
  AppliedBundle,
  ApplyBundleRequest,
  BundlePhase,
  BundleStatus,
  KubeGateway,
  ResourceStatus,
} from "../kube/gateway.js";
import {
  capResources,
  CLUSTER_SCOPED_KINDS,
  resourceKey,
  resourceRefs,
  type ResourceRef,
} from "../kube/manifest.js";
import type { Clock } from "@flotilla/node";
import type { SimulatedClusterConfig } from "./config.js";
import { sampleMs } from "./distribution.js";
import type { Random } from "./random.js";
import { createStatusListeners } from "../kube/status-listeners.js";
import { errorRatioOf } from "./error-ratio.js";

/** Identifies the object `drift()` changes; `namespace` "" or absent for cluster-scoped ones. */
export interface DriftTarget {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly message?: string;
}

/** The simulated gateway: the port plus the test and demo hook for drift. */
export interface SimulatedKubeGateway extends KubeGateway {
  /** Marks an applied object as changed by hand; false when the bundle holds no such object. */
  drift(bundle: string, target: DriftTarget): boolean;
  /**
   * The simulated error ratio of each applied bundle whose objects set one (error-ratio.ts), by
   * bundle name; a bundle removed, or whose applied revision sets none, is absent.
   */
  errorRatios(): ReadonlyMap<string, number>;
}

interface Held {
  status: BundleStatus;
  /** The revision whose objects are in the cluster (the inventory). */
  applied?: {
    readonly revision: string;
    readonly refs: readonly ResourceRef[];
    /** From the objects' error-ratio annotation (error-ratio.ts). */
    readonly errorRatio?: number;
  };
  correctDrift: boolean;
  ready: boolean;
  /**
   * Whether the reported status follows the applied revision's readiness. Off while a newer
   * revision is applying or after it failed, so the old revision's readiness cannot overwrite it.
   */
  tracking: boolean;
  readonly modified: Map<string, string>;
  applying?: AbortController;
  waiting?: AbortController;
}

/** Dependencies of {@link createSimulatedGateway}. */
export interface SimulatedGatewayDeps {
  readonly config: SimulatedClusterConfig;
  readonly clock: Clock;
  readonly random: Random;
  /** Aborts when the cluster stops; every wait ends with it. */
  readonly lifetime: AbortSignal;
  /** Throws when the cluster is not running. */
  readonly assertRunning: () => void;
}

/** Creates the in-memory gateway of one simulated cluster. */
export function createSimulatedGateway(
  deps: SimulatedGatewayDeps,
): SimulatedKubeGateway {
  const { config, clock, random, lifetime } = deps;
  const held = new Map<string, Held>();
  const listeners = createStatusListeners();
  const cluster = `cluster "${config.name}"`;

  const publish = (h: Held, status: BundleStatus): BundleStatus => {
    h.status = status;
    listeners.emit(status);
    return status;
  };

  const statusOf = (
    bundle: string,
    revision: string,
    phase: BundlePhase,
    resources: readonly ResourceStatus[],
    count: number,
    extra: { error?: string; message?: string } = {},
  ): BundleStatus => ({
    bundle,
    revision,
    phase,
    ...capResources(resources),
    resourceCount: count,
    ...extra,
    observedAtMs: clock.now(),
  });

  const neverReady = (bundle: string): boolean => {
    const n = config.failures.neverReady;
    return n === true || (Array.isArray(n) && n.includes(bundle));
  };

  /** Publishes the readiness of the applied revision: NotReady, Modified or Ready. */
  const observe = (bundle: string, h: Held): void => {
    if (h.applied === undefined || !h.tracking) return;
    const { revision, refs } = h.applied;
    const never = neverReady(bundle);
    const resources = refs.flatMap((r): ResourceStatus[] => {
      const drifted = h.modified.get(resourceKey(r));
      const base = { kind: r.kind, namespace: r.namespace, name: r.name };
      if (!h.ready) {
        const message = never
          ? "Simulated: configured never to become ready"
          : "Simulated: waiting to become ready";
        return [{ ...base, state: "NotReady", message }];
      }
      return drifted === undefined
        ? []
        : [{ ...base, state: "Modified", message: drifted }];
    });
    const phase = !h.ready
      ? "NotReady"
      : resources.length > 0
        ? "Modified"
        : "Ready";
    publish(h, statusOf(bundle, revision, phase, resources, refs.length));
  };

  const awaitReadiness = (bundle: string, h: Held): void => {
    h.waiting?.abort();
    const ms = sampleMs(config.timeToReady, random);
    h.ready = !neverReady(bundle) && ms === 0;
    observe(bundle, h);
    if (h.ready || neverReady(bundle)) return;
    const waiting = new AbortController();
    h.waiting = waiting;
    const signal = AbortSignal.any([waiting.signal, lifetime]);
    // Rejects only when aborted (superseded, removed, stopped): nothing left to report then.
    clock.sleep(ms, { signal }).then(
      () => {
        h.waiting = undefined;
        h.ready = true;
        observe(bundle, h);
      },
      () => undefined,
    );
  };

  const failureOf = (req: ApplyBundleRequest): string | undefined => {
    const f = config.failures;
    const draw = random(); // drawn on every apply so rates stay independent of the named rules
    if (f.bundles.includes(req.bundle))
      return "simulated failure (failures.bundles)";
    if (
      f.revisions.some(
        (r) => r.bundle === req.bundle && r.revision === req.revision,
      )
    )
      return "simulated failure (failures.revisions)";
    if (draw < f.applyRate)
      return `simulated failure (failures.applyRate ${String(f.applyRate)})`;
    return undefined;
  };

  return {
    async applyBundle(req, options = {}) {
      deps.assertRunning();
      options.signal?.throwIfAborted();
      const what = `Cannot apply bundle "${req.bundle}" revision "${req.revision}" to ${cluster}`;
      const placeholder = statusOf(req.bundle, req.revision, "Applying", [], 0);
      const existing = held.get(req.bundle);
      const h = existing ?? {
        status: placeholder,
        correctDrift: false,
        ready: false,
        tracking: false,
        modified: new Map<string, string>(),
      };
      held.set(req.bundle, h);
      const refs = resourceRefs(req.manifests, {
        namespace: req.namespace ?? "default",
        isClusterScoped: (_, kind) => CLUSTER_SCOPED_KINDS.has(kind),
      });
      const simulated = errorRatioOf(req.manifests);
      if (!refs.ok || "problem" in simulated) {
        h.tracking = false;
        const problems = refs.ok ? [] : refs.problems.map(formatProblem);
        if ("problem" in simulated) problems.push(simulated.problem);
        const error = `${what}: ${problems.join("; ")}`;
        return publish(
          h,
          statusOf(
            req.bundle,
            req.revision,
            "Failed",
            [],
            req.manifests.length,
            { error },
          ),
        );
      }
      const previous = h.status;
      // The superseded call turns this reason into its own error (see below).
      h.applying?.abort(`superseded by revision "${req.revision}"`);
      const applying = new AbortController();
      h.applying = applying;
      const signals = [
        applying.signal,
        lifetime,
        ...(options.signal ? [options.signal] : []),
      ];
      const signal = AbortSignal.any(signals);
      h.tracking = false;
      publish(
        h,
        statusOf(req.bundle, req.revision, "Applying", [], refs.value.length),
      );
      try {
        await clock.sleep(sampleMs(config.applyDuration, random), { signal });
        signal.throwIfAborted(); // a zero-length sleep does not look at the signal
      } catch (error) {
        // Nothing was applied: the applied revision's status stands again, unless superseded.
        if (h.applying === applying && held.get(req.bundle) === h) {
          h.applying = undefined;
          if (existing === undefined) held.delete(req.bundle);
          else if (h.applied === undefined) publish(h, previous);
          else {
            h.tracking = true;
            observe(req.bundle, h);
          }
        }
        if (signal.reason === applying.signal.reason)
          throw new FlotillaError(
            "failed_precondition",
            `${what}: ${String(applying.signal.reason)}`,
          );
        throw signal.reason ?? error;
      }
      h.applying = undefined;
      const failure = failureOf(req);
      if (failure !== undefined)
        return publish(
          h,
          statusOf(req.bundle, req.revision, "Failed", [], refs.value.length, {
            error: `${what}: ${failure}`,
          }),
        );
      h.applied = {
        revision: req.revision,
        refs: refs.value,
        ...(simulated.ratio === undefined
          ? {}
          : { errorRatio: simulated.ratio }),
      };
      h.tracking = true;
      h.correctDrift = req.correctDrift !== undefined;
      h.modified.clear();
      const applied = publish(
        h,
        statusOf(req.bundle, req.revision, "Applied", [], refs.value.length, {
          message: `Applied ${String(refs.value.length)} objects`,
        }),
      );
      awaitReadiness(req.bundle, h);
      return applied;
    },

    removeBundle(bundle, options = {}) {
      // The executor turns a throw into a rejection: callers only ever see a rejected promise.
      return new Promise((resolve) => {
        deps.assertRunning();
        options.signal?.throwIfAborted();
        const h = held.get(bundle);
        h?.applying?.abort("the bundle was removed");
        h?.waiting?.abort();
        held.delete(bundle);
        resolve();
      });
    },

    listBundles(options = {}) {
      return new Promise((resolve) => {
        options.signal?.throwIfAborted();
        const out: AppliedBundle[] = [];
        for (const [bundle, h] of held)
          if (h.applied !== undefined)
            out.push({ bundle, revision: h.applied.revision });
        resolve(out.sort((a, b) => (a.bundle < b.bundle ? -1 : 1)));
      });
    },

    setCorrectDrift(bundle, mode) {
      const h = held.get(bundle);
      if (h !== undefined) h.correctDrift = mode !== undefined;
    },

    status: (bundle) => held.get(bundle)?.status,

    watch: (listener, options) =>
      listeners.watch(
        listener,
        [...held.values()].map((h) => h.status),
        options,
      ),

    drift(bundle, target) {
      const h = held.get(bundle);
      const ref = h?.applied?.refs.find(
        (r) =>
          r.kind === target.kind &&
          r.name === target.name &&
          r.namespace === (target.namespace ?? r.namespace),
      );
      if (h === undefined || ref === undefined) return false;
      h.modified.set(
        resourceKey(ref),
        target.message ?? "Simulated: changed outside flotilla",
      );
      observe(bundle, h);
      if (h.correctDrift) {
        // correctDrift re-applies the held revision: the objects are as applied again.
        h.modified.clear();
        observe(bundle, h);
      }
      return true;
    },

    errorRatios() {
      const ratios = new Map<string, number>();
      for (const [bundle, h] of held)
        if (h.applied?.errorRatio !== undefined)
          ratios.set(bundle, h.applied.errorRatio);
      return ratios;
    },
  };
}
