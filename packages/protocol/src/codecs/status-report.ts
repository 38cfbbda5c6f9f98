/**
 * An agent's status report on one item of its intent (docs/architecture.md: Applying, Applied,
 * Ready, NotReady, Failed, Pending, Modified). Reports come from agents, so decoding trusts
 * nothing: every string and list is bounded, enum values are checked, and fields that only make
 * sense for one phase are refused elsewhere. Encoding keeps within the same bounds (it caps the
 * reasons and shortens free text), so an agent never sends what the hub would refuse for size.
 */
import type { Result } from "@flotilla/core";
import { z } from "zod";
import type * as wire from "../generated/index.js";
import {
  MAX_ERROR_LENGTH,
  MAX_ID_LENGTH,
  MAX_MESSAGE_LENGTH,
  MAX_NAME_LENGTH,
  MAX_REASONS,
  MAX_RESOURCE_NAME_LENGTH,
} from "../limits.js";
import { enumCodec } from "./enum-codec.js";
import {
  boundedList,
  boundedString,
  dnsLabel,
  optional,
  parseWire,
  wholeNumber,
} from "./validate.js";
import { compact } from "@flotilla/core";

/** Where an agent is with one item of its intent. */
export type StatusPhase =
  | "Applying"
  | "Applied"
  | "Ready"
  | "NotReady"
  | "Failed"
  | "Pending"
  | "Modified";

/** Why one Kubernetes resource is not Ready (or was Modified). */
export interface ResourceReason {
  readonly kind: string;
  /** Empty for cluster-scoped resources. */
  readonly namespace: string;
  readonly name: string;
  readonly state: string;
  readonly message: string;
}

/** The intent item a report is about: a bundle revision or a platform upgrade. */
export type StatusSubject =
  | {
      readonly kind: "bundle";
      readonly bundle: string;
      readonly revision: string;
    }
  | { readonly kind: "upgrade"; readonly upgradeId: string };

/** A validated status report. */
export interface StatusReport {
  /** Increasing within a stream; the hub's Ack echoes it. */
  readonly sequence: number;
  /** The intent generation the agent is working on. */
  readonly generation: number;
  readonly subject: StatusSubject;
  readonly phase: StatusPhase;
  /** At most {@link MAX_REASONS}. */
  readonly reasons: readonly ResourceReason[];
  /** Reasons the agent left out. */
  readonly reasonsTruncated: number;
  /** Failed only. */
  readonly error?: string;
  readonly message?: string;
  /** 0–100. */
  readonly progressPercent?: number;
  /** Pending only: when the agent expects to be able to start. */
  readonly pendingUntilMs?: number;
  readonly observedAtMs: number;
}

/** Phases ↔ `STATUS_PHASE_*`. */
export const STATUS_PHASE = enumCodec<StatusPhase, wire.StatusPhase__Output>({
  Applying: "STATUS_PHASE_APPLYING",
  Applied: "STATUS_PHASE_APPLIED",
  Ready: "STATUS_PHASE_READY",
  NotReady: "STATUS_PHASE_NOT_READY",
  Failed: "STATUS_PHASE_FAILED",
  Pending: "STATUS_PHASE_PENDING",
  Modified: "STATUS_PHASE_MODIFIED",
});

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Encodes a report. Reasons beyond {@link MAX_REASONS} are dropped and counted in
 * `reasonsTruncated`; messages and errors longer than their bounds are shortened.
 */
