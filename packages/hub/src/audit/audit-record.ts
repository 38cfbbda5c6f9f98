/**
 * The shape every audit record must have, checked when a record is appended (a caller's bug is
 * refused with `invalid_argument`) and when one is read back (a foreign or damaged record in the
 * stream is skipped, not trusted). Strings are bounded so that one record stays small whatever
 * a caller sends; the bounds match what `audited` (grpc/unary.ts) already truncates to.
 */
import {
  FLOTILLA_ERROR_CODES,
  FlotillaError,
  type Problem,
  type Result,
  fail,
  ok,
} from "@flotilla/core";
import { AUDIT_OUTCOME } from "@flotilla/protocol";
import { z } from "zod";
import type { AuditEvent, AuditOutcome, AuditRecord } from "./audit-log.js";

/** The outcomes, in the order the wire enum lists them. */
export const AUDIT_OUTCOMES: readonly AuditOutcome[] = AUDIT_OUTCOME.values;

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

/** The fields of a stored record. */
const RECORD_FIELDS: ReadonlySet<string> = new Set([
  ...Object.keys(AUDIT_FIELD_MAX_LENGTH),
  "atMs",
  "outcome",
  "errorCode",
]);

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
    errorCode: z.enum(FLOTILLA_ERROR_CODES).optional(),
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
export function checkAuditRecord(raw: unknown): Result<AuditRecord> {
  const parsed = recordSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    return fail(issuesToProblems(parsed.error, ""));
  }
  const { errorCode, ...rest } = parsed.data;
  return ok(errorCode === undefined ? rest : { ...rest, errorCode });
}

/** The record, validated; throws `invalid_argument` naming every bad field. */
export function validAuditRecord(raw: unknown): AuditRecord {
  const checked = checkAuditRecord(raw);
  if (!checked.ok) {
    throw FlotillaError.invalid("audit record", checked.problems);
  }
  return checked.value;
}

/** How a record is stored: UTF-8 JSON of its fields (the sequence is the store's position). */
export function encodeAuditRecord(record: AuditRecord): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(record));
}

/**
 * Why a stored message is not read as a record: stored under another subject than the audit
 * subject, larger than any record can be, not UTF-8 JSON, JSON that is not a valid record, or a
 * status message (an idle heartbeat or flow-control request some consumer delivered onto the
 * audit subject: it has a status line and no record).
 */
export type AuditSkipReason =
  | "foreign_subject"
  | "oversized"
  | "not_json"
  | "invalid_record"
  | "status_message";

/** Every {@link AuditSkipReason}, for metrics. */
export const AUDIT_SKIP_REASONS: readonly AuditSkipReason[] = [
  "foreign_subject",
  "oversized",
  "not_json",
  "invalid_record",
  "status_message",
];

/** A stored message read back: the event it holds, or why it is skipped (with detail for the log). */
export type DecodedAuditMessage =
  | { readonly type: "event"; readonly event: AuditEvent }
  | {
      readonly type: "skip";
      readonly reason: AuditSkipReason;
      readonly detail: string;
    };

/**
 * The most bytes a stored record can take: every string at its bound, each UTF-16 code unit
 * taking at most 3 bytes of UTF-8 and 6 characters of JSON escape, plus field names and numbers.
 * Anything larger was not written by a hub, and is not parsed at all.
 */
export const MAX_STORED_RECORD_BYTES =
  6 * Object.values(AUDIT_FIELD_MAX_LENGTH).reduce((sum, max) => sum + max, 0) +
  1024;

/**
 * Reads a stored record back as the event at `sequence`, or says why it cannot be trusted
 * (too large, not JSON, or not a valid record).
 */
export function decodeAuditRecord(
  bytes: Uint8Array,
  sequence: number,
): DecodedAuditMessage {
  if (bytes.byteLength > MAX_STORED_RECORD_BYTES) {
    return {
      type: "skip",
      reason: "oversized",
      detail: `${String(bytes.byteLength)} bytes, more than the ${String(MAX_STORED_RECORD_BYTES)} a record can take`,
    };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    return {
      type: "skip",
      reason: "not_json",
      detail: `not UTF-8 JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  // The hub stores only a record's fields: anything more was written by someone else.
  const unknown =
    typeof raw === "object" && raw !== null && !Array.isArray(raw)
      ? Object.keys(raw).filter((key) => !RECORD_FIELDS.has(key))
      : [];
  if (unknown.length > 0) {
    return {
      type: "skip",
      reason: "invalid_record",
      detail: `unknown fields ${unknown.slice(0, 5).join(", ")}`,
    };
  }
  const checked = checkAuditRecord(raw);
  if (!checked.ok) {
    return {
      type: "skip",
      reason: "invalid_record",
      detail: checked.problems
        .slice(0, 5)
        .map((p) => `${p.path}: ${p.message}`)
        .join("; "),
    };
  }
  return { type: "event", event: { ...checked.value, sequence } };
}
