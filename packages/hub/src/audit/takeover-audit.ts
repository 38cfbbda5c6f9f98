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

export function takeoverRecord(takeover: RunTakeover): AuditRecord {
  return {
    atMs: takeover.atMs,
    actor: hubActor(takeover.replica),
    role: "",
    method: TAKEOVER_METHOD,
    targetKind: "UpdateRun",
    targetName: takeover.run.slice(0, 256),
    reason: "",
    outcome: "Succeeded",
    message:
      `replica ${takeover.replica} took the run over from replica ${takeover.from} with lease epoch ${String(takeover.epoch)}`.slice(
        0,
        1024,
      ),
  };
}
