/**
 * What both audit log adapters share about reading: validating a filter, matching a record
 * against it, and the page token (an opaque encoding of the sequence the next page starts at).
 * Problems name the request's field paths (`filter.sinceMs`, `pageSize`, `pageToken`), the same
 * ones the AdminService request uses.
 */
import { FlotillaError, type Problem } from "@flotilla/core";
import type {
  AuditEvent,
  AuditFilter,
  AuditListOptions,
  AuditOutcome,
} from "./audit-log.js";
import { AUDIT_FIELD_MAX_LENGTH, AUDIT_OUTCOMES } from "./audit-record.js";

/** Records a page holds when the caller does not say. */
export const DEFAULT_AUDIT_PAGE_SIZE = 100;
/** The most records one page may hold. */
export const MAX_AUDIT_PAGE_SIZE = 1000;

const STRING_FIELDS = [
  "actor",
  "targetKind",
  "targetName",
  "method",
] as const satisfies readonly (keyof AuditFilter &
  keyof typeof AUDIT_FIELD_MAX_LENGTH)[];

function isNonNegativeInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** Every problem of `filter`, with paths under `prefix` (e.g. `filter.sinceMs`). */
export function auditFilterProblems(
  filter: AuditFilter,
  prefix = "filter",
): Problem[] {
  const problems: Problem[] = [];
  for (const field of ["sinceMs", "untilMs"] as const) {
    const value = filter[field];
    if (value !== undefined && !isNonNegativeInteger(value)) {
      problems.push({
        path: `${prefix}.${field}`,
        message: "must be a non-negative integer of epoch milliseconds",
        value,
      });
    }
  }
  const { sinceMs, untilMs } = filter;
  if (
    isNonNegativeInteger(sinceMs) &&
    isNonNegativeInteger(untilMs) &&
    untilMs < sinceMs
  ) {
    problems.push({
      path: `${prefix}.untilMs`,
      message: `must not be before ${prefix}.sinceMs (${String(sinceMs)})`,
      value: untilMs,
    });
  }
  for (const field of STRING_FIELDS) {
    const value: unknown = filter[field];
    const max = AUDIT_FIELD_MAX_LENGTH[field];
    if (value === undefined) continue;
    if (typeof value !== "string" || value.length > max) {
      problems.push({
        path: `${prefix}.${field}`,
        message: `must be a string of at most ${String(max)} characters`,
        value,
      });
    }
  }
  const outcomes: unknown = filter.outcomes;
  if (outcomes !== undefined) {
    if (!Array.isArray(outcomes)) {
      problems.push({
        path: `${prefix}.outcomes`,
        message: "must be a list of outcomes",
        value: outcomes,
      });
    } else {
      (outcomes as unknown[]).forEach((outcome, i) => {
        if (!AUDIT_OUTCOMES.includes(outcome as AuditOutcome)) {
          problems.push({
            path: `${prefix}.outcomes[${String(i)}]`,
            message: `must be one of ${AUDIT_OUTCOMES.join(", ")}`,
            value: outcome,
          });
        }
      });
    }
  }
  return problems;
}

/**
 * True when `event` matches every field `filter` sets. `sinceMs` is inclusive and `untilMs`
 * exclusive, so that consecutive windows never report a record twice.
 */
export function matchesAuditFilter(
  event: AuditEvent,
  filter: AuditFilter,
): boolean {
  if (filter.sinceMs !== undefined && event.atMs < filter.sinceMs) return false;
  if (filter.untilMs !== undefined && event.atMs >= filter.untilMs)
    return false;
  for (const field of STRING_FIELDS) {
    const wanted = filter[field];
    if (wanted !== undefined && event[field] !== wanted) return false;
  }
  const outcomes = filter.outcomes ?? [];
  return outcomes.length === 0 || outcomes.includes(event.outcome);
}

const TOKEN_PREFIX = "audit.v1.";

/** The opaque token of a page that starts at `sequence`. */
export function encodeAuditPageToken(sequence: number): string {
  return Buffer.from(`${TOKEN_PREFIX}${String(sequence)}`, "utf8").toString(
    "base64url",
  );
}

/** The sequence a page token starts at, or undefined when it is not a token this log made. */
export function decodeAuditPageToken(token: string): number | undefined {
  if (token.length > 64 || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const text = Buffer.from(token, "base64url").toString("utf8");
  if (!text.startsWith(TOKEN_PREFIX)) return undefined;
  const digits = text.slice(TOKEN_PREFIX.length);
  if (!/^[1-9][0-9]{0,15}$/.test(digits)) return undefined;
  const sequence = Number(digits);
  // Re-encoding must give the same token: refuses padded or otherwise altered spellings.
  if (
    !Number.isSafeInteger(sequence) ||
    encodeAuditPageToken(sequence) !== token
  ) {
    return undefined;
  }
  return sequence;
}

/** A list call's validated arguments. */
export interface AuditQuery {
  readonly filter: AuditFilter;
  readonly pageSize: number;
  /** The first sequence to read (1 when there is no page token). */
  readonly startSequence: number;
}

/** Every problem of a list call's arguments (filter, `pageSize`, `pageToken`). */
export function auditQueryProblems(
  filter: AuditFilter,
  options: Pick<AuditListOptions, "pageSize" | "pageToken">,
): Problem[] {
  const problems = auditFilterProblems(filter);
  const { pageSize } = options;
  if (
    pageSize !== undefined &&
    (!Number.isSafeInteger(pageSize) ||
      pageSize < 1 ||
      pageSize > MAX_AUDIT_PAGE_SIZE)
  ) {
    problems.push({
      path: "pageSize",
      message: `must be an integer from 1 to ${String(MAX_AUDIT_PAGE_SIZE)}`,
      value: pageSize,
    });
  }
  const token = options.pageToken ?? "";
  if (token !== "" && decodeAuditPageToken(token) === undefined) {
    problems.push({
      path: "pageToken",
      message: "is not a page token from a previous page of this audit log",
      value: token,
    });
  }
  return problems;
}

/** Validates a list call, reporting every problem at once as `invalid_argument`. */
export function parseAuditQuery(
  filter: AuditFilter,
  options: AuditListOptions,
): AuditQuery {
  const problems = auditQueryProblems(filter, options);
  if (problems.length > 0) {
    throw FlotillaError.invalid("audit query", problems);
  }
  const token = options.pageToken ?? "";
  return {
    filter,
    pageSize: options.pageSize ?? DEFAULT_AUDIT_PAGE_SIZE,
    startSequence: token === "" ? 1 : (decodeAuditPageToken(token) ?? 1),
  };
}

/** Every problem of a watch call's filter and `afterSequence`. */
export function auditWatchProblems(
  filter: AuditFilter,
  afterSequence: number | undefined,
): Problem[] {
  const problems = auditFilterProblems(filter);
  if (afterSequence !== undefined && !isNonNegativeInteger(afterSequence)) {
    problems.push({
      path: "afterSequence",
      message: "must be a non-negative integer",
      value: afterSequence,
    });
  }
  return problems;
}

/** Validates a watch call's filter and `afterSequence`, reporting every problem at once. */
export function checkAuditWatch(
  filter: AuditFilter,
  afterSequence: number | undefined,
): void {
  const problems = auditWatchProblems(filter, afterSequence);
  if (problems.length > 0) throw FlotillaError.invalid("audit watch", problems);
}
