/**
 * The loop that applies a run's mailbox, one batch at a time: take a batch, step it with core (see
 * step-batch.ts), append it to the run's journal, and only then publish the intent changes core
 * returned, answer the commands in it and tell the watchers. The hub decides no intent itself. A
 * batch the store does not take changed nothing: commands get the error, observations wait, the
 * run is read back and the batch is retried after a delay.
 */
import { FlotillaError, isRunFinished, showValue } from "@flotilla/core";
import type { Transition } from "@flotilla/protocol";
import type { Logger } from "pino";
import type { IntentWriter } from "../intents/intent-writer.js";
import type { StateStore } from "../store/state-store.js";
import { takeBatch } from "./mailbox.js";
import { publishChanges } from "./run-intents.js";
import { isFenced as isIntentFenced } from "../intents/intent-fences.js";
import { FencedError, isFenced, RunLog } from "./run-log.js";
import {
  intentFence,
  isSettled,
  storedRun,
  type RunEntry,
  type RunUpdate,
  type Slot,
  type StoredRun,
} from "./run-slot.js";
import {
  stepBatch,
  type MeasureGate,
  type SteppedBatch,
} from "./step-batch.js";
import { bundleStateEvent, type RunBundles } from "./run-bundles.js";

export interface RunDriverDeps {
  readonly store: StateStore;
  readonly intents: IntentWriter;
  readonly now: () => number;
  readonly logger: Logger;
  /** Called for every transition (metrics). */
  readonly onTransition?: ((transition: Transition) => void) | undefined;
  /** Delay before retrying a batch the store could not take (ms). */
  readonly retryDelayMs: number;
  /** Seconds from a Ready report's arrival to the intents it started being published (metrics). */
  readonly onReportToIntent?: ((seconds: number) => void) | undefined;
  /** Every loaded run, to tell when all are idle. */
  readonly slots: () => Iterable<Slot>;
  /** A newer owner has written the run: this replica must stop driving it. */
  readonly onDeposed?: (slot: Slot) => void;
  /** Runs of bundle revisions write their releases here (run-bundles.ts). */
  readonly bundles?: RunBundles | undefined;
  /** A run reached Completed or Skipped in this batch. */
  readonly onFinished?: (slot: Slot) => void;
  /**
   * Measure a metric gate core asked for (docs/engine.md#metric-gates): ask its query and queue
   * what it gave as a `GateMeasured` event. Called once the batch is stored.
   */
  readonly measure?: (slot: Slot, action: MeasureGate) => void;
}

export interface RunDriver {
  /** Queues an entry and applies the mailbox unless a batch is already being applied. */
  enqueue(slot: Slot, entry: RunEntry): void;
  /** Lets mailboxes be applied (again). */
  resume(): void;
  /** Stops applying mailboxes and cancels pending retries. */
  stop(): void;
  /** Resolves when every mailbox is empty and nothing is being stored. */
  idle(): Promise<void>;
  /**
   * Runs `work` between two batches of the slot: no batch is applied and no snapshot written while
   * it runs; entries queued meanwhile wait for the next batch.
   */
  exclusive<T>(slot: Slot, work: () => Promise<T>): Promise<T>;
}

/** Completed or Skipped: the run changes no more. */
function isFinal(state: string): boolean {
  return state === "Completed" || state === "Skipped";
}

export function notFound(name: string): FlotillaError {
  return new FlotillaError(
    "not_found",
    `Update run ${showValue(name)} does not exist`,
  );
}

