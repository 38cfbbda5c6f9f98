/**
 * The shape every audit record must have, checked when a record is appended (a caller's bug is
 * refused with `invalid_argument`) and when one is read back (a foreign or damaged record in the
 * stream is skipped, not trusted). Strings are bounded so that one record stays small whatever
 * a caller sends; the bounds match what `audited` (grpc/unary.ts) already truncates to.
 */
import {
  FlotillaError,
  type FlotillaErrorCode,
  type Problem,
} from "@flotilla/core";
import { z } from "zod";
import type { AuditEvent, AuditOutcome, AuditRecord } from "./audit-log.js";

/** The outcomes, in the order the wire enum lists them. */
export const AUDIT_OUTCOMES: readonly AuditOutcome[] = [
  "Succeeded",
  "Denied",
  "Failed",
];

const ERROR_CODES = [
  "invalid_argument",
  "not_found",
  "already_exists",
  "failed_precondition",
  "permission_denied",
  "unauthenticated",
  "unavailable",
  "deadline_exceeded",
  "internal",
] as const satisfies readonly FlotillaErrorCode[];

/** Longest value, in UTF-16 code units, of each string field of a record. */
export const AUDIT_FIELD_MAX_LENGTH = {
  actor: 256,
  role: 64,
  method: 128,
  targetKind: 64,
  targetName: 256,
  reason: 1024,
  message: 1024,
} as const;

function bounded(max: number) {
  return z.string().max(max, `must be at most ${String(max)} characters`);
}

const epochMs = z
  .number()
  .int("must be an integer")
  .min(0, "must not be negative")
  .max(Number.MAX_SAFE_INTEGER, "must be a safe integer");

const recordSchema = z
  .object({
    atMs: epochMs,
    actor: bounded(AUDIT_FIELD_MAX_LENGTH.actor),
    role: bounded(AUDIT_FIELD_MAX_LENGTH.role),
    method: bounded(AUDIT_FIELD_MAX_LENGTH.method).min(1, "must not be empty"),
    targetKind: bounded(AUDIT_FIELD_MAX_LENGTH.targetKind),
    targetName: bounded(AUDIT_FIELD_MAX_LENGTH.targetName),
    reason: bounded(AUDIT_FIELD_MAX_LENGTH.reason),
    outcome: z.enum(AUDIT_OUTCOMES as [AuditOutcome, ...AuditOutcome[]]),
    errorCode: z.enum(ERROR_CODES).optional(),
    message: bounded(AUDIT_FIELD_MAX_LENGTH.message),
  })
  .superRefine((record, ctx) => {
    if (record.outcome === "Succeeded" && record.errorCode !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["errorCode"],
        message: 'must be absent when outcome is "Succeeded"',
        input: record.errorCode,
      });
    }
    if (record.outcome !== "Succeeded" && record.errorCode === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["errorCode"],
        message: `is required when outcome is "${record.outcome}"`,
      });
    }
  });

/** Turns zod issues into problems whose paths start with `prefix`. */
export function issuesToProblems(error: z.ZodError, prefix: string): Problem[] {
  return error.issues.map((issue) => {
    let path = prefix;
    for (const part of issue.path) {
      if (typeof part === "number") path += `[${String(part)}]`;
      else path += path === "" ? String(part) : `.${String(part)}`;
    }
    const message =
      issue.code === "invalid_type"
        ? issue.input === undefined
          ? "is required"
          : `must be ${issue.expected}`
        : issue.message;
    return issue.input === undefined
      ? { path, message }
      : { path, message, value: issue.input };
  });
}

/** The record with only its known fields, or the problems that make it unfit to store. */
export function checkAuditRecord(
  raw: unknown,
): { ok: true; record: AuditRecord } | { ok: false; problems: Problem[] } {
  const parsed = recordSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    return { ok: false, problems: issuesToProblems(parsed.error, "") };
  }
  const { errorCode, ...rest } = parsed.data;
  return {
    ok: true,
    record: errorCode === undefined ? rest : { ...rest, errorCode },
  };
}

/** The record, validated; throws `invalid_argument` naming every bad field. */
export function validAuditRecord(raw: unknown): AuditRecord {
  const checked = checkAuditRecord(raw);
  if (!checked.ok) {
    throw FlotillaError.invalid("audit record", checked.problems);
  }
  return checked.record;
}

/** How a record is stored: UTF-8 JSON of its fields (the sequence is the store's position). */
export function encodeAuditRecord(record: AuditRecord): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(record));
}

/**
 * Reads a stored record back as the event at `sequence`, or explains why it cannot be trusted
 * (not JSON, or not a valid record).
 */
export function decodeAuditRecord(
  bytes: Uint8Array,
  sequence: number,
): { ok: true; event: AuditEvent } | { ok: false; reason: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    return {
      ok: false,
      reason: `not UTF-8 JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const checked = checkAuditRecord(raw);
  if (!checked.ok) {
    return {
      ok: false,
      reason: checked.problems
        .slice(0, 5)
        .map((p) => `${p.path}: ${p.message}`)
        .join("; "),
    };
  }
  return { ok: true, event: { ...checked.record, sequence } };
}
