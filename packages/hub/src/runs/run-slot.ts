/**
 * One loaded run: its stored state and journal, its mailbox, whether a batch is being applied (a
 * run takes one batch at a time), and who watches it.
 */
import { cloneRun, isRunFinished, type Run, compact } from "@flotilla/core";
import type { Transition } from "@flotilla/protocol";
import type { Queued } from "./mailbox.js";
import type { RunFence, RunLog } from "./run-log.js";
import type { Fence } from "../intents/intent-fences.js";
import { fenceOf, runUnit } from "../leases/units.js";

/** A run as stored, with the revision it is stored at. */
export interface StoredRun {
  readonly run: Run;
  readonly revision: number;
  readonly strategyName?: string;
}

/** What a watcher hears after every stored change of a run. */
export interface RunUpdate {
  readonly run: Run;
  readonly revision: number;
  readonly transitions: readonly Transition[];
  /** The run was deleted (flotilla run delete): this is the last update. */
  readonly deleted?: boolean;
}

export type RunListener = (update: RunUpdate) => void;

/** An entry of a run's mailbox: commands are answered with the stored run. */
export type RunEntry = Queued<StoredRun>;

export interface Slot {
  /**
   * The run as stored, changed in place by each batch (see {@link RunLog}). While a batch's
   * journal entry is being written, readers see the batch applied; if the write fails the run is
   * read back from the store at once.
   */
  run: Run;
  log: RunLog;
  queue: RunEntry[];
  /** A batch is being applied: entries wait in the queue for the next one. */
  busy: boolean;
  /** The members' intents may lag the run: republish them on the next tick. */
  reconcile: boolean;
  /** A batch was applied but could not be stored: read the run back before the next one. */
  stale: boolean;
  /** The run was deleted: whatever is queued now is refused. */
  deleted: boolean;
  /** Called once no batch is being applied (see the driver's `exclusive`). */
  readonly freeWaiters: (() => void)[];
  retry?: NodeJS.Timeout;
  readonly listeners: Set<RunListener>;
  /**
   * With several replicas: the lease this replica drives the run under (absent: it follows the
   * owner's journal and forwards commands and reports). Without replicas the hub owns every run
   * and writes unfenced.
   */
  fence?: RunFence;
}

/** The fence of the slot's intent writes, when this replica drives it under a lease. */
export function intentFence(slot: Slot): Fence | undefined {
  return slot.fence === undefined
    ? undefined
    : fenceOf(runUnit(slot.run.name), slot.fence.epoch);
}

export function openSlot(run: Run, log: RunLog, reconcile: boolean): Slot {
  return {
    run,
    log,
    queue: [],
    busy: false,
    reconcile,
    stale: false,
    deleted: false,
    freeWaiters: [],
    listeners: new Set(),
  };
}

/** Started and not finished: it ticks, and its members' intents are kept published. */
export function isActive(run: Run): boolean {
  return run.state !== "NotStarted" && !isRunFinished(run.state);
}

/** Nothing waits and nothing is being applied or stored. */
export function isSettled(slot: Slot): boolean {
  return !slot.busy && slot.queue.length === 0 && !slot.log.busy;
}

/**
 * The stored run. `run` is the live object, which the next batch changes in place: callers use
 * it at once (every caller converts it synchronously); answers to commands get a copy.
 */
export function storedRun(slot: Slot, copy = false): StoredRun {
  const { strategyName } = slot.log;
  return {
    run: copy ? cloneRun(slot.run) : slot.run,
    revision: slot.log.seq,
    ...compact({ strategyName }),
  };
}
