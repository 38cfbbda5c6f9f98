/**
 * Gates of a run (docs/semantics.md#gates-and-waits): approvals that wait for an operator and
 * scheduled starts that open at the next weekly occurrence of `startDay startTime utcOffset`.
 */
import {
  DAY_MS,
  DAYS_OF_WEEK,
  MINUTE_MS,
  weekdayOf,
  type DayOfWeek,
} from "../maintenance/calendar.js";
import { isoTime, setGateState, type StepContext } from "./context.js";
import type { Gate } from "./run.js";

/**
 * The first instant at or after `fromMs` that is `day` at `minutes` past local midnight in the
 * given offset. "At or after": a gate reached exactly at its start time opens at once; one reached
 * after it this week waits for next week (docs/semantics.md#gates-and-waits).
 */
export function nextWeeklyOccurrence(
  fromMs: number,
  day: DayOfWeek,
  minutes: number,
  utcOffsetMinutes: number,
): number {
  const offsetMs = utcOffsetMinutes * MINUTE_MS;
  const local = fromMs + offsetMs;
  const localDay = Math.floor(local / DAY_MS);
  const weekday = weekdayOf(localDay);
  const target = DAYS_OF_WEEK.indexOf(day);
  let candidate =
    (localDay + ((target - weekday + 7) % 7)) * DAY_MS + minutes * MINUTE_MS;
  if (candidate < local) candidate += 7 * DAY_MS;
  return candidate - offsetMs;
}

/** Where a gate sits, for transition records. */
export interface GateScope {
  readonly stage: string;
  readonly group?: string;
}

/**
 * Reaches the gates of one position: NotStarted gates become Pending (a scheduled start gets its
 * absolute time), scheduled starts whose time has come complete. Returns the first gate still
 * Pending, or undefined when all have passed.
 */
export function passGates(
  ctx: StepContext,
  gates: readonly Gate[],
  scope: GateScope,
): Gate | undefined {
  let blocking: Gate | undefined;
  for (const gate of gates) {
    if (gate.state === "NotStarted") {
      if (gate.type === "ScheduledStart" && gate.schedule !== undefined) {
        const at = nextWeeklyOccurrence(
          ctx.nowMs,
          gate.schedule.startDay,
          gate.schedule.startMinutes,
          gate.schedule.utcOffsetMinutes,
        );
        gate.scheduledAtMs = at;
        setGateState(
          ctx,
          gate,
          "Pending",
          `Scheduled to start at ${isoTime(at)}`,
          scope,
        );
      } else {
        setGateState(
          ctx,
          gate,
          "Pending",
          `Waiting for approval "${gate.displayName}" (${gate.id})`,
          scope,
        );
      }
    }
    if (
      gate.state === "Pending" &&
      gate.type === "ScheduledStart" &&
      gate.scheduledAtMs !== undefined &&
      gate.scheduledAtMs <= ctx.nowMs
    ) {
      gate.completedBy = "schedule";
      setGateState(
        ctx,
        gate,
        "Completed",
        `Scheduled start reached at ${isoTime(gate.scheduledAtMs)}`,
        scope,
      );
    }
    if (gate.state === "Pending") blocking ??= gate;
  }
  return blocking;
}

/** Marks every unfinished gate of a skipped scope Skipped. */
export function skipGates(
  ctx: StepContext,
  gates: readonly Gate[],
  scope: GateScope,
  message: string,
): void {
  for (const gate of gates) {
    if (gate.state === "NotStarted" || gate.state === "Pending")
      setGateState(ctx, gate, "Skipped", message, scope);
  }
}

/** True when `id` names this gate exactly or names its position (`stage:canary:after` for `...#2`). */
export function gateMatches(gate: Gate, id: string): boolean {
  return gate.id === id || gate.id.split("#")[0] === id;
}