export function createRunDriver(deps: RunDriverDeps): RunDriver {
  const log = deps.logger;
  const idleWaiters: (() => void)[] = [];
  let stopped = false;

  const checkIdle = (): void => {
    for (const slot of deps.slots()) {
      if (!isSettled(slot)) return;
    }
    for (const waiter of idleWaiters.splice(0)) waiter();
  };

  /** Stores a snapshot in the background (the batch is already safe in the journal). */
  const takeSnapshot = (slot: Slot, finished: boolean): void => {
    slot.log
      .snapshot(slot.run, finished, slot.fence)
      .catch((error: unknown) => {
        log.warn(
          { run: slot.run.name, err: error },
          "cannot store a snapshot of the run; its journal keeps it safe",
        );
      })
      .finally(checkIdle);
  };

  /** Reads the run back after a batch that was applied in memory but not stored. */
  const reload = async (slot: Slot): Promise<void> => {
    await slot.log.settled();
    const loaded = await RunLog.load(deps.store, slot.run.name, log);
    if (loaded === undefined) throw notFound(slot.run.name);
    slot.run = loaded.run;
    slot.log = loaded.log;
    slot.stale = false;
  };

  const scheduleRetry = (slot: Slot): void => {
    if (slot.retry !== undefined || stopped) return;
    slot.retry = setTimeout(() => {
      slot.retry = undefined;
      if (!slot.busy && slot.queue.length > 0) void drain(slot);
    }, deps.retryDelayMs);
  };

  /** Logs what the engine set aside and answers the refused commands. */
  const settleNotes = (
    slot: Slot,
    notes: SteppedBatch<StoredRun>["notes"],
  ): void => {
    for (const note of notes) {
      if (note.type === "ignored") {
        log.debug(
          { run: slot.run.name, reasons: note.reasons },
          "reports not applied",
        );
      } else if (note.item.reject === undefined) {
        log.debug(
          {
            run: slot.run.name,
            events: note.item.events.map((e) => e.type),
            reason: note.error.message,
          },
          "event not applied",
        );
      } else note.item.reject(note.error);
    }
  };

  /**
   * Writes the batch's journal entry. False when the store did not take it: the batch is undone
   * (commands get the error, observations go back to the mailbox) and retried later.
   */
  const store = async (
    slot: Slot,
    nowMs: number,
    batch: SteppedBatch<StoredRun>,
  ): Promise<boolean> => {
    if (batch.journal.length === 0) return true;
    try {
      await slot.log.append(nowMs, batch.journal, slot.fence);
    } catch (error) {
      log.warn(
        { run: slot.run.name, err: error },
        "cannot store run; retrying",
      );
      slot.stale = true;
      await reload(slot).catch(() => undefined);
      // A newer owner wrote the run: this replica was deposed and stops driving it.
      const deposed =
        isFenced(error) ||
        (slot.fence !== undefined && slot.log.epoch > slot.fence.epoch);
      const answer =
        deposed && !isFenced(error)
          ? new FencedError(
              slot.run.name,
              slot.fence?.epoch ?? 0,
              slot.log.epoch,
            )
          : error;
      for (const item of batch.accepted) item.reject?.(answer);
      if (deposed) {
        deps.onDeposed?.(slot);
        return false;
      }
      const observations = batch.accepted.filter((i) => i.reject === undefined);
      slot.queue.unshift(...observations);
      scheduleRetry(slot);
      return false;
    }
    if (isRunFinished(slot.run.state)) takeSnapshot(slot, true);
    else if (slot.log.wantsSnapshot) takeSnapshot(slot, false);
    return true;
  };

  /**
   * After the batch is stored: publish the intent changes core returned for it. A member whose
   * intent cannot be written marks the run to be republished on the next tick.
   */
  const publish = async (
    slot: Slot,
    batch: SteppedBatch<StoredRun>,
  ): Promise<void> => {
    let deposed = false;
    const failedWrite = (member: string, error: unknown): void => {
      if (isIntentFenced(error)) {
        deposed = true;
        return;
      }
      slot.reconcile = true;
      log.warn(
        { run: slot.run.name, member, err: error },
        "cannot publish intent; it is republished on the next tick",
      );
    };
    await publishChanges(
      batch.intents,
      deps.intents,
      failedWrite,
      intentFence(slot),
    );
    if (batch.releases.length > 0 && deps.bundles !== undefined) {
      const { bundles } = deps;
      const failed = await bundles.releaseForRun(
        batch.releases,
        intentFence(slot),
      );
      for (const [member, error] of failed) failedWrite(member, error);
      // A cluster whose intent already held the revision reports nothing new: what its agent
      // last reported of it counts now (docs/semantics.md#staged-bundle-runs).
      for (const release of batch.releases) {
        if (release.again || failed.has(release.member)) continue;
        const state = bundles.observed(release.bundle, release.member);
        const event =
          state === undefined
            ? undefined
            : bundleStateEvent(slot.run, release.member, state);
        if (event !== undefined) slot.queue.push({ events: [event] });
      }
    }
    // A newer owner wrote a member's intent: this replica no longer owns the run.
    if (deposed) deps.onDeposed?.(slot);
    else for (const action of batch.measures) deps.measure?.(slot, action);
    if (batch.starts.length > 0 && deps.onReportToIntent !== undefined) {
      const published = performance.now();
      for (const item of batch.accepted) {
        for (const receivedAtMs of item.receivedAtMs ?? [])
          deps.onReportToIntent((published - receivedAtMs) / 1000);
      }
    }
  };

  /** After the batch is published: answer its commands and tell watchers. */
  const announce = (slot: Slot, batch: SteppedBatch<StoredRun>): void => {
    const { accepted, transitions } = batch;
    for (const t of transitions) deps.onTransition?.(t);
    if (accepted.some((item) => item.resolve !== undefined)) {
      const stored = storedRun(slot, true);
      for (const item of accepted) item.resolve?.(stored);
    }
    if (transitions.length > 0 || accepted.length > 0) {
      const update: RunUpdate = {
        run: slot.run,
        revision: slot.log.seq,
        transitions,
      };
      for (const listener of slot.listeners) {
        try {
          listener(update);
        } catch (error) {
          log.error({ err: error }, "run listener failed");
        }
      }
    }
  };

  const drain = async (slot: Slot): Promise<void> => {
    slot.busy = true;
    try {
      while (slot.queue.length > 0 && !stopped) {
        if (slot.stale) {
          try {
            await reload(slot);
          } catch (error) {
            log.warn(
              { run: slot.run.name, err: error },
              "cannot read the run back; retrying",
            );
            scheduleRetry(slot);
            return;
          }
        }
        const entries = takeBatch(slot.queue);
        const nowMs = deps.now();
        const wasFinished = isFinal(slot.run.state);
        // Stepped in place: the journal entry is small whatever the size of the run.
        const batch = stepBatch(slot.run, entries, nowMs);
        slot.run = batch.run;
        settleNotes(slot, batch.notes);
        if (!(await store(slot, nowMs, batch))) return;
        await publish(slot, batch);
        announce(slot, batch);
        if (!wasFinished && isFinal(slot.run.state)) deps.onFinished?.(slot);
      }
    } finally {
      slot.busy = false;
      for (const waiter of slot.freeWaiters.splice(0)) waiter();
      checkIdle();
    }
  };

  /** Resolves once no batch of the slot is being applied. */
  const free = (slot: Slot): Promise<void> =>
    new Promise((resolve) => {
      if (!slot.busy) resolve();
      else slot.freeWaiters.push(resolve);
    });

  return {
    enqueue(slot, entry) {
      if (slot.deleted) {
        entry.reject?.(notFound(slot.run.name));
        return;
      }
      slot.queue.push(entry);
      if (!slot.busy) void drain(slot);
    },
    resume() {
      stopped = false;
    },
    stop() {
      stopped = true;
      for (const slot of deps.slots()) {
        if (slot.retry !== undefined) clearTimeout(slot.retry);
        slot.retry = undefined;
      }
    },
    idle() {
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        checkIdle();
      });
    },
    async exclusive(slot, work) {
      while (slot.busy) await free(slot);
      slot.busy = true;
      try {
        await slot.log.settled();
        return await work();
      } finally {
        slot.busy = false;
        for (const waiter of slot.freeWaiters.splice(0)) waiter();
        if (slot.queue.length > 0 && !stopped) void drain(slot);
        checkIdle();
      }
    },
  };
}
