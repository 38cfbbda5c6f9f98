/**
 * Audit records ↔ the wire messages of admin.proto (`AuditEvent`, `AuditFilter`). The decoder
 * treats the request as untrusted: every problem is reported with its field path and value, and
 * an unknown or UNSPECIFIED outcome is refused rather than ignored (it would widen the filter).
 */
import type { FlotillaErrorCode, Problem } from "@flotilla/core";
import { ERROR_CODE } from "../errors.js";
import type * as wire from "../generated/index.js";
import { MAX_WIRE_INTEGER } from "../limits.js";
import { enumCodec } from "./enum-codec.js";

/** How a recorded call ended. */
export type AuditOutcome = "Succeeded" | "Denied" | "Failed";

/** What the hub records about one state-changing admin call. */
export interface AuditRecord {
  readonly atMs: number;
  /** Caller identity: the authenticated admin, or in insecure development mode the `x-flotilla-actor` header or the peer. */
  readonly actor: string;
  readonly role: string;
  /** The full method name, e.g. `/flotilla.v1.AdminService/StartUpdateRun` (admin.proto). */
  readonly method: string;
  /** `Cluster`, `ClusterGroup`, `Bundle`, `Object`, `UpdateStrategy`, `UpdateRun`, `Gate`. */
  readonly targetKind: string;
  readonly targetName: string;
  /** The caller's reason (`--reason`), empty when none was given. */
  readonly reason: string;
  readonly outcome: AuditOutcome;
  /** Failed / Denied: the error's code. */
  readonly errorCode?: FlotillaErrorCode;
  readonly message: string;
}

/** A stored record: `sequence` increases by one per record, from 1. */
export interface AuditEvent extends AuditRecord {
  readonly sequence: number;
}

/** Which records a list or watch returns; every field set must match. */
export interface AuditFilter {
  /** Records with `atMs >= sinceMs` (inclusive). */
  readonly sinceMs?: number;
  /** Records with `atMs < untilMs` (exclusive), so that adjacent windows never overlap. */
  readonly untilMs?: number;
  readonly actor?: string;
  readonly targetKind?: string;
  readonly targetName?: string;
  readonly method?: string;
  /** Empty or absent: any outcome. */
  readonly outcomes?: readonly AuditOutcome[];
}

/** Outcomes ↔ `AUDIT_OUTCOME_*`. */
export const AUDIT_OUTCOME = enumCodec<AuditOutcome, wire.AuditOutcome__Output>(
  {
    Succeeded: "AUDIT_OUTCOME_SUCCEEDED",
    Denied: "AUDIT_OUTCOME_DENIED",
    Failed: "AUDIT_OUTCOME_FAILED",
  },
);

/** Encodes a stored record. */
export function auditEventToWire(event: AuditEvent): wire.AuditEvent {
  return {
    sequence: event.sequence,
    atMs: event.atMs,
    actor: event.actor,
    role: event.role,
    method: event.method,
    targetKind: event.targetKind,
    targetName: event.targetName,
    reason: event.reason,
    outcome: AUDIT_OUTCOME.toWire(event.outcome),
    ...(event.errorCode === undefined
      ? {}
      : { errorCode: ERROR_CODE.toWire(event.errorCode) }),
    message: event.message,
  };
}

/** A wire uint64 that must be exact: absent, or a non-negative safe integer. */
export function wireUint64(
  value: unknown,
  path: string,
  problems: Problem[],
): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (
    typeof value === "number" &&
    Number.isSafeInteger(value) &&
    value >= 0 &&
    value <= MAX_WIRE_INTEGER
  ) {
    return value;
  }
  problems.push({
    path,
    message: `must be an integer from 0 to ${String(MAX_WIRE_INTEGER)}`,
    value,
  });
  return undefined;
}

/**
 * Decodes a request's filter (null: match everything). Fields with problems are left out of the
 * result; the caller refuses the request when `problems` is not empty.
 */
export function auditFilterFromWire(
  raw: wire.AuditFilter__Output | null | undefined,
  path: string,
  problems: Problem[],
): AuditFilter {
  if (raw === null || raw === undefined) return {};
  const filter: {
    -readonly [K in keyof AuditFilter]: AuditFilter[K];
  } = {};
  const sinceMs = wireUint64(raw.sinceMs, `${path}.sinceMs`, problems);
  if (sinceMs !== undefined) filter.sinceMs = sinceMs;
  const untilMs = wireUint64(raw.untilMs, `${path}.untilMs`, problems);
  if (untilMs !== undefined) filter.untilMs = untilMs;
  for (const field of [
    "actor",
    "targetKind",
    "targetName",
    "method",
  ] as const) {
    const value = raw[field];
    if (value !== undefined) filter[field] = value;
  }
  const outcomes: AuditOutcome[] = [];
  raw.outcomes.forEach((outcome, i) => {
    const decoded = AUDIT_OUTCOME.fromWire(outcome);
    if (decoded === undefined) {
      problems.push({
        path: `${path}.outcomes[${String(i)}]`,
        message: `must be one of ${AUDIT_OUTCOME.values.map((v) => AUDIT_OUTCOME.toWire(v)).join(", ")}`,
        value: outcome,
      });
    } else {
      outcomes.push(decoded);
    }
  });
  if (outcomes.length > 0) filter.outcomes = outcomes;
  return filter;
}
