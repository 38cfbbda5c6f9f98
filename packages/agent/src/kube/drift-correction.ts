/**
 * Restoring one drifted or missing object (docs/agent.md#drift-correction): a server-side apply
 * of what the agent applied. Without `force`, fields that changed by an update (`kubectl edit`,
 * `scale`, a merge patch: the updater became their owner) are taken back, but fields another
 * server-side applier declared are not: that is a conflict, reported. With `force`, those are taken
 * too, and an object whose re-apply is refused because it changes an immutable field is deleted
 * and created again.
 *
 * {@link CorrectionBackoff} keeps a correction from looping hot when something keeps undoing it
 * (an admission controller, another controller): each object's corrections are spaced by an
 * exponential back-off with a cap, forgiven once the object stayed put for twice the cap.
 */
import { createBackoff, type Backoff } from "@flotilla/node";
import type { DriftCorrectionMode } from "./gateway.js";
import {
  KubeCallError,
  type KubeClient,
  type KubeObject,
} from "./kube-client.js";
import type { ResourceRef } from "./manifest.js";

/** Managers named in an apply conflict's message (`conflict with "kubectl-edit"…`). */
export function conflictManagers(message: string): string[] {
  return [
    ...new Set(
      [...message.matchAll(/conflict with "([^"]+)"/g)].map((m) => m[1] ?? ""),
    ),
  ].filter((m) => m !== "");
}

/** The operation ("Apply" or "Update") of each manager in a live object's managedFields. */
function operations(live: KubeObject | undefined): Map<string, string> {
  const metadata = live?.metadata as { managedFields?: unknown } | undefined;
  const entries = Array.isArray(metadata?.managedFields)
    ? (metadata.managedFields as { manager?: unknown; operation?: unknown }[])
    : [];
  const out = new Map<string, string>();
  for (const e of entries)
    if (typeof e.manager === "string" && typeof e.operation === "string")
      if (out.get(e.manager) !== "Apply") out.set(e.manager, e.operation);
  return out;
}

function isImmutableRefusal(error: unknown): boolean {
  return (
    error instanceof KubeCallError &&
    error.status === 422 &&
    /immutable/i.test(error.message)
  );
}

/** Restores `object` (at `ref`) as the mode allows; resolves with the live object. */
export async function restoreObject(
  client: KubeClient,
  ref: ResourceRef,
  object: KubeObject,
  mode: DriftCorrectionMode,
  signal: AbortSignal,
): Promise<KubeObject> {
  try {
    return await client.apply(object, { force: mode.force, signal });
  } catch (error) {
    if (!(error instanceof KubeCallError)) throw error;
    if (error.status === 409 && !mode.force) {
      const managers = conflictManagers(error.message);
      const ops = operations(await client.get(ref, { signal }));
      const appliers = managers.filter((m) => ops.get(m) !== "Update");
      if (managers.length === 0 || appliers.length > 0)
        throw new KubeCallError(
          409,
          "Conflict",
          `${error.message} (fields another server-side applier owns; correctDrift.force takes them)`,
        );
      // Only updates changed them: taking their fields back is what correcting drift means.
      return await client.apply(object, { force: true, signal });
    }
    if (mode.force && isImmutableRefusal(error)) {
      await client.remove(ref, { signal });
      return await client.apply(object, { force: true, signal });
    }
    throw error;
  }
}

/** Options of {@link createCorrectionBackoff}. */
export interface CorrectionBackoffOptions {
  /** Pause after the first correction of an object; default 1000 ms. */
  readonly initialMs?: number;
  /** Longest pause; default 300000 ms. */
  readonly maxMs?: number;
  readonly random?: () => number;
}

/** When an object's next correction may run, per object key. */
export interface CorrectionBackoff {
  /** Milliseconds until `key` may be corrected at `nowMs` (0: now). */
  waitMs(key: string, nowMs: number): number;
  /** Records a correction of `key` at `nowMs`; returns the attempts so far and the next pause. */
  record(
    key: string,
    nowMs: number,
  ): { readonly attempts: number; readonly pauseMs: number };
  /** Corrections of `key` since it was last forgiven. */
  attempts(key: string): number;
}

/** Creates the back-off of one bundle's corrections; see the module comment. */
export function createCorrectionBackoff(
  options: CorrectionBackoffOptions = {},
): CorrectionBackoff {
  const initialMs = options.initialMs ?? 1_000;
  const maxMs = options.maxMs ?? 300_000;
  const states = new Map<
    string,
    { backoff: Backoff; lastMs: number; pauseMs: number }
  >();
  const live = (key: string, nowMs: number) => {
    const s = states.get(key);
    // Quiet for twice the cap since the last correction: the next drift starts afresh.
    if (s !== undefined && nowMs - s.lastMs > 2 * maxMs) {
      states.delete(key);
      return undefined;
    }
    return s;
  };
  return {
    waitMs(key, nowMs) {
      const s = live(key, nowMs);
      return s === undefined ? 0 : Math.max(0, s.lastMs + s.pauseMs - nowMs);
    },
    record(key, nowMs) {
      const s = live(key, nowMs) ?? {
        backoff: createBackoff({
          initialMs,
          maxMs,
          ...(options.random === undefined ? {} : { random: options.random }),
        }),
        lastMs: nowMs,
        pauseMs: 0,
      };
      s.lastMs = nowMs;
      s.pauseMs = s.backoff.next();
      states.set(key, s);
      return { attempts: s.backoff.attempts, pauseMs: s.pauseMs };
    },
    attempts: (key) => states.get(key)?.backoff.attempts ?? 0,
  };
}
