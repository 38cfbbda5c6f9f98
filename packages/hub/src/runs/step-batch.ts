/**
 * The pure part of taking a batch from a run's mailbox: every entry is stepped with core's engine
 * at the same instant, an entry whose events are refused is left out whole, and what the accepted
 * entries did is collected: the events to journal, the transitions, the members started and the
 * intent changes core returned for them. No store, no intents, no logging: the caller does those
 * with the outcome, and publishes the intent changes as they are.
 */
import {
  appendIntentChanges,
  cloneRun,
  FlotillaError,
  step,
  type BundleRelease,
  type IntentChange,
  type IntentChanges,
  type Run,
  type RunAction,
  type RunEvent,
} from "@flotilla/core";
import type { Transition } from "@flotilla/protocol";
import type { Queued } from "./mailbox.js";

/** A metric gate core asks to measure. */
export type MeasureGate = Extract<RunAction, { type: "MeasureGate" }>;

/** Something the caller may want to log, in the order it happened. */
export type BatchNote<A> =
  /** An event was applied, but the engine set some of it aside (e.g. a stale report). */
  | { readonly type: "ignored"; readonly reasons: readonly string[] }
  /** The entry was refused whole; it changed nothing. */
  | {
      readonly type: "refused";
      readonly item: Queued<A>;
      readonly error: FlotillaError;
    };

export interface SteppedBatch<A> {
  /** The run after the batch (the one passed in, changed in place, unless a refusal rolled it back). */
  readonly run: Run;
  /** The entries applied, in order. */
  readonly accepted: readonly Queued<A>[];
  /** The events of the accepted entries, for the run's journal. */
  readonly journal: readonly RunEvent[];
  readonly transitions: readonly Transition[];
  /** The members the engine started, in order. */
  readonly starts: readonly string[];
  /** The metric gates to measure now (docs/engine.md#metric-gates), in order. */
  readonly measures: readonly MeasureGate[];
  /** The intent changes core returned for the accepted entries, by member, in order. */
  readonly intents: IntentChanges;
  /** Bundle runs: the releases core returned for the accepted entries, in order. */
  readonly releases: readonly BundleRelease[];
  readonly notes: readonly BatchNote<A>[];
}

/**
 * Steps `batch` on `run` in place at `nowMs`. Several events in one entry are all-or-nothing: a
 * copy is kept to go back to if one of them is refused.
 */
export function stepBatch<A>(
  run: Run,
  batch: readonly Queued<A>[],
  nowMs: number,
): SteppedBatch<A> {
  let draft = run;
  const accepted: Queued<A>[] = [];
  const journal: RunEvent[] = [];
  const transitions: Transition[] = [];
  const starts: string[] = [];
  const measures: MeasureGate[] = [];
  const intents = new Map<string, IntentChange[]>();
  const releases: BundleRelease[] = [];
  const notes: BatchNote<A>[] = [];
  for (const item of batch) {
    const backup = item.events.length > 1 ? cloneRun(draft) : undefined;
    const actions: RunAction[] = [];
    const changes = new Map<string, IntentChange[]>();
    const itemReleases: BundleRelease[] = [];
    let refused: FlotillaError | undefined;
    for (const event of item.events) {
      const result = step(draft, event, nowMs);
      if (result.ignored !== undefined) {
        notes.push({
          type: "ignored",
          reasons: result.ignored.map((r) => r.message),
        });
      }
      if (result.rejected !== undefined) {
        refused = new FlotillaError(
          result.rejected.code,
          result.rejected.message,
        );
        break;
      }
      actions.push(...result.actions);
      appendIntentChanges(changes, result.intents);
      itemReleases.push(...result.releases);
    }
    if (refused !== undefined) {
      if (backup !== undefined) draft = backup;
      notes.push({ type: "refused", item, error: refused });
      continue;
    }
    accepted.push(item);
    journal.push(...item.events);
    appendIntentChanges(intents, changes);
    releases.push(...itemReleases);
    for (const action of actions) {
      if (action.type === "Transitioned") transitions.push(action);
      else if (action.type === "MeasureGate") measures.push(action);
      else starts.push(action.member);
    }
  }
  return {
    run: draft,
    accepted,
    journal,
    transitions,
    starts,
    measures,
    intents,
    releases,
    notes,
  };
}
