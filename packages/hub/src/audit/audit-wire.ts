/**
 * Audit records ↔ the wire messages of admin.proto (`AuditEvent`, `AuditFilter`). The decoder
 * treats the request as untrusted: every problem is reported with its field path and value, and
 * an unknown or UNSPECIFIED outcome is refused rather than ignored (it would widen the filter).
 */
import type { Problem } from "@flotilla/core";
import {
  enumCodec,
  ERROR_CODE,
  MAX_WIRE_INTEGER,
  type wire,
} from "@flotilla/protocol";
import type { AuditEvent, AuditFilter, AuditOutcome } from "./audit-log.js";

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
