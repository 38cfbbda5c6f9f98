/**
 * What the Kubernetes upgrade drivers (system-upgrade-controller, Cluster API) share: checking a
 * request's target version against the cluster's (docs/semantics.md#upgrades: no downgrades, one
 * minor at a time), reading conditions and versions from objects, the window check before anything
 * is touched (docs/semantics.md#maintenance-windows), one upgrade at a time per driver, and the
 * follow loop that polls the cluster until the upgrade is done, failed or timed out, reporting
 * progress that never goes down.
 */
import {
  compareKubernetesVersions,
  formatKubernetesVersion,
  minorDistance,
  parseKubernetesVersion,
  type UpgradeType,
} from "@flotilla/core";
import type { Clock } from "@flotilla/node";
import { checkWindow, upgradeScope } from "./check-window.js";
import type {
  StartUpgradeOptions,
  UpgradeOutcome,
  UpgradeRequest,
} from "./driver.js";
import type { MaintenanceSource } from "./maintenance-source.js";

/** A Kubernetes object as JSON. */
export type JsonRecord = Record<string, unknown>;

/** Timing of the follow loop. */
export interface FollowOptions {
  /** How often the cluster is read while an upgrade runs; default 5 s. */
  readonly pollIntervalMs?: number;
  /** How long an upgrade may take before it ends Failed; default 2 h. */
  readonly timeoutMs?: number;
}

/** The object as a record, or an empty one. */
export function record(value: unknown): JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JsonRecord)
    : {};
}

/** `object.a.b.c` as a string, or undefined. */
export function stringAt(
  object: unknown,
  ...path: readonly string[]
): string | undefined {
  let cursor: unknown = object;
  for (const key of path) cursor = record(cursor)[key];
  return typeof cursor === "string" ? cursor : undefined;
}

/** `object.a.b.c` as a number, or undefined. */
export function numberAt(
  object: unknown,
  ...path: readonly string[]
): number | undefined {
  let cursor: unknown = object;
  for (const key of path) cursor = record(cursor)[key];
  return typeof cursor === "number" ? cursor : undefined;
}