export function statusReportToWire(report: StatusReport): wire.StatusReport {
  const kept = report.reasons.slice(0, MAX_REASONS);
  const subject: wire.StatusReport =
    report.subject.kind === "bundle"
      ? {
          bundle: {
            bundle: report.subject.bundle,
            revision: report.subject.revision,
          },
        }
      : { upgradeId: report.subject.upgradeId };
  return {
    sequence: report.sequence,
    generation: report.generation,
    ...subject,
    phase: STATUS_PHASE.toWire(report.phase),
    reasons: kept.map((r) => ({
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
      state: r.state,
      message: shorten(r.message, MAX_MESSAGE_LENGTH),
    })),
    reasonsTruncated:
      report.reasonsTruncated + (report.reasons.length - kept.length),
    ...(report.error === undefined
      ? {}
      : { error: shorten(report.error, MAX_ERROR_LENGTH) }),
    ...(report.message === undefined
      ? {}
      : { message: shorten(report.message, MAX_MESSAGE_LENGTH) }),
    ...compact({
      progressPercent: report.progressPercent,
      pendingUntilMs: report.pendingUntilMs,
    }),
    observedAtMs: report.observedAtMs,
  };
}

const reasonSchema = z.object({
  kind: boundedString(MAX_NAME_LENGTH, 1),
  namespace: boundedString(MAX_NAME_LENGTH),
  name: boundedString(MAX_RESOURCE_NAME_LENGTH, 1),
  state: boundedString(MAX_NAME_LENGTH, 1),
  message: boundedString(MAX_MESSAGE_LENGTH),
});

const reportSchema = z
  .object({
    sequence: wholeNumber(0),
    generation: wholeNumber(1),
    bundle: optional(
      z.object({
        bundle: dnsLabel(MAX_NAME_LENGTH),
        revision: boundedString(MAX_ID_LENGTH, 1),
      }),
    ),
    upgradeId: optional(boundedString(MAX_ID_LENGTH, 1)),
    phase: STATUS_PHASE.field,
    reasons: boundedList(reasonSchema, MAX_REASONS),
    reasonsTruncated: wholeNumber(0, 0xffff_ffff),
    error: optional(boundedString(MAX_ERROR_LENGTH)),
    message: optional(boundedString(MAX_MESSAGE_LENGTH)),
    progressPercent: optional(wholeNumber(0, 100)),
    pendingUntilMs: optional(wholeNumber(1)),
    observedAtMs: wholeNumber(1),
  })
  .superRefine((r, ctx) => {
    const problem = (path: string, message: string, input: unknown): void => {
      ctx.addIssue({ code: "custom", path: [path], message, input });
    };
    if ((r.bundle === undefined) === (r.upgradeId === undefined)) {
      problem("bundle", "must set exactly one of bundle, upgradeId", undefined);
    }
    if (r.phase === "Failed" && (r.error ?? "") === "") {
      problem(
        "error",
        "is required when phase is STATUS_PHASE_FAILED",
        r.error,
      );
    }
    if (r.phase !== "Failed" && r.error !== undefined) {
      problem(
        "error",
        "is only allowed when phase is STATUS_PHASE_FAILED",
        r.error,
      );
    }
    if (r.phase !== "Pending" && r.pendingUntilMs !== undefined) {
      const message = "is only allowed when phase is STATUS_PHASE_PENDING";
      problem("pendingUntilMs", message, r.pendingUntilMs);
    }
  });

/**
 * Decodes and validates a report from an agent. Every problem is reported at once with its path
 * (starting at `path`) and the offending value; nothing is trusted.
 */
export function statusReportFromWire(
  raw: unknown,
  path = "status",
): Result<StatusReport> {
  const parsed = parseWire(reportSchema, raw, path);
  if (!parsed.ok) return parsed;
  const r = parsed.value;
  const subject: StatusSubject =
    r.bundle !== undefined
      ? { kind: "bundle", bundle: r.bundle.bundle, revision: r.bundle.revision }
      : { kind: "upgrade", upgradeId: r.upgradeId ?? "" };
  return {
    ok: true,
    value: {
      sequence: r.sequence,
      generation: r.generation,
      subject,
      phase: r.phase,
      reasons: r.reasons,
      reasonsTruncated: r.reasonsTruncated,
      ...compact({
        error: r.error,
        message: r.message,
        progressPercent: r.progressPercent,
        pendingUntilMs: r.pendingUntilMs,
      }),
      observedAtMs: r.observedAtMs,
    },
  };
}
