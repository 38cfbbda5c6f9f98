/**
 * Turning a tracked revision's object judgements (bundle-tracker.ts) into bundle statuses:
 * NotReady while any object is NotReady or Failed, Modified when the rest are Ready but some
 * drifted or went missing, Ready otherwise; a status is published only when it changes. With
 * `correctDrift` (docs/agent.md#drift-correction), drifted and missing objects are restored
 * (drift-correction.ts): the first time at once, then spaced by a back-off per object, so an
 * object something keeps changing is not fought over in a tight loop. A correction that fails or
 * keeps coming back is reported in the status message, with its attempts and the next one.
 */
import type { Logger } from "pino";
import { describeRef } from "./bundle-apply.js";
import type { AppliedObject, BundleTracker } from "./bundle-tracker.js";
import type {
  BundlePhase,
  BundleStatus,
  DriftCorrectionMode,
  ResourceStatus,
} from "./gateway.js";
import type { KubeClient } from "./kube-client.js";
import { capResources } from "./manifest.js";
import { compact } from "@flotilla/core";
import type { Clock } from "@flotilla/node";
import {
  createCorrectionBackoff,
  restoreObject,
  type CorrectionBackoffOptions,
} from "./drift-correction.js";

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
  /** How drift is corrected now (it may change without a new apply); undefined: it is not. */
  correctDrift(): DriftCorrectionMode | undefined;
  readonly objects: readonly AppliedObject[];
  readonly tracker: BundleTracker;
  /** The status published last. */
  current(): BundleStatus;
  publish(status: BundleStatus): void;
  /** False once a newer apply, a removal or a stop took over: nothing is published then. */
  active(): boolean;
}

/** What the observers of one gateway share. */
export interface ObserverDeps {
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  readonly backoff?: CorrectionBackoffOptions;
  /** Called after every correction of one object. */
  readonly onCorrection?: (bundle: string, result: "ok" | "error") => void;
}

function seconds(ms: number): string {
  return `${String(Math.ceil(ms / 1000))}s`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Returns the function to call after every change (and once at the start). */
export function createBundleObserver(
  deps: ObserverDeps,
  t: ObserverTarget,
): () => void {
  const backoff = createCorrectionBackoff(deps.backoff);
  /** The message about corrections, per object key, while its drift stands. */
  const notes = new Map<string, string>();
  let correcting = false;
  let wakeAtMs: number | undefined;

  const keyOf = (r: {
    kind: string;
    namespace: string;
    name: string;
  }): string => `${r.kind} ${r.namespace}/${r.name}`;

  const wakeIn = (ms: number): void => {
    const at = deps.clock.now() + ms;
    if (wakeAtMs !== undefined && wakeAtMs <= at) return;
    wakeAtMs = at;
    deps.clock.sleep(ms, { signal: deps.signal }).then(
      () => {
        if (wakeAtMs === at) wakeAtMs = undefined;
        observe();
      },
      () => undefined,
    );
  };

  const correctOne = async (
    o: AppliedObject,
    mode: DriftCorrectionMode,
  ): Promise<void> => {
    const key = keyOf(o.ref);
    const what = describeRef(o.ref);
    const { attempts, pauseMs } = backoff.record(key, deps.clock.now());
    try {
      const live = await restoreObject(
        deps.client,
        o.ref,
        o.applied,
        mode,
        deps.signal,
      );
      deps.onCorrection?.(t.bundle, "ok");
      if (attempts > 1)
        notes.set(
          key,
          `Drift of ${what} came back after ${String(attempts - 1)} corrections; correcting at most every ${seconds(pauseMs)}`,
        );
      else notes.delete(key);
      t.tracker.update(live);
    } catch (error) {
      if (deps.signal.aborted) throw error;
      deps.onCorrection?.(t.bundle, "error");
      const attemptsText = `${String(attempts)} attempt${attempts === 1 ? "" : "s"}`;
      notes.set(
        key,
        `Cannot correct drift of ${what} (${attemptsText}, next in ${seconds(pauseMs)}): ${errorText(error)}`,
      );
      deps.logger.warn(
        { err: error, bundle: t.bundle, object: what, attempts },
        "Cannot correct drift",
      );
    }
    wakeIn(pauseMs);
  };

  const correct = (drifted: readonly ResourceStatus[]): void => {
    const mode = t.correctDrift();
    if (mode === undefined) return;
    const now = deps.clock.now();
    const due: AppliedObject[] = [];
    for (const r of drifted) {
      const key = keyOf(r);
      const o = t.objects.find((x) => keyOf(x.ref) === key);
      if (o === undefined) continue;
      const waitMs = backoff.waitMs(key, now);
      if (waitMs === 0) due.push(o);
      else wakeIn(waitMs);
    }
    if (due.length === 0) return;
    correcting = true;
    deps.logger.info(
      { bundle: t.bundle, objects: due.map((o) => describeRef(o.ref)) },
      "Correcting drift",
    );
    const run = async (): Promise<void> => {
      for (const o of due) await correctOne(o, mode);
    };
    run().then(
      () => {
        correcting = false;
        observe();
      },
      () => {
        correcting = false;
      },
    );
  };

  const publishIfChanged = (): ResourceStatus[] => {
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
    const standing = new Set(drifted.map(keyOf));
    for (const key of [...notes.keys()])
      if (!standing.has(key)) notes.delete(key);
    const message =
      phase !== "Ready" && notes.size > 0
        ? [...notes.values()].join("; ")
        : undefined;
    const next = bundleStatus(
      { bundle: t.bundle, revision: t.revision, nowMs: deps.clock.now() },
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
    if (!same) t.publish(next);
    return drifted;
  };

  function observe(): void {
    if (!t.active()) return;
    const drifted = publishIfChanged();
    if (drifted.length > 0 && !correcting) correct(drifted);
  }
  return observe;
}
