/**
 * What a hub session reports about itself, for logs, tests and the process summary. Past tense:
 * these are things that happened.
 */
import type { FlotillaError } from "@flotilla/core";
import type { StatusReportInput } from "./status-outbox.js";

/** Where a session is: not started, opening a stream, welcomed, waiting to retry, or stopped. */
export type SessionState =
  "idle" | "connecting" | "connected" | "waiting" | "stopped";

/** Why the session brings the hub up to date: a new stream was welcomed, or the hub asked. */
export type SyncReason = "connected" | "resync";

/** Something a session did or saw. */
export type SessionEvent =
  | {
      readonly type: "ConnectStarted";
      readonly attempt: number;
      /** The hub address this attempt goes to. */
      readonly address: string;
    }
  | {
      readonly type: "Welcomed";
      readonly streamId: number;
      readonly address: string;
      readonly heartbeatIntervalMs: number;
      readonly hubTimeMs: number;
    }
  | { readonly type: "HubRefused"; readonly error: FlotillaError }
  | {
      readonly type: "Disconnected";
      readonly streamId: number;
      readonly welcomed: boolean;
      readonly error?: FlotillaError;
      /** Reports in flight that were still current: they go out again on the next stream. */
      readonly unackedCurrent: number;
    }
  | {
      /** The next attempt goes to another of the hub's addresses. */
      readonly type: "FailedOver";
      readonly from: string;
      readonly to: string;
    }
  | {
      readonly type: "RetryScheduled";
      readonly delayMs: number;
      /** Failed attempts in a row, this one included. */
      readonly failures: number;
    }
  | { readonly type: "ResyncRequested"; readonly reason: string }
  | { readonly type: "HeartbeatSent"; readonly sentAtMs: number }
  | {
      readonly type: "ReportSent";
      readonly sequence: number;
      readonly report: StatusReportInput;
    }
  | {
      readonly type: "ReportAcked";
      readonly sequence: number;
      readonly accepted: boolean;
      readonly reason: string;
      /** Whether the acked report is still its item's current status. */
      readonly current: boolean;
    };
