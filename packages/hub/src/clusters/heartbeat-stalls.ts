/**
 * Heartbeat deadlines that a stalled hub does not break. An agent is Unreachable after
 * `unreachableAfterMs` of silence, but silence only counts while the hub could have heard it: when
 * the hub's own event loop stalls (a long GC pause, a frozen or suspended process), the agents'
 * heartbeats wait unread in its sockets, and the first check after the stall runs before they are
 * read. Measured by the wall clock, every agent would look silent and the whole fleet would flap
 * to Unreachable and back.
 *
 * The hub checks heartbeats on a fixed interval, so a check that comes much later than that shows
 * a stall, and how long it was. The time lost is taken out of every agent's silence, but never so
 * much that an agent gets more than one heartbeat interval after the stall to be heard again: an
 * agent that really went away is still caught within its normal deadline, or one interval after
 * the hub resumed when the stall outlasted that deadline.
 */

/** How the checks are paced. */
export interface HeartbeatStallOptions {
  /** How often the hub checks heartbeats. */
  readonly checkIntervalMs: number;
  /** How often agents send heartbeats. */
  readonly heartbeatIntervalMs: number;
  /** How long without a message before an agent is Unreachable. */
  readonly unreachableAfterMs: number;
}

/** Follows the checks; see the module doc. */
export interface HeartbeatStalls {
  /**
   * Called on every check with the clock's time: how long the hub could not have heard anyone
   * since the previous check (0 when the check is on time).
   */
  blindMsAt(nowMs: number): number;
  /**
   * When an agent's silence starts counting after a stall of `blindMs`, given when it started
   * counting before (never earlier than that).
   */
  silenceFromAfter(
    silenceFromMs: number,
    blindMs: number,
    nowMs: number,
  ): number;
}

export function createHeartbeatStalls(
  options: HeartbeatStallOptions,
): HeartbeatStalls {
  const { checkIntervalMs, heartbeatIntervalMs, unreachableAfterMs } = options;
  // Timers run a little late all the time; only lateness that could cost a heartbeat counts.
  const toleranceMs = heartbeatIntervalMs / 2;
  let previousCheckMs: number | undefined;
  return {
    blindMsAt(nowMs) {
      const previous = previousCheckMs;
      previousCheckMs = nowMs;
      if (previous === undefined) return 0;
      const lateMs = nowMs - previous - checkIntervalMs;
      return lateMs > toleranceMs ? lateMs : 0;
    },

    silenceFromAfter(silenceFromMs, blindMs, nowMs) {
      if (blindMs <= 0) return silenceFromMs;
      // At most one heartbeat interval from now to be heard again.
      const latest = nowMs + heartbeatIntervalMs - unreachableAfterMs;
      return Math.max(silenceFromMs, Math.min(silenceFromMs + blindMs, latest));
    },
  };
}
