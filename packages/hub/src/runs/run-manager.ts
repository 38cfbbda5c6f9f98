/**
 * The scheduler of staged update runs: it turns operator commands, agent reports, cluster changes
 * and time into core events, persists the run, then publishes the intents the engine asked for.
 *
 * Each run has a mailbox. Events are taken in batches: the batch is stepped on a copy of the run,
 * the copy is stored with compare-and-set on the store revision, and only then does the hub
 * publish intents and answer the commands in the batch. A hub killed at any point therefore either
 * lost the whole batch (nothing was published for it; commands got no answer) or has it stored,
 * in which case {@link RunManager.start} republishes what the stored run says (members Running
 * hold the run's upgrade in their intent). Republishing is harmless: an unchanged intent keeps its
 * generation, and agents treat the same generation as a no-op.
 */
import {
  cloneRun,
  FlotillaError,
  isRunFinished,
  locateMember,
  resolveRun,
  runWarnings,
  showValue,
  step,
  type IntentChange,
  type PlanWarning,
  type Run,
  type RunAction,
  type RunEvent,
  type RunPayload,
  type RunState,
  type UpdateStrategy,
} from "@flotilla/core";
import type { StatusReport, Transition } from "@flotilla/protocol";
import type { Logger } from "pino";
import type { ClusterChange } from "../clusters/cluster-registry.js";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import type { IntentWriter } from "../intents/intent-writer.js";
import { nameProblem } from "../names.js";
import type { StateStore } from "../store/state-store.js";
import { takeBatch, type Queued as MailboxEntry } from "./mailbox.js";
import { RunLog } from "./run-log.js";

/** What a watcher hears after every stored change of a run. */
export interface RunUpdate {
  readonly run: Run;
  readonly revision: number;
  readonly transitions: readonly Transition[];
}

export type RunListener = (update: RunUpdate) => void;

export interface CreateRunInput {
  readonly name: string;
  readonly strategy?: UpdateStrategy;
  readonly strategyName?: string;
  readonly payload: RunPayload;
  readonly progressDeadlineSeconds?: number;
}

