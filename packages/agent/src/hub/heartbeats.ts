/**
 * Heartbeats on one stream (docs/agent-protocol.md, Session 3): every `intervalMs` on the injected
 * clock until the stream ends. A hub that is not reading gets no heartbeat queued behind the
 * backlog: it would arrive late anyway, and the next one is due soon.
 */
import type { Clock } from "@flotilla/node";
import type { HubStream } from "./hub-stream.js";

/** Options of {@link sendHeartbeats}. */
export interface HeartbeatOptions {
  readonly clock: Clock;
  readonly intervalMs: number;
  /** Aborts when the stream ends. */
  readonly signal: AbortSignal;
  readonly lastAppliedGeneration: () => number;
  /**
   * After each heartbeat; `lagMs` is how late it went out: its send time minus when it was due
   * (the previous heartbeat sent, or the start, plus the interval). A heartbeat skipped because
   * the stream was backlogged leaves the due time where it was, so the next one shows the delay.
   */
  readonly onSent: (sentAtMs: number, lagMs: number) => void;
}

/**
 * Sends heartbeats until `signal` aborts or the stream is done. Its first sleep is scheduled
 * before it returns its promise, so a caller that starts it first knows the timer is set.
 */
export async function sendHeartbeats(
  stream: HubStream,
  options: HeartbeatOptions,
): Promise<void> {
  const { clock, intervalMs, signal } = options;
  let dueAtMs = clock.now() + intervalMs;
  for (;;) {
    try {
      await clock.sleep(intervalMs, { signal });
    } catch {
      return; // the stream ended
    }
    if (stream.done) return;
    if (stream.backlogged) continue;
    const sentAtMs = clock.now();
    stream.write({
      heartbeat: {
        sentAtMs,
        lastAppliedGeneration: options.lastAppliedGeneration(),
      },
    });
    options.onSent(sentAtMs, sentAtMs - dueAtMs);
    dueAtMs = sentAtMs + intervalMs;
  }
}
