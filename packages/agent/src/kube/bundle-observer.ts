/**
 * Turning a tracked revision's object judgements (bundle-tracker.ts) into bundle statuses:
 * NotReady while any object is NotReady or Failed, Modified when the rest are Ready but some
 * drifted or went missing, Ready otherwise; a status is published only when it changes. With
 * `correctDrift`, drifted and missing objects are re-applied at once (forced: whoever edited them
 * became the owner of the fields they changed). A correction that fails is reported in the
 * status message and retried on the next change the watch reports, never in a tight loop.
 */
import type { Logger } from "pino";
import { describeRef } from "./bundle-apply.js";
import type { AppliedObject, BundleTracker } from "./bundle-tracker.js";
import type { BundlePhase, BundleStatus, ResourceStatus } from "./gateway.js";
import type { KubeClient } from "./kube-client.js";
import { capResources } from "./manifest.js";
import { compact } from "@flotilla/core";

/** A bundle status, capping per-resource reasons. */
export function bundleStatus(
  at: { bundle: string; revision: string; nowMs: number },
  phase: BundlePhase,
  resources: readonly ResourceStatus[],
  count: number,
  extra: { error?: string; message?: string } = {},
): BundleStatus {
  return {
    bundle: at.bundle,
    revision: at.revision,
    phase,
    ...capResources(resources),
    resourceCount: count,
    ...extra,
    observedAtMs: at.nowMs,
  };
}

/** What one observer follows and where it reports. */
export interface ObserverTarget {
  readonly bundle: string;
  readonly revision: string;
  readonly correctDrift: boolean;
  readonly objects: readonly AppliedObject[];
  readonly tracker: BundleTracker;
  /** The status published last. */
  current(): BundleStatus;
  publish(status: BundleStatus): void;
  /** False once a newer apply, a removal or a stop took over: nothing is published then. */
  active(): boolean;
}

/** Returns the function to call after every change (and once at the start). */
export function createBundleObserver(
  deps: {
    client: KubeClient;
    logger: Logger;
    now: () => number;
    signal: AbortSignal;
  },
  t: ObserverTarget,
): () => void {
  let correcting = false;
  let correctionError: string | undefined;

  const correct = (drifted: readonly ResourceStatus[]): void => {
    correcting = true;
    const keys = new Set(
      drifted.map((r) => `${r.kind} ${r.namespace}/${r.name}`),
    );
    const targets = t.objects.filter((o) =>
      keys.has(`${o.ref.kind} ${o.ref.namespace}/${o.ref.name}`),
    );
    deps.logger.info(
      { bundle: t.bundle, objects: targets.map((o) => describeRef(o.ref)) },
      "Correcting drift",
    );
    const run = async (): Promise<void> => {
      for (const o of targets) {
        const live = await deps.client.apply(o.applied, {
          force: true,
          signal: deps.signal,
        });
        t.tracker.update(live);
      }
    };
    run().then(
      () => {
        correcting = false;
        correctionError = undefined;
        observe();
      },
      (error: unknown) => {
        correcting = false;
        if (deps.signal.aborted) return;
        correctionError = `Cannot correct drift: ${error instanceof Error ? error.message : String(error)}`;
        deps.logger.warn(
          { err: error, bundle: t.bundle },
          "Cannot correct drift",
        );
        publishIfChanged(true);
      },
    );
  };

  const publishIfChanged = (force = false): ResourceStatus[] => {
    const judged = t.tracker.judge();
    const open = judged.filter((r) => r.state !== "Ready");
    const drifted = open.filter(
      (r) => r.state === "Modified" || r.state === "Missing",
    );
    const phase: BundlePhase = open.some(
      (r) => r.state === "NotReady" || r.state === "Failed",
    )
      ? "NotReady"
      : drifted.length > 0
        ? "Modified"
        : "Ready";
    const message = phase !== "Ready" ? correctionError : undefined;
    const next = bundleStatus(
      { bundle: t.bundle, revision: t.revision, nowMs: deps.now() },
      phase,
      open,
      judged.length,
      compact({ message }),
    );
    const previous = t.current();
    const same =
      previous.phase === next.phase &&
      previous.revision === next.revision &&
      previous.message === next.message &&
      JSON.stringify(previous.resources) === JSON.stringify(next.resources);
    if (force || !same) t.publish(next);
    return drifted;
  };

  function observe(): void {
    if (!t.active()) return;
    const drifted = publishIfChanged();
    if (t.correctDrift && drifted.length > 0 && !correcting) correct(drifted);
  }
  return observe;
}
