/**
 * The audit record of a hub replica taking an update run over from another replica (its lease
 * expired, or the other replica handed it over): the actor is `hub/<replica id>`, the target the
 * run, and the message names the new lease epoch and the replica that held the run before
 * (docs/high-availability.md#takeovers-in-the-audit-log).
 */
import type { AuditRecord } from "./audit-log.js";

/** The method of takeover records (not an RPC: the hub acts on its own). */
export const TAKEOVER_METHOD = "/flotilla.hub/TakeOverUpdateRun";

/** What a takeover record says. */
export interface RunTakeover {
  readonly atMs: number;
  /** The replica that took the run. */
  readonly replica: string;
  readonly run: string;
  /** The epoch of its lease on the run. */
  readonly epoch: number;
  /** The replica that held the run before. */
  readonly from: string;
}

/** The actor of records a hub replica writes on its own. */
export function hubActor(replica: string): string {
  return `hub/${replica}`.slice(0, 256);
}

/**
 * A record of something a hub replica did to update run `run` on its own (took it over, made or
 * started it, measured its gate): actor `hub/<replica>`, no role, `method` a `/flotilla.hub/…`
 * name (not an RPC), texts cut to the audit log's bounds.
 */
export function hubRunRecord(record: {
  readonly atMs: number;
  readonly replica: string;
  readonly method: string;
  readonly run: string;
  readonly reason: string;
  readonly message: string;
}): AuditRecord {
  return {
    atMs: record.atMs,
    actor: hubActor(record.replica),
    role: "",
    method: record.method,
    targetKind: "UpdateRun",
    targetName: record.run.slice(0, 256),
    reason: record.reason.slice(0, 1024),
    outcome: "Succeeded",
    message: record.message.slice(0, 1024),
  };
}

export function takeoverRecord(takeover: RunTakeover): AuditRecord {
  return hubRunRecord({
    atMs: takeover.atMs,
    replica: takeover.replica,
    method: TAKEOVER_METHOD,
    run: takeover.run,
    reason: "",
    message: `replica ${takeover.replica} took the run over from replica ${takeover.from} with lease epoch ${String(takeover.epoch)}`,
  });
}
