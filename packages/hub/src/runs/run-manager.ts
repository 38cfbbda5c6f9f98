/**
 * The scheduler of staged update runs: it turns operator commands, agent reports, cluster changes
 * and time into core events, persists the run, then publishes the intent changes core returned
 * (core decides them; see run-driver.ts for the loop).
 *
 * Each run has a mailbox. Events are taken in batches: the batch is stepped on a copy of the run,
 * the copy is stored with compare-and-set on the store revision, and only then does the hub
 * publish intents and answer the commands in the batch. A hub killed at any point therefore either
 * lost the whole batch (nothing was published for it; commands got no answer) or has it stored,
 * in which case {@link RunManager.start} republishes what core's `runIntents` says the stored run
 * implies (members Running hold the run's upgrade in their intent). Republishing is harmless: an
 * unchanged intent keeps its generation, and agents treat the same generation as a no-op.
 */
import {
  FlotillaError,
  isRunFinished,
  locateMember,
  resolveRun,
  runWarnings,
  showValue,
  type PlanWarning,
  type RunPayload,
  type RunState,
  type UpdateStrategy,
  compact,
} from "@flotilla/core";
import type { StatusReport, Transition } from "@flotilla/protocol";
import type { Logger } from "pino";
import type { ClusterChange } from "../clusters/cluster-registry.js";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import type { IntentWriter } from "../intents/intent-writer.js";
import { nameProblem } from "../names.js";
import type { StateStore } from "../store/state-store.js";
import { createRunDriver, notFound } from "./run-driver.js";
import {
  clusterEvent,
  reachabilityEvents,
  reportEvent,
  type RunCommand,
} from "./run-events.js";
import { republishRun } from "./run-intents.js";
import { RunLog } from "./run-log.js";
import {
  isActive,
  openSlot,
  storedRun,
  type RunListener,
  type Slot,
  type StoredRun,
} from "./run-slot.js";

export type { RunCommand } from "./run-events.js";
export type { RunListener, RunUpdate, StoredRun } from "./run-slot.js";

export interface CreateRunInput {
  readonly name: string;
  readonly strategy?: UpdateStrategy;
  readonly strategyName?: string;
  readonly payload: RunPayload;
  readonly progressDeadlineSeconds?: number;
}

export interface RunManagerDeps {
  readonly store: StateStore;
  readonly intents: IntentWriter;
  readonly directory: ClusterDirectory;
  readonly now: () => number;
  readonly logger: Logger;
  /** Called for every transition (metrics). */
  readonly onTransition?: (transition: Transition) => void;
  /** Delay before retrying a batch the store could not take (ms). */
  readonly retryDelayMs?: number;
  /**
   * Called when a member's Ready report started other members: seconds from the report's arrival
   * to their intents being published (metrics).
   */
  readonly onReportToIntent?: (seconds: number) => void;
}

export interface RunManager {
  start(): Promise<void>;
  stop(): void;
  create(
    input: CreateRunInput,
  ): Promise<StoredRun & { warnings: PlanWarning[] }>;
  get(name: string): StoredRun;
  list(states?: readonly RunState[]): StoredRun[];
  /** Applies operator commands together (all or none); refusals are FlotillaErrors. */
  command(name: string, ...commands: RunCommand[]): Promise<StoredRun>;
  /** An agent's counted report on the upgrade of run `runName`. */
  memberReport(cluster: string, runName: string, report: StatusReport): void;
  clusterChanged(change: ClusterChange): void;
  /** Time passed: ticks every active run, retries unpublished intents. */
  tick(): void;
  watch(name: string, listener: RunListener): () => void;
  /** Resolves when every mailbox is empty (tests, shutdown). */
  idle(): Promise<void>;
}

