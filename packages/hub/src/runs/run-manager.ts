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
 *
 * With several hub replicas (docs/high-availability.md) a run is driven only by the replica that
 * holds its lease ({@link RunManager.acquire}): its journal writes are fenced with the lease's
 * epoch. Every other replica follows the run's journal in the store, so it answers reads and
 * watches, and forwards commands and agent reports to the owner ({@link RunReplication}).
 */
import {
  FlotillaError,
  isRunFinished,
  locateMember,
  resolveRun,
  runWarnings,
  showValue,
  type PlanWarning,
  type QueryOutcome,
  type RunOrigin,
  type MemberState,
  type Run,
  type RunEvent,
  type RunPayload,
  type RunState,
  type UpdateStrategy,
  compact,
  step,
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
import { bundleReportEvent, type RunBundles } from "./run-bundles.js";
import type { FleetCatalogue } from "../catalogue/fleet-catalogue.js";
import {
  availableEvent,
  runAvailable,
  type ReportsCatalogue,
} from "./run-available.js";
import { dropRecords, removeRun } from "./run-removal.js";
import type { MeasureGate } from "./step-batch.js";
import { isFenced as isIntentFenced } from "../intents/intent-fences.js";
import { RUN_LOG, RunLog, type RunFence } from "./run-log.js";
import { decodeKeyToken } from "../store/keys.js";
import { isRevisionConflict } from "../store/state-store.js";
import {
  intentFence,
  isActive,
  openSlot,
  storedRun,
  type RunListener,
  type RunUpdate,
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
  /** The auto-upgrade profile the run is made from (kept on the run). */
  readonly origin?: RunOrigin;
  /**
   * A run the hub makes of a staged bundle's new revision (docs/semantics.md#staged-bundles): the
   * bundle's earlier unfinished runs do not stop it (the maker stops them: superseded).
   */
  readonly supersede?: boolean;
}

/**
 * How a replica reaches the others (absent: a single hub that owns every run). The NATS adapter
 * is in packages/hub/src/leases/run-forwarding.ts.
 */
export interface RunReplication {
  /** Sends commands to the run's owner; resolves with the revision they were stored at. */
  forwardCommand(
    name: string,
    commands: readonly RunCommand[],
  ): Promise<number>;
  /** Sends an agent's report on a member to the run's owner. */
  forwardReport(cluster: string, run: string, report: StatusReport): void;
  /** A run was created here: resolves once it has an owner (so a command right after finds one). */
  created(run: string): Promise<void>;
  /** Asks the run's owner to delete it; resolves once it has. */
  forwardDelete(name: string): Promise<void>;
}

/**
 * A started run that has not finished (Running, Pending at a gate or wait, Stopping): members are
 * in flight or about to be, so it cannot be deleted, only stopped (docs/cli.md#runs).
 */
export function isInFlight(state: RunState): boolean {
  return state !== "NotStarted" && !isRunFinished(state);
}

/** Runs in these states change no more; nobody needs to own them. */
export function needsOwner(run: { readonly state: RunState }): boolean {
  return run.state !== "Completed" && run.state !== "Skipped";
}

/** A run of a bundle revision whose strategy selects none of the bundle's targets is refused. */
function refuseNoMembers(
  run: Run,
  payload: Extract<RunPayload, { kind: "bundle" }>,
): void {
  if (run.stages.some((stage) => stage.memberCount > 0)) return;
  throw FlotillaError.invalid("update run", [
    {
      path: "strategy",
      message:
        run.unassigned.length === 0
          ? `bundle ${showValue(payload.bundle)} has no targets: the run would have no members`
          : `selects none of the ${String(run.unassigned.length)} targets of bundle ${showValue(payload.bundle)} (${run.unassigned.slice(0, 5).join(", ")}${run.unassigned.length > 5 ? ", ..." : ""})`,
      value: payload.bundle,
    },
  ]);
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
  /** Several replicas share the runs (see {@link RunReplication}). */
  readonly replication?: RunReplication;
  /**
   * What the fleet can upgrade to (docs/engine.md#the-version-catalogue): runs are created with
   * it, and its changes reach running runs as `AvailableVersionsChanged`. Absent: runs get no
   * availability data (the engine then assumes every target is offered).
   */
  readonly catalogue?: FleetCatalogue;
  /** Whether a cluster's agent reported a catalogue (default: none did). */
  readonly reportsCatalogue?: ReportsCatalogue;
  /** How long a forwarded command waits for this replica to see its result; default 10 s. */
  readonly forwardTimeoutMs?: number;
  /**
   * The bundles, for staged runs of bundle revisions (docs/semantics.md#staged-bundle-runs);
   * absent: such runs are refused.
   */
  readonly bundles?: RunBundles;
  /**
   * Asks a metric gate's query (docs/engine.md#metric-gates): Prometheus, as the hub is configured.
   * Never rejects: a failure is an outcome with its reason. Absent: every measurement is
   * inconclusive ("this hub has no Prometheus").
   */
  readonly measureGate?: (
    run: string,
    action: MeasureGate,
  ) => Promise<QueryOutcome>;
}

export interface RunManager {
  start(): Promise<void>;
  stop(): void;
  create(
    input: CreateRunInput,
  ): Promise<StoredRun & { warnings: PlanWarning[] }>;
  get(name: string): StoredRun;
  /** Where `cluster` is in run `name` (stage, group, member state); undefined if not a member. */
  memberOf(
    name: string,
    cluster: string,
  ): { stage: string; group: string; state: MemberState } | undefined;
  list(states?: readonly RunState[]): StoredRun[];
  /**
   * A newer run of the same bundle took over (docs/semantics.md#staged-bundles): run `name` stops
   * at once, its members in flight Skipped with reason Superseded (their clusters keep what they
   * were given until the newer run reaches them). Nothing when it is not in flight. On a replica
   * that does not own the run, only the stop is forwarded; its members in flight then finish.
   */
  supersede(
    name: string,
    by: string,
    actor: { readonly actor: string; readonly reason: string },
  ): Promise<void>;
  /**
   * The run's bundle was rolled back to `revision` (docs/semantics.md#rolling-back-a-bundle): as
   * {@link supersede}, with its members in flight Skipped with reason RolledBack.
   */
  rolledBack(
    name: string,
    revision: string,
    actor: { readonly actor: string; readonly reason: string },
  ): Promise<void>;
  /** Applies operator commands together (all or none); refusals are FlotillaErrors. */
  command(name: string, ...commands: RunCommand[]): Promise<StoredRun>;
  /**
   * Deletes a run that is not in flight, with everything stored for it; resolves with the state it
   * had. Running, Pending or Stopping: FAILED_PRECONDITION. Members' intents stay as the run left them.
   */
  delete(name: string): Promise<RunState>;
  /** Deletes a run for another replica; refused unless this replica owns the run. */
  deleteAsOwner(name: string): Promise<RunState>;
  /** An agent's counted report on the upgrade (or the bundle) of run `runName`. */
  memberReport(cluster: string, runName: string, report: StatusReport): void;
  /**
   * An agent's counted report on a bundle: handed to the run driving the bundle, if any
   * (docs/semantics.md#staged-bundle-runs).
   */
  bundleReport(cluster: string, report: StatusReport): void;
  clusterChanged(change: ClusterChange): void;
  /** Time passed: ticks every active run, retries unpublished intents. */
  tick(): void;
  watch(name: string, listener: RunListener): () => void;
  /** Resolves when every mailbox is empty (tests, shutdown). */
  idle(): Promise<void>;
  /** The runs that need an owner (not Completed or Skipped), by name. */
  ownable(): string[];
  /**
   * This replica owns `name` under `fence` from now on: the run is read back, the takeover is
   * journaled (fencing out the previous owner) and its intents are republished.
   */
  acquire(name: string, fence: RunFence): Promise<void>;
  /** Stops driving `name` at once (lease lost): queued commands fail, queued reports are dropped. */
  lose(name: string): void;
  /** Resolves once nothing is being applied to `name`, then stops driving it (lease handed over). */
  release(name: string): Promise<void>;
  /** Whether this replica drives `name` now. */
  owns(name: string): boolean;
  /** Applies commands forwarded by another replica; refused unless this replica owns the run. */
  commandAsOwner(
    name: string,
    commands: readonly RunCommand[],
  ): Promise<number>;
  /** Follows runs written by other replicas until `signal` aborts. */
  follow(signal: AbortSignal): Promise<void>;
}

export function createRunManager(deps: RunManagerDeps): RunManager {
  const slots = new Map<string, Slot>();
  const log = deps.logger;
  /**
   * The unfinished loaded runs of each bundle, by bundle: the one driving it, and earlier ones a
   * newer revision superseded (docs/semantics.md#staged-bundles) whose members in flight still
   * report on the revision they were given.
   */
  const driving = new Map<string, Set<string>>();
  /** Keeps {@link driving} in line with `slot` (a run of a bundle revision counts until it ends). */
  const track = (slot: Slot): void => {
    const { payload, name } = slot.run;
    if (payload.kind !== "bundle") return;
    const runs = driving.get(payload.bundle) ?? new Set<string>();
    if (!slot.deleted && needsOwner(slot.run)) runs.add(name);
    else runs.delete(name);
    if (runs.size > 0) driving.set(payload.bundle, runs);
    else driving.delete(payload.bundle);
  };
  /** Whether some bundle's record still names a run that no longer drives it (to hand back). */
  let driversDirty = false;
  /**
   * Hands every bundle whose driving run ended (Completed, Skipped) or is gone back to its
   * partition rollout (docs/semantics.md#staged-bundle-runs). Failed and Stopped runs keep it.
   */
  const settleDrivers = async (): Promise<void> => {
    const { bundles } = deps;
    if (bundles === undefined) return;
    driversDirty = false;
    for (const { bundle, run, pending } of bundles.drivers()) {
      // The run of a staged bundle's revision the hub has yet to make: its maker's.
      if (pending === true) continue;
      try {
        // A run this replica has not loaded yet (another replica created it) is read first.
        const slot = slots.get(run) ?? (await readBack(run));
        if (slot !== undefined && needsOwner(slot.run)) continue;
        if (slot !== undefined && !owned(slot)) continue;
        await bundles.letGo(
          bundle,
          run,
          slot === undefined ? "deleted" : "completed",
        );
      } catch (error) {
        driversDirty = true;
        log.warn(
          { bundle, run, err: error },
          "cannot hand the bundle back to its partition rollout yet",
        );
      }
    }
  };
  const { replication } = deps;
  /** Whether this replica drives the run now. */
  const owned = (slot: Slot): boolean =>
    replication === undefined || slot.fence !== undefined;

  const tell = (slot: Slot, update: RunUpdate): void => {
    for (const listener of slot.listeners) {
      try {
        listener(update);
      } catch (error) {
        log.error({ err: error }, "run listener failed");
      }
    }
  };

  const lose = (name: string): void => {
    const slot = slots.get(name);
    if (slot?.fence === undefined) return;
    slot.fence = undefined;
    if (slot.retry !== undefined) clearTimeout(slot.retry);
    slot.retry = undefined;
    const refusal = new FlotillaError(
      "unavailable",
      `This hub replica no longer owns update run ${showValue(name)}; retry`,
    );
    // Reports are dropped: the next owner asks every replica for them again.
    for (const item of slot.queue.splice(0)) item.reject?.(refusal);
  };

  const driver = createRunDriver({
    store: deps.store,
    intents: deps.intents,
    now: deps.now,
    logger: log,
    retryDelayMs: deps.retryDelayMs ?? 1000,
    onTransition: deps.onTransition,
    onReportToIntent: deps.onReportToIntent,
    slots: () => slots.values(),
    bundles: deps.bundles,
    onFinished: (slot) => {
      track(slot);
      void settleDrivers();
    },
    measure: (slot, action) => {
      const asked =
        deps.measureGate?.(slot.run.name, action) ??
        Promise.resolve<QueryOutcome>({
          ok: false,
          reason:
            "this hub has no Prometheus to ask (start it with --prometheus-url)",
        });
      void asked
        .catch((error: unknown): QueryOutcome => ({
          ok: false,
          reason: error instanceof Error ? error.message : String(error),
        }))
        .then((outcome) => {
          // Deleted, finished or handed over meanwhile: the measurement is not counted.
          if (slot.deleted || !owned(slot) || slots.get(slot.run.name) !== slot)
            return;
          driver.enqueue(slot, {
            events: [{ type: "GateMeasured", gate: action.gate, outcome }],
          });
        });
    },
    onDeposed: (slot) => {
      log.warn(
        {
          run: slot.run.name,
          epoch: slot.fence?.epoch,
          stored: slot.log.epoch,
        },
        "a newer owner has written the run: this replica stops driving it",
      );
      lose(slot.run.name);
    },
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
    republishRun(slot.run, deps.intents, intentFence(slot), deps.bundles).then(
      () => true,
      (error: unknown) => {
        if (isIntentFenced(error)) {
          lose(slot.run.name);
          return false;
        }
        slot.reconcile = true;
        log.warn(
          { run: slot.run.name, err: error },
          "cannot republish intents yet",
        );
        return false;
      },
    );

  /** Reads `name` back from the store into its slot (a new slot if there is none). */
  const readBack = async (name: string): Promise<Slot | undefined> => {
    const loaded = await RunLog.load(deps.store, name, log);
    if (loaded === undefined) return undefined;
    const slot = slots.get(name);
    if (slot === undefined) {
      const opened = openSlot(loaded.run, loaded.log, false);
      slots.set(name, opened);
      track(opened);
      return opened;
    }
    slot.run = loaded.run;
    slot.log = loaded.log;
    slot.stale = false;
    track(slot);
    tell(slot, { run: slot.run, revision: slot.log.seq, transitions: [] });
    return slot;
  };

  /** Resolves once this replica's copy of the run is at `revision` (it follows the owner). */
  const reach = async (slot: Slot, revision: number): Promise<void> => {
    if (slot.log.seq >= revision) return;
    const timeoutMs = deps.forwardTimeoutMs ?? 10_000;
    let stopListening = (): void => undefined;
    const reached = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        resolve(false);
      }, timeoutMs);
      const listener = (update: RunUpdate): void => {
        if (update.revision < revision) return;
        clearTimeout(timer);
        resolve(true);
      };
      slot.listeners.add(listener);
      stopListening = () => slot.listeners.delete(listener);
    });
    const inTime = await reached.finally(() => {
      stopListening();
    });
    if (!inTime) await readBack(slot.run.name);
  };

  /** The run is gone from the store: forget it and tell its watchers. */
  const forget = (slot: Slot): void => {
    slot.deleted = true;
    if (slot.retry !== undefined) clearTimeout(slot.retry);
    slot.retry = undefined;
    if (slots.get(slot.run.name) === slot) slots.delete(slot.run.name);
    track(slot);
    const gone = notFound(slot.run.name);
    for (const item of slot.queue.splice(0)) item.reject?.(gone);
    tell(slot, {
      run: slot.run,
      revision: slot.log.seq,
      transitions: [],
      deleted: true,
    });
    slot.listeners.clear();
  };

  /** A run with metric gates on a hub that cannot measure them is refused (docs/engine.md#metric-gates). */
  const refuseUnmeasurable = (run: Run): void => {
    if (deps.measureGate !== undefined) return;
    const metric = run.stages.flatMap((stage) =>
      [
        ...stage.beforeGates,
        ...stage.afterGates,
        ...stage.groups.flatMap((g) => [...g.beforeGates, ...g.afterGates]),
      ].filter((g) => g.type === "Metric"),
    );
    if (metric.length === 0) return;
    throw FlotillaError.invalid("update run", [
      {
        path: "strategy",
        message: `has metric gates (${metric.map((g) => g.id).join(", ")}), but this hub has no Prometheus to measure them: start it with --prometheus-url`,
      },
    ]);
  };

  /**
   * A run of a bundle revision that no longer drives its bundle (a newer revision's run superseded
   * it: docs/semantics.md#staged-bundles; or the bundle was rolled back:
   * docs/semantics.md#rolling-back-a-bundle) is not started again, nor are its members retried:
   * the hub no longer releases its revision, and the members' intents are not its own any more.
   */
  const refuseSuperseded = (
    run: Run,
    commands: readonly RunCommand[],
  ): void => {
    const { payload } = run;
    if (payload.kind !== "bundle" || deps.bundles === undefined) return;
    if (
      !commands.some((c) => c.type === "StartRun" || c.type === "RetryMembers")
    )
      return;
    const driver = deps.bundles
      .drivers()
      .find((d) => d.bundle === payload.bundle)?.run;
    if (driver === run.name) return;
    throw new FlotillaError(
      "failed_precondition",
      driver === undefined
        ? `Update run ${showValue(run.name)} no longer drives bundle ${showValue(payload.bundle)}: the bundle was rolled back, so the run cannot release revision ${showValue(payload.revision)} again; apply the bundle again or create a new run`
        : `Update run ${showValue(run.name)} was superseded: update run ${showValue(driver)} drives bundle ${showValue(payload.bundle)} now, and revision ${showValue(payload.revision)} is not kept`,
    );
  };

  const refuseInFlight = (run: { name: string; state: RunState }): void => {
    if (!isInFlight(run.state)) return;
    throw new FlotillaError(
      "failed_precondition",
      `Update run ${showValue(run.name)} is ${run.state}: stop it (flotilla run stop) and wait until it is Stopped before deleting it`,
    );
  };

  /** Deletes the run here, between two batches, once it is still not in flight. */
  const deleteHere = (slot: Slot): Promise<RunState> =>
    driver.exclusive(slot, async () => {
      if (slot.deleted) throw notFound(slot.run.name);
      refuseInFlight(slot.run);
      const state = slot.run.state;
      await removeRun(deps.store, slot.run.name, log);
      forget(slot);
      // A deleted run drives its bundle no more (docs/semantics.md#staged-bundle-runs).
      await settleDrivers();
      log.info({ run: slot.run.name, state }, "deleted the update run");
      return state;
    });

  /** Takes in a change another replica made to the runs collection. */
  const followChange = async (
    key: string,
    revision: number,
    value: unknown,
  ): Promise<void> => {
    const token = key.split(".", 1)[0] ?? key;
    const name = decodeKeyToken(token);
    const slot = slots.get(name);
    if (slot === undefined) {
      if (key === token) await readBack(name);
      return;
    }
    if (owned(slot) || !key.startsWith(`${token}.j.`)) return;
    const events = slot.log.observe(key, revision, value);
    if (events === undefined) return;
    if (events === "gap") {
      await readBack(name);
      return;
    }
    const transitions: Transition[] = [];
    const nowMs = (value as { nowMs: number }).nowMs;
    for (const event of events) {
      for (const action of step(slot.run, event, nowMs).actions) {
        if (action.type === "Transitioned") transitions.push(action);
      }
    }
    tell(slot, { run: slot.run, revision: slot.log.seq, transitions });
  };

  /**
   * What a new run of a bundle revision starts from (docs/semantics.md#staged-bundle-runs): the
   * revision (the current one when none is given), the bundle's targets, which of them are at it
   * already, and how the bundle is handed to the run once the run is checked. A bundle driven by
   * another run that has not ended is refused.
   */
  const bundleRunBasis = async (
    requested: Extract<RunPayload, { kind: "bundle" }>,
    supersede: boolean,
  ) => {
    const { bundles } = deps;
    if (bundles === undefined) {
      throw new FlotillaError(
        "failed_precondition",
        "This hub has no bundles: staged runs of bundle revisions need them",
      );
    }
    const basis = await bundles.runBasis(requested.bundle, requested.revision);
    const driver = basis.drivenBy;
    const other = driver === undefined ? undefined : slots.get(driver);
    if (other !== undefined && needsOwner(other.run) && !supersede) {
      throw new FlotillaError(
        "failed_precondition",
        `Bundle ${showValue(requested.bundle)} is driven by update run ${showValue(driver)} (${other.run.state}): delete that run or let it complete first`,
      );
    }
    const payload = {
      kind: "bundle" as const,
      bundle: requested.bundle,
      revision: basis.revision,
    };
    return {
      payload,
      clusters: basis.clusters,
      atTarget: basis.atTarget,
      drive: (run: string) =>
        bundles.drive(requested.bundle, run, basis.revision, driver, supersede),
      undrive: (run: string) =>
        bundles
          .letGo(requested.bundle, run, "failed")
          .catch((error: unknown) => {
            driversDirty = true;
            log.warn(
              { bundle: requested.bundle, run, err: error },
              "cannot hand the bundle back to its partition rollout yet",
            );
          }),
    };
  };

  const reportsCatalogue: ReportsCatalogue =
    deps.reportsCatalogue ?? (() => false);

  /**
   * The catalogue changed: runs held for an unavailable target look again (core's event). Changes
   * are taken on the next tick, so a release reaching a thousand agents costs one pass, not a
   * thousand.
   */
  let catalogueDirty = false;
  const catalogueChanged = (): void => {
    const { catalogue } = deps;
    catalogueDirty = false;
    if (catalogue === undefined) return;
    for (const slot of slots.values()) {
      if (isRunFinished(slot.run.state) || !owned(slot)) continue;
      const event = availableEvent(catalogue, slot.run, reportsCatalogue);
      if (event !== undefined) driver.enqueue(slot, { events: [event] });
    }
  };
  deps.catalogue?.onChange(() => {
    catalogueDirty = true;
  });

  /**
   * Stops `name` at once, its members in flight leaving with `why` (a newer run took the bundle
   * over, or the bundle was rolled back). On a replica that does not own the run, only the stop is
   * forwarded.
   */
  const stopTakenOver = async (
    manager: Pick<RunManager, "command">,
    name: string,
    actor: { readonly actor: string; readonly reason: string },
    why: { readonly supersededBy: string } | { readonly rolledBackTo: string },
  ): Promise<void> => {
    const slot = slots.get(name) ?? (await readBack(name));
    if (slot === undefined || !isInFlight(slot.run.state)) return;
    const stop: RunCommand = { type: "StopRun", ...actor };
    if (replication !== undefined && !owned(slot)) {
      await manager.command(name, stop);
      return;
    }
    const left: RunEvent[] = [];
    for (const stage of slot.run.stages)
      for (const group of stage.groups)
        for (const member of group.members)
          if (member.state === "Running")
            left.push({ type: "MemberLeft", member: member.name, ...why });
    await new Promise<StoredRun>((resolve, reject) => {
      driver.enqueue(slot, { events: [stop, ...left], resolve, reject });
    });
  };

  return {
    async start() {
      driver.resume();
      for (const { run, log: runLog } of await RunLog.loadAll(
        deps.store,
        log,
      )) {
        // With replicas, the owner of each run republishes its intents when it takes it.
        const slot = openSlot(
          run,
          runLog,
          replication === undefined && isActive(run),
        );
        slots.set(run.name, slot);
        track(slot);
      }
      // Bundles whose run ended or was deleted while the hub was down go back to partitions.
      driversDirty = deps.bundles !== undefined;
      if (replication !== undefined) return;
      for (const slot of slots.values()) {
        if (slot.reconcile && (await reconcile(slot))) slot.reconcile = false;
      }
      // Releases published while the hub was down reach the runs now.
      catalogueChanged();
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
      const bundle =
        input.payload.kind === "bundle"
          ? await bundleRunBasis(input.payload, input.supersede === true)
          : undefined;
      const payload: RunPayload =
        bundle === undefined ? input.payload : bundle.payload;
      // Records a deletion left behind must not be read as this run's journal.
      await dropRecords(deps.store, input.name, log);
      const clusters = bundle?.clusters ?? deps.directory.clusters();
      const available =
        deps.catalogue === undefined
          ? undefined
          : runAvailable(
              deps.catalogue,
              clusters.map((c) => c.name),
              payload,
              reportsCatalogue,
            );
      const resolved = resolveRun({
        name: input.name,
        ...compact({ strategy: input.strategy, available }),
        clusters,
        payload,
        createdAtMs: deps.now(),
        ...compact({
          progressDeadlineSeconds: input.progressDeadlineSeconds,
          origin: input.origin,
          atTarget: bundle?.atTarget,
        }),
        // Agents already unreachable hold their members from the start; later changes are events.
        isUnreachable: (cluster) => deps.directory.isUnreachable(cluster),
      });
      if (!resolved.ok)
        throw FlotillaError.invalid("update run", resolved.problems);
      const run = resolved.value;
      refuseUnmeasurable(run);
      if (bundle !== undefined) {
        refuseNoMembers(run, bundle.payload);
        await bundle.drive(run.name);
      }
      let runLog: RunLog;
      try {
        runLog = await RunLog.create(deps.store, run, input.strategyName);
      } catch (error) {
        if (bundle !== undefined) await bundle.undrive(run.name);
        throw error;
      }
      const slot = openSlot(run, runLog, false);
      slots.set(run.name, slot);
      track(slot);
      await replication?.created(run.name);
      return { ...storedRun(slot, true), warnings: runWarnings(run, clusters) };
    },

    get(name) {
      return storedRun(slotOf(name));
    },

    memberOf(name, cluster) {
      const slot = slots.get(name);
      const found =
        slot === undefined ? undefined : locateMember(slot.run, cluster);
      return found === undefined
        ? undefined
        : {
            stage: found.stage.name,
            group: found.group.name,
            state: found.member.state,
          };
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

    async command(name, ...commands) {
      const slot = slots.get(name) ?? (await readBack(name));
      if (slot === undefined) throw notFound(name);
      refuseSuperseded(slot.run, commands);
      if (replication === undefined || owned(slot) || !needsOwner(slot.run)) {
        return new Promise<StoredRun>((resolve, reject) => {
          driver.enqueue(slot, { events: commands, resolve, reject });
        });
      }
      const revision = await replication.forwardCommand(name, commands);
      await reach(slot, revision);
      return storedRun(slot, true);
    },

    supersede(name, by, actor) {
      return stopTakenOver(this, name, actor, { supersededBy: by });
    },

    rolledBack(name, revision, actor) {
      return stopTakenOver(this, name, actor, { rolledBackTo: revision });
    },

    async delete(name) {
      const slot = slots.get(name) ?? (await readBack(name));
      if (slot === undefined) throw notFound(name);
      refuseInFlight(slot.run);
      if (replication === undefined || owned(slot) || !needsOwner(slot.run))
        return await deleteHere(slot);
      const state = slot.run.state;
      await replication.forwardDelete(name);
      if (slots.get(name) === slot) forget(slot);
      return state;
    },

    async deleteAsOwner(name) {
      const slot = slots.get(name);
      if (slot === undefined || !owned(slot)) {
        throw new FlotillaError(
          "unavailable",
          `This hub replica does not own update run ${showValue(name)}`,
        );
      }
      return await deleteHere(slot);
    },

    async commandAsOwner(name, commands) {
      const slot = slots.get(name);
      if (slot === undefined || !owned(slot)) {
        throw new FlotillaError(
          "unavailable",
          `This hub replica does not own update run ${showValue(name)}`,
        );
      }
      const stored = await new Promise<StoredRun>((resolve, reject) => {
        driver.enqueue(slot, { events: commands, resolve, reject });
      });
      return stored.revision;
    },

    bundleReport(cluster, report) {
      if (report.subject.kind !== "bundle") return;
      // Each run takes the reports on its own revision only (bundleReportEvent).
      for (const run of driving.get(report.subject.bundle) ?? [])
        this.memberReport(cluster, run, report);
    },

    memberReport(cluster, runName, report) {
      const slot = slots.get(runName);
      if (slot === undefined || isRunFinished(slot.run.state)) return;
      if (!owned(slot)) {
        // The owner decides what the report means to the run.
        if (report.subject.kind === "bundle" || reportEvent(cluster, report))
          replication?.forwardReport(cluster, runName, report);
        return;
      }
      const event =
        report.subject.kind === "bundle"
          ? bundleReportEvent(slot.run, cluster, report)
          : reportEvent(cluster, report);
      if (event === undefined) return;
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
        if (isRunFinished(slot.run.state) || !owned(slot)) continue;
        if (locateMember(slot.run, change.cluster) === undefined) continue;
        driver.enqueue(slot, { events: [event] });
      }
    },

    tick() {
      if (catalogueDirty) catalogueChanged();
      if (driversDirty) void settleDrivers();
      for (const slot of slots.values()) {
        if (!isActive(slot.run) || !owned(slot)) continue;
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

    ownable() {
      return [...slots.values()]
        .filter((slot) => needsOwner(slot.run))
        .map((slot) => slot.run.name);
    },

    owns(name) {
      const slot = slots.get(name);
      return slot !== undefined && owned(slot);
    },

    async acquire(name, fence) {
      let slot: Slot | undefined;
      for (let attempt = 1; ; attempt++) {
        slot = await readBack(name);
        if (slot === undefined) return;
        // Finished while the lease changed hands: nothing is left to drive, and a takeover entry
        // would change a run that changes no more (docs/high-availability.md).
        if (!needsOwner(slot.run)) return;
        try {
          await slot.log.takeOver(deps.now(), fence);
          break;
        } catch (error) {
          // The previous owner appended meanwhile: read the run back and journal after it.
          if (!isRevisionConflict(error) || attempt >= 5) throw error;
        }
      }
      slot.fence = fence;
      log.info({ run: name, epoch: fence.epoch }, "took over the update run");
      tell(slot, { run: slot.run, revision: slot.log.seq, transitions: [] });
      if (slot.log.wantsSnapshot) {
        slot.log.snapshot(slot.run, false, fence).catch((error: unknown) => {
          log.warn(
            { run: name, err: error },
            "cannot store a snapshot of the run",
          );
        });
      }
      // A failed republish is retried on the next tick (`reconcile` marks the slot).
      if (isActive(slot.run)) await reconcile(slot);
      if (!isRunFinished(slot.run.state)) {
        for (const event of reachabilityEvents(slot.run, deps.directory)) {
          driver.enqueue(slot, { events: [event] });
        }
        catalogueChanged();
      }
    },

    lose,

    async release(name) {
      const slot = slots.get(name);
      if (slot === undefined) return;
      // Whatever is being applied is stored first; the rest is the next owner's.
      const settled = driver.idle();
      const timeout = new Promise<void>((resolve) =>
        setTimeout(resolve, 5_000).unref(),
      );
      await Promise.race([settled, timeout]);
      await slot.log.settled();
      lose(name);
    },

    async follow(signal) {
      const changes = await deps.store.watch(RUN_LOG, { signal });
      // Runs written between loading and watching: read back what this replica does not drive.
      for (const slot of [...slots.values()]) {
        if (!owned(slot)) await readBack(slot.run.name).catch(() => undefined);
      }
      void (async () => {
        for await (const change of changes) {
          if (change.type === "delete") {
            // Another replica deleted the run (its head goes first).
            const token = change.key.split(".", 1)[0] ?? change.key;
            const slot =
              change.key === token
                ? slots.get(decodeKeyToken(token))
                : undefined;
            if (slot !== undefined) forget(slot);
            continue;
          }
          await followChange(change.key, change.revision, change.value).catch(
            (error: unknown) => {
              log.warn(
                { key: change.key, err: error },
                "cannot follow a run change",
              );
            },
          );
        }
      })();
    },
  };
}
