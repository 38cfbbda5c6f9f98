/**
 * The session's statuses (docs/agent-protocol.md, Session 5 and 6): the current status of every
 * item of the intent, latest wins, so the outbox is bounded by the intent's size however fast
 * statuses change; which of them still have to go out on the current stream; and the reports in
 * flight, awaiting their acks.
 *
 * "Current" is the whole retransmission rule: after a reconnect (and on resync) every current
 * status is sent again. A report that was not acked when its stream dropped is therefore sent again
 * exactly when it is still its item's current status; one superseded by a newer status, or whose
 * item left the intent, is not.
 */
import { canonicalJson } from "@flotilla/core";
import type { StatusReport, StatusSubject } from "@flotilla/protocol";

/** A status report before the session numbers it. */
export type StatusReportInput = Omit<StatusReport, "sequence">;

/** One item's current status; a new object for every change (identity = "still current"). */
interface Entry {
  readonly report: StatusReportInput;
  /** The stream this entry was last written on (0: none yet). */
  sentOnStream: number;
}

/** What the hub answered for one report. */
export interface AckResult {
  readonly report: StatusReportInput;
  readonly accepted: boolean;
  /** Whether the report is still its item's current status. */
  readonly current: boolean;
}

/** The key of an item: a bundle by name (its revisions replace each other), an upgrade by run. */
export function subjectKey(subject: StatusSubject): string {
  return subject.kind === "bundle"
    ? `bundle/${subject.bundle}`
    : `upgrade/${subject.upgradeId}`;
}

/** The current statuses and the reports in flight of one session. */
export class StatusOutbox {
  readonly #current = new Map<string, Entry>();
  /** Keys with a status not yet written on the current stream, in the order they changed. */
  readonly #queued = new Set<string>();
  readonly #inFlight = new Map<number, { key: string; entry: Entry }>();

  /**
   * Sets an item's current status and queues it; false (nothing queued) when it says the same as
   * the current one, whenever observed.
   */
  set(report: StatusReportInput): boolean {
    const key = subjectKey(report.subject);
    const existing = this.#current.get(key);
    if (existing !== undefined && sameReport(existing.report, report))
      return false;
    this.#current.set(key, { report, sentOnStream: 0 });
    this.#queued.add(key);
    return true;
  }

  /** Forgets every item whose key is not in `keys` (it left the intent). */
  retain(keys: ReadonlySet<string>): void {
    for (const key of [...this.#current.keys()])
      if (!keys.has(key)) {
        this.#current.delete(key);
        this.#queued.delete(key);
      }
  }

  /** The current statuses, in the order their items were first reported. */
  current(): StatusReportInput[] {
    return [...this.#current.values()].map((e) => e.report);
  }

  /**
   * Queues every current status for stream `streamId`: all of them (`force`, a resync), or those
   * not written on it yet (after welcome, when some may have gone out during the intent refresh).
   */
  queueAll(streamId: number, force: boolean): void {
    for (const [key, entry] of this.#current)
      if (force || entry.sentOnStream !== streamId) this.#queued.add(key);
  }

  /** Takes the next queued status to write, or undefined when none is left. */
  take():
    { readonly key: string; readonly report: StatusReportInput } | undefined {
    for (const key of this.#queued) {
      this.#queued.delete(key);
      const entry = this.#current.get(key);
      if (entry !== undefined) return { key, report: entry.report };
    }
    return undefined;
  }

  /** Records that the current status of `key` went out as `sequence` on stream `streamId`. */
  sent(key: string, sequence: number, streamId: number): void {
    const entry = this.#current.get(key);
    if (entry === undefined) return;
    entry.sentOnStream = streamId;
    this.#inFlight.set(sequence, { key, entry });
  }

  /** Settles the report `sequence`; undefined for an ack of nothing in flight. */
  acked(sequence: number, accepted: boolean): AckResult | undefined {
    const sent = this.#inFlight.get(sequence);
    if (sent === undefined) return undefined;
    this.#inFlight.delete(sequence);
    return {
      report: sent.entry.report,
      accepted,
      current: this.#current.get(sent.key) === sent.entry,
    };
  }

  /** How many reports await an ack. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * The stream ended: reports in flight will never be acked. Returns how many of them are still
   * current (they go out again on the next stream, with every other current status).
   */
  streamEnded(): number {
    let current = 0;
    for (const { key, entry } of this.#inFlight.values())
      if (this.#current.get(key) === entry) current++;
    this.#inFlight.clear();
    this.#queued.clear();
    return current;
  }
}

function sameReport(a: StatusReportInput, b: StatusReportInput): boolean {
  return (
    canonicalJson({ ...a, observedAtMs: 0 }) ===
    canonicalJson({ ...b, observedAtMs: 0 })
  );
}