export function createRunManager(deps: RunManagerDeps): RunManager {
  const slots = new Map<string, Slot>();
  const log = deps.logger;
  const driver = createRunDriver({
    store: deps.store,
    intents: deps.intents,
    now: deps.now,
    logger: log,
    retryDelayMs: deps.retryDelayMs ?? 1000,
    onTransition: deps.onTransition,
    onReportToIntent: deps.onReportToIntent,
    slots: () => slots.values(),
  });

  const slotOf = (name: string): Slot => {
    const slot = slots.get(name);
    if (slot === undefined) throw notFound(name);
    return slot;
  };

  /**
   * Republishes the intents of a run whose members' intents may lag. False when that failed: the
   * run is marked to be reconciled again on the next tick.
   */
  const reconcile = (slot: Slot): Promise<boolean> =>
    republishRun(slot.run, deps.intents).then(
      () => true,
      (error: unknown) => {
        slot.reconcile = true;
        log.warn(
          { run: slot.run.name, err: error },
          "cannot republish intents yet",
        );
        return false;
      },
    );

  return {
    async start() {
      driver.resume();
      for (const { run, log: runLog } of await RunLog.loadAll(
        deps.store,
        log,
      )) {
        slots.set(run.name, openSlot(run, runLog, isActive(run)));
      }
      for (const slot of slots.values()) {
        if (slot.reconcile && (await reconcile(slot))) slot.reconcile = false;
      }
      for (const slot of slots.values()) {
        if (isRunFinished(slot.run.state)) continue;
        for (const event of reachabilityEvents(slot.run, deps.directory)) {
          driver.enqueue(slot, { events: [event] });
        }
      }
    },

    stop() {
      driver.stop();
    },

    async create(input) {
      const problem = nameProblem(input.name, "name");
      if (problem !== undefined)
        throw FlotillaError.invalid("update run", [problem]);
      if (slots.has(input.name)) {
        throw new FlotillaError(
          "already_exists",
          `Update run ${showValue(input.name)} already exists`,
        );
      }
      if (input.payload.kind !== "upgrade") {
        throw new FlotillaError(
          "failed_precondition",
          "Staged runs of bundle revisions are not supported yet: roll bundles out with their rolloutStrategy (flotilla bundle apply)",
        );
      }
      const clusters = deps.directory.clusters();
      const resolved = resolveRun({
        name: input.name,
        ...compact({ strategy: input.strategy }),
        clusters,
        payload: input.payload,
        createdAtMs: deps.now(),
        ...compact({ progressDeadlineSeconds: input.progressDeadlineSeconds }),
        // Agents already unreachable hold their members from the start; later changes are events.
        isUnreachable: (cluster) => deps.directory.isUnreachable(cluster),
      });
      if (!resolved.ok)
        throw FlotillaError.invalid("update run", resolved.problems);
      const run = resolved.value;
      const slot = openSlot(
        run,
        await RunLog.create(deps.store, run, input.strategyName),
        false,
      );
      slots.set(run.name, slot);
      return { ...storedRun(slot, true), warnings: runWarnings(run, clusters) };
    },

    get(name) {
      return storedRun(slotOf(name));
    },

    list(states) {
      return [...slots.values()]
        .filter(
          (s) =>
            states === undefined ||
            states.length === 0 ||
            states.includes(s.run.state),
        )
        .sort((a, b) => (a.run.name < b.run.name ? -1 : 1))
        .map((slot) => storedRun(slot));
    },

    command(name, ...commands) {
      const slot = slotOf(name);
      return new Promise<StoredRun>((resolve, reject) => {
        driver.enqueue(slot, { events: commands, resolve, reject });
      });
    },

    memberReport(cluster, runName, report) {
      const event = reportEvent(cluster, report);
      if (event === undefined) return;
      const slot = slots.get(runName);
      if (slot === undefined || isRunFinished(slot.run.state)) return;
      // The arrival of a Ready report is timed: it may start other members (metrics).
      driver.enqueue(
        slot,
        event.type === "MemberSucceeded"
          ? { events: [event], receivedAtMs: [performance.now()] }
          : { events: [event] },
      );
    },

    clusterChanged(change) {
      const event = clusterEvent(change);
      if (event === undefined) return;
      for (const slot of slots.values()) {
        if (isRunFinished(slot.run.state)) continue;
        if (locateMember(slot.run, change.cluster) === undefined) continue;
        driver.enqueue(slot, { events: [event] });
      }
    },

    tick() {
      for (const slot of slots.values()) {
        if (!isActive(slot.run)) continue;
        if (slot.reconcile && !slot.busy) {
          slot.reconcile = false;
          void reconcile(slot);
        }
        // Only when something is due (deadline, wait, gate, window): a Tick before the run's
        // wake time changes nothing, and would cost a stored batch.
        const wake = slot.run.wakeAtMs;
        if (wake === undefined || deps.now() < wake) continue;
        if (!slot.queue.some((q) => q.events[0]?.type === "Tick")) {
          driver.enqueue(slot, { events: [{ type: "Tick" }] });
        }
      }
    },

    watch(name, listener) {
      const slot = slotOf(name);
      slot.listeners.add(listener);
      return () => slot.listeners.delete(listener);
    },

    idle() {
      return driver.idle();
    },
  };
}
