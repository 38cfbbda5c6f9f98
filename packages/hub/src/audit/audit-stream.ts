/**
 * The JetStream stream that holds the audit log: its name, its subject and its settings, and
 * creating it when missing. One place names it, so that tools reading the stream directly
 * (`nats stream view flotilla-audit`) and the hub agree.
 */
import { FlotillaError } from "@flotilla/core";
import {
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from "@nats-io/jetstream";
import { nanos, type MsgHdrs } from "@nats-io/transport-node";
import { isNatsOutage, isStreamNotFound } from "@flotilla/node";
import { decodeAuditRecord, type DecodedAuditMessage } from "./audit-record.js";

/** The audit stream of hub state prefix `prefix`: `<prefix>-audit`. */
export function auditStreamName(prefix: string): string {
  return `${prefix}-audit`;
}

/** The subject audit records are published on: `<prefix>.audit`. */
export function auditSubject(prefix: string): string {
  return `${prefix}.audit`;
}

/** Default retention: 90 days. */
export const DEFAULT_AUDIT_MAX_AGE_MS = 90 * 24 * 60 * 60 * 1000;
/** Default retention: 1 GiB. */
export const DEFAULT_AUDIT_MAX_BYTES = 1024 * 1024 * 1024;
/** Largest message the stream accepts; a valid record is far smaller (its strings are bounded). */
export const AUDIT_MAX_MESSAGE_BYTES = 16 * 1024;

/** How the stream is created. */
export interface AuditStreamSettings {
  readonly stream: string;
  readonly subject: string;
  readonly maxAgeMs: number;
  readonly maxBytes: number;
  readonly replicas: number;
}

/** What {@link ensureAuditStream} found or made. */
export interface AuditStreamState {
  /** False: the stream existed and was left as it is. */
  readonly created: boolean;
  /** The stream's size limit (-1: none). */
  readonly maxBytes: number;
}

/**
 * Creates the stream when it is missing. An existing stream is used as it is (its limits may have
 * been changed on purpose), unless it does not take the audit subject: then appends would fail.
 * JetStream reserves a new stream's `max_bytes` up front, so a server without that much room
 * refuses it: the error names the size, which is what an operator lowers (or gives JetStream more).
 */
export async function ensureAuditStream(
  jsm: JetStreamManager,
  settings: AuditStreamSettings,
  what: string,
): Promise<AuditStreamState> {
  const { stream, subject } = settings;
  try {
    const { config } = await jsm.streams.info(stream);
    if (!config.subjects.includes(subject)) {
      throw new FlotillaError(
        "failed_precondition",
        `${what}: stream "${stream}" takes subjects ${JSON.stringify(config.subjects)}, not "${subject}"`,
      );
    }
    return { created: false, maxBytes: config.max_bytes };
  } catch (error) {
    if (!isStreamNotFound(error)) throw error;
  }
  const config: Partial<StreamConfig> & { name: string } = {
    name: stream,
    description:
      "flotilla hub audit log: one record per state-changing admin call",
    subjects: [subject],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_age: nanos(settings.maxAgeMs),
    max_bytes: settings.maxBytes,
    max_msg_size: AUDIT_MAX_MESSAGE_BYTES,
    num_replicas: settings.replicas,
    // Append-only: records leave only by age or size.
    deny_delete: true,
    deny_purge: true,
  };
  try {
    await jsm.streams.add(config);
  } catch (error) {
    if (isNatsOutage(error)) throw error;
    throw new FlotillaError(
      "failed_precondition",
      `${what}: JetStream refused to create stream "${stream}" with max_bytes ${String(settings.maxBytes)}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return { created: true, maxBytes: settings.maxBytes };
}

/** A stored message of the audit stream, as a consumer delivers it. */
export interface AuditStreamMessage {
  readonly subject: string;
  readonly seq: number;
  readonly data: Uint8Array;
  readonly headers?: MsgHdrs | undefined;
}

/**
 * The record a stored message holds, or why it is skipped. Only the hub's appends belong in the
 * stream, but anyone allowed to publish on the subject, or to point a push consumer at it, can
 * store more: such a consumer's messages keep their own subjects, and its idle heartbeats and
 * flow-control requests are status messages without a body.
 */
export function decodeAuditMessage(
  m: AuditStreamMessage,
  subject: string,
): DecodedAuditMessage {
  if (m.subject !== subject) {
    return {
      type: "skip",
      reason: "foreign_subject",
      detail: `on subject ${JSON.stringify(m.subject.slice(0, 200))}`,
    };
  }
  const status = m.headers?.code ?? 0;
  if (status !== 0) {
    return {
      type: "skip",
      reason: "status_message",
      detail: `a status message (${String(status)} ${m.headers?.description ?? ""})`,
    };
  }
  return decodeAuditRecord(m.data, m.seq);
}
