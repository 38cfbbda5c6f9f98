/**
 * A run's mailbox: what waits to be applied to the run, and how a batch is taken from it. Agents'
 * reports on members that arrive while the previous batch is being stored are applied as one
 * `MembersReported` event, so the engine counts every outcome of the batch before it refills a
 * freed slot (docs/semantics.md#simultaneous-outcomes); the journal keeps that one event, and a
 * replay decides exactly as the hub did.
 */
import type { MemberOutcome, RunEvent } from "@flotilla/core";

/** One entry of a run's mailbox; commands are answered with `A`. */
export interface Queued<A> {
  /** Applied together: if one is refused, none is. */
  readonly events: readonly RunEvent[];
  readonly resolve?: (answer: A) => void;
  readonly reject?: (error: unknown) => void;
  /** `performance.now()` when each agent report in `events` arrived (metrics). */
  readonly receivedAtMs?: readonly number[];
}

function outcomeOf<A>(item: Queued<A>): MemberOutcome | undefined {
  if (item.resolve !== undefined || item.events.length !== 1) return undefined;
  const [event] = item.events;
  return event?.type === "MemberSucceeded" ||
    event?.type === "MemberFailed" ||
    event?.type === "MemberDeferred"
    ? event
    : undefined;
}

/**
 * Takes everything queued. Two or more member reports become one `MembersReported` entry at the
 * place of the first: everything in one batch happens at the same instant, so this only decides
 * that outcomes are counted together, never which event sees which state of another report.
 */
export function takeBatch<A>(queue: Queued<A>[]): Queued<A>[] {
  const batch = queue.splice(0);
  const reports: MemberOutcome[] = [];
  const receivedAtMs: number[] = [];
  let first = -1;
  batch.forEach((item, i) => {
    const outcome = outcomeOf(item);
    if (outcome === undefined) return;
    if (first === -1) first = i;
    reports.push(outcome);
    receivedAtMs.push(...(item.receivedAtMs ?? []));
  });
  if (reports.length < 2) return batch;
  const merged: Queued<A> = {
    events: [{ type: "MembersReported", reports }],
    ...(receivedAtMs.length === 0 ? {} : { receivedAtMs }),
  };
  return batch.flatMap((item, i) =>
    i === first ? [merged] : outcomeOf(item) === undefined ? [item] : [],
  );
}