export interface StoredRun {
  readonly run: Run;
  readonly revision: number;
  readonly strategyName?: string;
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

/** Commands an operator sends; `member` events come from agents and the registry. */
export type RunCommand = Extract<
  RunEvent,
  {
    type:
      | "StartRun"
      | "StopRun"
      | "SkipStage"
      | "SkipGroup"
      | "SkipMember"
      | "RetryMembers"
      | "ApproveGate"
      | "CompleteGate";
  }
>;

type Queued = MailboxEntry<StoredRun>;

interface Slot {
  /**
   * The run as stored, changed in place by each batch (see {@link RunLog}). While a batch's
   * journal entry is being written, readers see the batch applied; if the write fails the run is
   * read back from the store at once.
   */
  run: Run;
  log: RunLog;
  queue: Queued[];
  busy: boolean;
  reconcile: boolean;
  /** A batch was applied but could not be stored: read the run back before the next one. */
  stale: boolean;
  retry?: NodeJS.Timeout;
  readonly listeners: Set<RunListener>;
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

function isActive(run: Run): boolean {
  return run.state !== "NotStarted" && !isRunFinished(run.state);
}

/**
 * Events that bring the run's view of its members' reachability in line with the directory's
 * (docs/semantics.md#offline-clusters: a member not yet started while its agent is unreachable
 * waits, Pending). Cluster events keep the two in step while a run is loaded; this covers what no
 * event reports: a run loaded after a hub restart (the new registry counts every agent reachable
 * until it stays away a whole timeout, so a member flagged before the crash whose agent came back
 * would never hear "reachable").
 */
function reachabilityEvents(run: Run, directory: ClusterDirectory): RunEvent[] {
  const events: RunEvent[] = [];
  for (const stage of run.stages) {
    for (const group of stage.groups) {
      for (const member of group.members) {
        const unreachable = directory.isUnreachable(member.name);
        if (member.unreachable === unreachable) continue;
        events.push({
          type: unreachable ? "MemberUnreachable" : "MemberReachable",
          member: member.name,
        });
      }
    }
  }
  return events;
}

export function createRunManager(deps: RunManagerDeps): RunManager {
  const slots = new Map<string, Slot>();
  const idleWaiters: (() => void)[] = [];
  const retryDelayMs = deps.retryDelayMs ?? 1000;
  let stopped = false;
  const log = deps.logger;

  const notFound = (name: string): FlotillaError =>
    new FlotillaError(
      "not_found",
      `Update run ${showValue(name)} does not exist`,
    );

  /**
   * The stored run. `run` is the live object, which the next batch changes in place: callers use
   * it at once (every caller converts it synchronously); answers to commands get a copy.
   */
  const snapshot = (slot: Slot, copy = false): StoredRun => {
    const { strategyName } = slot.log;
    return {
      run: copy ? cloneRun(slot.run) : slot.run,
      revision: slot.log.seq,
      ...(strategyName === undefined ? {} : { strategyName }),
    };
  };

  const checkIdle = (): void => {
    for (const slot of slots.values()) {
      if (slot.busy || slot.queue.length > 0 || slot.log.busy) return;
    }
    for (const waiter of idleWaiters.splice(0)) waiter();
  };

  /** Stores a snapshot in the background (the batch is already safe in the journal). */
  const takeSnapshot = (slot: Slot, finished: boolean): void => {
    slot.log
      .snapshot(slot.run, finished)
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

  const enqueue = (slot: Slot, item: Queued): void => {
    slot.queue.push(item);
    if (!slot.busy) void drain(slot);
  };

  /** Intents the stored run implies, for members whose intent may lag (after a crash). */
  const reconcile = async (slot: Slot): Promise<void> => {
    const { run } = slot;
    if (run.payload.kind !== "upgrade") return;
    for (const stage of run.stages) {
      for (const group of stage.groups) {
        for (const member of group.members) {
          if (member.state === "Running" && member.target !== undefined) {
            await deps.intents.change(member.name, [
              {
                type: "SetUpgrade",
                upgrade: {
                  run: run.name,
                  type: run.payload.upgrade.type,
                  target: member.target,
                },
              },
            ]);
          } else if (member.state === "Failed") {
            await deps.intents.change(member.name, [
              { type: "ClearUpgrade", run: run.name },
            ]);
          }
        }
      }
    }
  };

  /** The intent changes one batch of actions asks for, by cluster, in order. */
  const intentChanges = (
    run: Run,
    transitions: readonly Transition[],
    starts: readonly { member: string; change: IntentChange }[],
  ): Map<string, IntentChange[]> => {
    const out = new Map<string, IntentChange[]>();
    const add = (member: string, change: IntentChange): void => {
      const list = out.get(member) ?? [];
      list.push(change);
      out.set(member, list);
    };
    for (const t of transitions) {
      // A failed member's upgrade is withdrawn, so that a retry is a new generation.
      if (t.scope === "member" && t.to === "Failed") {
        add(t.name, { type: "ClearUpgrade", run: run.name });
      }
    }
    for (const s of starts) add(s.member, s.change);
    return out;
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
        const batch = takeBatch(slot.queue);
        // Stepped in place: the journal entry is small whatever the size of the run.
        let draft = slot.run;
        const transitions: Transition[] = [];
        const starts: { member: string; change: IntentChange }[] = [];
        const accepted: Queued[] = [];
        const journal: RunEvent[] = [];
        const now = deps.now();
        for (const item of batch) {
          // Several events in one item are all-or-nothing: keep a copy to go back to.
          const backup = item.events.length > 1 ? cloneRun(draft) : undefined;
          const actions: RunAction[] = [];
          let refused: FlotillaError | undefined;
          for (const event of item.events) {
            const result = step(draft, event, now);
            if (result.ignored !== undefined) {
              log.debug(
                {
                  run: draft.name,
                  reasons: result.ignored.map((r) => r.message),
                },
                "reports not applied",
              );
            }
            if (result.rejected !== undefined) {
              refused = new FlotillaError(
                result.rejected.code,
                result.rejected.message,
              );
              break;
            }
            actions.push(...result.actions);
          }
          if (refused !== undefined) {
            if (backup !== undefined) draft = backup;
            if (item.reject === undefined) {
              log.debug(
                {
                  run: draft.name,
                  events: item.events.map((e) => e.type),
                  reason: refused.message,
                },
                "event not applied",
              );
            } else item.reject(refused);
            continue;
          }
          accepted.push(item);
          journal.push(...item.events);
          for (const action of actions) {
            if (action.type === "Transitioned") transitions.push(action);
            else if (draft.payload.kind === "upgrade") {
              starts.push({
                member: action.member,
                change: {
                  type: "SetUpgrade",
                  upgrade: {
                    run: draft.name,
                    type: draft.payload.upgrade.type,
                    target: action.target,
                  },
                },
              });
            }
          }
        }
        slot.run = draft;
        if (journal.length > 0) {
          try {
            await slot.log.append(now, journal);
          } catch (error) {
            // Not stored, so nothing of the batch happened: commands get the error,
            // observations wait, and the run is read back before the next batch.
            log.warn(
              { run: draft.name, err: error },
              "cannot store run; retrying",
            );
            slot.stale = true;
            for (const item of accepted) item.reject?.(error);
            const observations = accepted.filter((i) => i.reject === undefined);
            slot.queue.unshift(...observations);
            await reload(slot).catch(() => undefined);
            scheduleRetry(slot);
            return;
          }
          if (isRunFinished(slot.run.state)) takeSnapshot(slot, true);
          else if (slot.log.wantsSnapshot) takeSnapshot(slot, false);
        }
        // Persisted: now publish, then answer.
        const changes = intentChanges(slot.run, transitions, starts);
        await Promise.all(
          [...changes].map(async ([member, list]) => {
            try {
              await deps.intents.change(member, list);
            } catch (error) {
              slot.reconcile = true;
              log.warn(
                { run: slot.run.name, member, err: error },
                "cannot publish intent; it is republished on the next tick",
              );
            }
          }),
        );
        if (starts.length > 0 && deps.onReportToIntent !== undefined) {
          const published = performance.now();
          for (const item of accepted) {
            for (const receivedAtMs of item.receivedAtMs ?? [])
              deps.onReportToIntent((published - receivedAtMs) / 1000);
          }
        }
        for (const t of transitions) deps.onTransition?.(t);
        if (accepted.some((item) => item.resolve !== undefined)) {
          const stored = snapshot(slot, true);
          for (const item of accepted) item.resolve?.(stored);
        }
        if (transitions.length > 0 || accepted.length > 0) {
          const update = {
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
      }
    } finally {
      slot.busy = false;
      checkIdle();
    }
  };

  const scheduleRetry = (slot: Slot): void => {
    if (slot.retry !== undefined || stopped) return;
    slot.retry = setTimeout(() => {
      slot.retry = undefined;
      if (!slot.busy && slot.queue.length > 0) void drain(slot);
    }, retryDelayMs);
  };

  const slotOf = (name: string): Slot => {
    const slot = slots.get(name);
    if (slot === undefined) throw notFound(name);
    return slot;
  };

  const observe = (
    name: string,
    event: RunEvent,
    receivedAtMs?: number,
  ): void => {
    const slot = slots.get(name);
    if (slot === undefined || isRunFinished(slot.run.state)) return;
    enqueue(
      slot,
      receivedAtMs === undefined
        ? { events: [event] }
        : { events: [event], receivedAtMs: [receivedAtMs] },
    );
  };

  return {
    async start() {
      stopped = false;
      for (const { run, log: runLog } of await RunLog.loadAll(
        deps.store,
        log,
      )) {
        slots.set(run.name, {
          run,
          log: runLog,
          queue: [],
          busy: false,
          reconcile: isActive(run),
          stale: false,
          listeners: new Set(),
        });
      }
      for (const slot of slots.values()) {
        if (!slot.reconcile) continue;
        try {
          await reconcile(slot);
          slot.reconcile = false;
        } catch (error) {
          log.warn(
            { run: slot.run.name, err: error },
            "cannot republish intents yet",
          );
        }
      }
      for (const slot of slots.values()) {
        if (isRunFinished(slot.run.state)) continue;
        for (const event of reachabilityEvents(slot.run, deps.directory)) {
          enqueue(slot, { events: [event] });
        }
      }
    },

    stop() {
      stopped = true;
      for (const slot of slots.values()) {
        if (slot.retry !== undefined) clearTimeout(slot.retry);
        slot.retry = undefined;
      }
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
        ...(input.strategy === undefined ? {} : { strategy: input.strategy }),
        clusters,
        payload: input.payload,
        createdAtMs: deps.now(),
        ...(input.progressDeadlineSeconds === undefined
          ? {}
          : { progressDeadlineSeconds: input.progressDeadlineSeconds }),
      });
      if (!resolved.ok)
        throw FlotillaError.invalid("update run", resolved.problems);
      const run = resolved.value;
      // Agents already unreachable hold their members from the start; later changes are events.
      for (const stage of run.stages) {
        for (const group of stage.groups) {
          for (const member of group.members) {
            member.unreachable = deps.directory.isUnreachable(member.name);
          }
        }
      }
      const slot: Slot = {
        run,
        log: await RunLog.create(deps.store, run, input.strategyName),
        queue: [],
        busy: false,
        reconcile: false,
        stale: false,
        listeners: new Set(),
      };
      slots.set(run.name, slot);
      return { ...snapshot(slot, true), warnings: runWarnings(run, clusters) };
    },

    get(name) {
      return snapshot(slotOf(name));
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
        .map((slot) => snapshot(slot));
    },

    command(name, ...commands) {
      const slot = slotOf(name);
      return new Promise<StoredRun>((resolve, reject) => {
        enqueue(slot, { events: commands, resolve, reject });
      });
    },

    memberReport(cluster, runName, report) {
      switch (report.phase) {
        case "Ready":
          observe(
            runName,
            {
              type: "MemberSucceeded",
              member: cluster,
              ...(report.message === undefined
                ? {}
                : { message: report.message }),
            },
            performance.now(),
          );
          return;
        case "Failed":
          observe(runName, {
            type: "MemberFailed",
            member: cluster,
            error:
              report.error ?? report.message ?? "the agent reported a failure",
          });
          return;
        case "Pending":
          observe(runName, {
            type: "MemberDeferred",
            member: cluster,
            message: report.message ?? "the agent cannot start now",
            ...(report.pendingUntilMs === undefined
              ? {}
              : { untilMs: report.pendingUntilMs }),
          });
          return;
        case "Applying":
        case "Applied":
        case "NotReady":
        case "Modified":
          // Progress only: a member finishes on Ready, Failed or its deadline.
          return;
      }
    },

    clusterChanged(change) {
      const event = ((): RunEvent | undefined => {
        switch (change.type) {
          case "unreachable":
            return { type: "MemberUnreachable", member: change.cluster };
          case "reachable":
            return { type: "MemberReachable", member: change.cluster };
          case "left":
            return { type: "MemberLeft", member: change.cluster };
          case "windows":
            return {
              type: "MemberWindowsChanged",
              member: change.cluster,
              ...(change.maintenance === undefined
                ? {}
                : { maintenance: change.maintenance }),
            };
          case "joined":
          case "changed":
            // A run's membership is frozen at creation (docs/semantics.md#membership).
            return undefined;
        }
      })();
      if (event === undefined) return;
      for (const slot of slots.values()) {
        if (isRunFinished(slot.run.state)) continue;
        if (locateMember(slot.run, change.cluster) === undefined) continue;
        enqueue(slot, { events: [event] });
      }
    },

    tick() {
      for (const slot of slots.values()) {
        if (!isActive(slot.run)) continue;
        if (slot.reconcile && !slot.busy) {
          slot.reconcile = false;
          reconcile(slot).catch((error: unknown) => {
            slot.reconcile = true;
            log.warn(
              { run: slot.run.name, err: error },
              "cannot republish intents yet",
            );
          });
        }
        // Only when something is due (deadline, wait, gate, window): a Tick before the run's
        // wake time changes nothing, and would cost a stored batch.
        const wake = slot.run.wakeAtMs;
        if (wake === undefined || deps.now() < wake) continue;
        if (!slot.queue.some((q) => q.events[0]?.type === "Tick")) {
          enqueue(slot, { events: [{ type: "Tick" }] });
        }
      }
    },

    watch(name, listener) {
      const slot = slotOf(name);
      slot.listeners.add(listener);
      return () => slot.listeners.delete(listener);
    },

    idle() {
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        checkIdle();
      });
    },
  };
}