/** One entry of `status.conditions`. */
export interface Condition {
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

/** The `status.conditions` entry of `type`, or undefined. */
export function conditionOf(
  object: unknown,
  type: string,
): Condition | undefined {
  const conditions = record(record(object).status).conditions;
  if (!Array.isArray(conditions)) return undefined;
  const found = conditions.map(record).find((c) => c.type === type);
  if (found === undefined) return undefined;
  return {
    status: typeof found.status === "string" ? found.status : "Unknown",
    reason: typeof found.reason === "string" ? found.reason : "",
    message: typeof found.message === "string" ? found.message : "",
  };
}

/**
 * "1.31.2" from the spellings clusters report: "v1.31.2", "v1.31.2+k3s1", "v1.31.2-eks-abc".
 * Undefined when it is not a full version.
 */
export function normalizeVersion(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const core = /^v?([0-9]+\.[0-9]+\.[0-9]+)/.exec(text.trim())?.[1];
  if (core === undefined) return undefined;
  const parsed = parseKubernetesVersion(core, "full");
  return parsed.ok ? formatKubernetesVersion(parsed.value) : undefined;
}

/** A node's kubelet version, normalized. */
export function kubeletVersionOf(node: JsonRecord): string | undefined {
  return normalizeVersion(
    stringAt(node, "status", "nodeInfo", "kubeletVersion"),
  );
}

/**
 * The request's target Kubernetes version ("1.31.2"), or the Failed outcome: InvalidTarget when it
 * is missing or not a full version, VersionSkew for a downgrade or a skipped minor from `from`.
 */
export function targetVersion(
  request: UpgradeRequest,
  from: string | undefined,
  what: string,
): { readonly version: string } | { readonly failed: UpgradeOutcome } {
  const raw = request.target.kubernetesVersion;
  const parsed =
    raw === undefined ? undefined : parseKubernetesVersion(raw, "full");
  if (parsed === undefined || !parsed.ok)
    return {
      failed: {
        type: "Failed",
        reason: "InvalidTarget",
        message: `${what}: a ${request.type} upgrade needs a full target.kubernetesVersion (got ${JSON.stringify(raw)})`,
      },
    };
  const version = formatKubernetesVersion(parsed.value);
  const current =
    from === undefined ? undefined : parseKubernetesVersion(from, "full");
  if (current?.ok === true) {
    const skew = (message: string): { failed: UpgradeOutcome } => ({
      failed: { type: "Failed", reason: "VersionSkew", message },
    });
    if (compareKubernetesVersions(current.value, parsed.value) > 0)
      return skew(
        `${what}: ${String(from)} is newer than ${version}; Kubernetes does not downgrade`,
      );
    if (minorDistance(current.value, parsed.value) > 1)
      return skew(
        `${what}: ${String(from)} to ${version} skips a minor version; upgrade one minor at a time`,
      );
  }
  return { version };
}

/** The Unsupported outcome for a type a driver cannot perform. */
export function unsupported(
  type: UpgradeType,
  what: string,
  driver: string,
  supported: readonly UpgradeType[],
): UpgradeOutcome {
  return {
    type: "Failed",
    reason: "Unsupported",
    message: `${what}: ${type} upgrades are not supported by the ${driver} driver (supported: ${supported.join(", ")})`,
  };
}

/**
 * Pending when the owner's window for the request's scope is closed now
 * (docs/semantics.md#maintenance-windows).
 */
export function windowHold(
  windows: MaintenanceSource,
  type: UpgradeType,
  nowMs: number,
): UpgradeOutcome | undefined {
  const hold = checkWindow(
    windows.current().maintenance,
    upgradeScope(type),
    nowMs,
  );
  return hold === undefined ? undefined : { type: "Pending", ...hold };
}

/** One look at the cluster while following: done, failed, or how far along. */
export type Observation =
  | { readonly type: "Done"; readonly outcome: UpgradeOutcome }
  | {
      readonly type: "Progress";
      readonly done: number;
      readonly total: number;
      readonly message: string;
    };

/**
 * Calls `observe` now and every poll interval until it reports Done, the timeout passes (Failed,
 * UpgradeFailed, naming `lastMessage`) or the signal aborts (rejects with its reason). Progress is
 * reported only when it changes, and its percent never goes down.
 */
export async function follow(
  observe: (signal: AbortSignal) => Promise<Observation>,
  deps: {
    readonly clock: Clock;
    readonly signal: AbortSignal;
    readonly what: string;
  } & FollowOptions &
    Pick<StartUpgradeOptions, "onProgress">,
): Promise<UpgradeOutcome> {
  const { clock, signal, onProgress } = deps;
  const pollMs = deps.pollIntervalMs ?? 5_000;
  const timeoutMs = deps.timeoutMs ?? 2 * 60 * 60 * 1000;
  const deadline = clock.now() + timeoutMs;
  let percent = 0;
  let last = "";
  for (;;) {
    signal.throwIfAborted();
    const seen = await observe(signal);
    if (seen.type === "Done") return seen.outcome;
    const now =
      seen.total === 0 ? 0 : Math.floor((100 * seen.done) / seen.total);
    // 100 is for the terminal outcome only.
    percent = Math.max(percent, Math.min(99, now));
    const key = `${String(percent)} ${seen.message}`;
    if (key !== last) {
      last = key;
      onProgress?.({ percent, message: seen.message });
    }
    if (clock.now() >= deadline)
      return {
        type: "Failed",
        reason: "UpgradeFailed",
        message: `${deps.what}: timed out after ${timeoutMs >= 1000 ? `${String(Math.round(timeoutMs / 1000))}s` : `${String(timeoutMs)}ms`} (${seen.message})`,
      };
    await clock.sleep(Math.min(pollMs, Math.max(1, deadline - clock.now())), {
      signal,
    });
  }
}

/** Runs one upgrade at a time: a second run while one is in flight ends Failed, Busy. */
export function createRunGuard(): <T extends UpgradeOutcome>(
  run: string,
  what: string,
  body: () => Promise<T>,
) => Promise<UpgradeOutcome> {
  let inFlight: string | undefined;
  return async (run, what, body) => {
    if (inFlight !== undefined)
      return {
        type: "Failed",
        reason: "Busy",
        message: `${what}: run "${inFlight}" is upgrading it`,
      };
    inFlight = run;
    try {
      return await body();
    } finally {
      inFlight = undefined;
    }
  };
}
