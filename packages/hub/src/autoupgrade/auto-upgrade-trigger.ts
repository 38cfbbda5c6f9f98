/**
 * The auto-upgrade trigger (docs/engine.md#auto-upgrade-profiles): while this replica holds the
 * auto-upgrade lease (docs/high-availability.md), every catalogue change, profile change and the
 * lease's acquisition start a pass. A pass resolves each enabled profile against the catalogue;
 * for a target no run was made for, it creates the run (named after profile and target), starts
 * it, and only then records the target as done in the "auto-upgrade-runs" collection.
 *
 * A profile has one run in flight at a time: a target that comes while its last run is Running,
 * Pending or Stopping waits until that run ends, and the newest target then makes the next run.
 *
 * Exactly once, whatever is killed when: a pass that dies before the record finds the run by its
 * name next time (created by this profile: taken as this target's run; still NotStarted and made
 * by the hub: started then), and a pass after the record does nothing. Runs are never touched
 * after that: disabling or deleting a profile, deleting its run, leave the record in place.
 * A run GenerateUpdateRun made for the same target is recorded but left for the operator to start.
 */
import { FlotillaError, showValue, type RunOrigin } from "@flotilla/core";
import type { Logger } from "pino";
import { z } from "zod";
import type { AuditLog } from "../audit/audit-log.js";
import { autoUpgradeRecord } from "../audit/auto-upgrade-audit.js";
import { hubActor } from "../audit/takeover-audit.js";
import { isInFlight } from "../runs/run-manager.js";
import { nameKey } from "../store/keys.js";
import {
  defineCollection,
  isRevisionConflict,
  type StateStore,
} from "../store/state-store.js";
import type {
  AutoUpgradeProfiles,
  StoredProfile,
} from "./auto-upgrade-profiles.js";
import {
  createProfileRun,
  fleetNow,
  profileTargetNow,
  type FleetNow,
  type ProfileRunDeps,
} from "./profile-runs.js";

/** The target a profile last made a run for. */
export interface TriggerMark {
  readonly profile: string;
  /** The target's key (core's ProfileTarget.key). */
  readonly target: string;
  readonly run: string;
  readonly atMs: number;
}

const MARKS = defineCollection<TriggerMark>("auto-upgrade-runs", (value) =>
  z
    .object({
      profile: z.string(),
      target: z.string(),
      run: z.string(),
      atMs: z.number(),
    })
    .parse(value),
);

export interface AutoUpgradeTriggerDeps extends ProfileRunDeps {
  readonly profiles: AutoUpgradeProfiles;
  readonly store: StateStore;
  readonly audit: AuditLog;
  readonly now: () => number;
  readonly logger: Logger;
  /** This replica's id, for the actor of the runs it makes. */
  readonly replica: () => string;
  /** Whether this replica holds the auto-upgrade lease now. */
  readonly owns: () => boolean;
}

export interface AutoUpgradeTrigger {
  /** Starts a pass soon (coalesced with one running); nothing unless this replica owns the unit. */
  poke(): void;
  /** A pass failed for some profile: try again (called on the hub's pass interval). */
  retryIfDue(): void;
  /** Resolves when no pass is running or waiting. */
  idle(): Promise<void>;
  /** The run each profile last made, by profile name. */
  lastRuns(): Promise<Map<string, string>>;
}

export function createAutoUpgradeTrigger(
  deps: AutoUpgradeTriggerDeps,
): AutoUpgradeTrigger {
  const log = deps.logger;
  let running: Promise<void> | undefined;
  let again = false;
  let retryDue = false;

  const note = async (
    action: "create" | "start",
    run: string,
    origin: RunOrigin,
    replica: string,
  ): Promise<void> => {
    await deps.audit
      .append(
        autoUpgradeRecord({ atMs: deps.now(), replica, action, run, origin }),
      )
      .catch((error: unknown) => {
        log.warn(
          { err: error, runName: run },
          "auto-upgrade audit record lost",
        );
      });
  };

  /** The run each profile waits on: its last run, still in flight when a new target came. */
  const waitingOn = new Map<string, string>();

  /** Whether `run` is started and not finished (members are being changed). */
  const inFlight = (run: string): boolean => {
    try {
      return isInFlight(deps.runs.get(run).run.state);
    } catch {
      return false;
    }
  };

  const one = async (
    profile: StoredProfile,
    fleet: FleetNow,
    marks: Map<string, { value: TriggerMark; revision: number }>,
  ): Promise<void> => {
    const { record } = profile;
    if (record.spec.disabled) return;
    const found = profileTargetNow(record, fleet);
    if (found.type === "skip") return;
    const mark = marks.get(record.name);
    if (mark?.value.target === found.target.key) return;
    // One run of a profile at a time: two runs would fight over the same members' intents. The
    // newest target then is taken once the run is done (retryIfDue looks on every pass interval).
    if (mark !== undefined && inFlight(mark.value.run)) {
      waitingOn.set(record.name, mark.value.run);
      return;
    }
    waitingOn.delete(record.name);
    const made = await createProfileRun(deps, record, found, "hub");
    const { run } = made.stored;
    const origin = run.origin;
    if (origin === undefined) return;
    const replica = deps.replica();
    if (made.created) await note("create", run.name, origin, replica);
    if (run.state === "NotStarted" && origin.createdBy === "hub") {
      try {
        await deps.runs.command(run.name, {
          type: "StartRun",
          actor: hubActor(replica),
          reason: `auto-upgrade profile ${record.name}`,
        });
        await note("start", run.name, origin, replica);
      } catch (error) {
        // Started since (by an operator, or by a pass of a replica that held the lease before).
        if (deps.runs.get(run.name).run.state === "NotStarted") throw error;
      }
    }
    log.info(
      { runName: run.name, profile: record.name, created: made.created },
      "auto-upgrade run made",
    );
    const value: TriggerMark = {
      profile: record.name,
      target: found.target.key,
      run: run.name,
      atMs: deps.now(),
    };
    await deps.store.put(MARKS, nameKey(record.name), value, {
      expectedRevision: mark?.revision ?? 0,
    });
  };

  const pass = async (): Promise<void> => {
    if (!deps.owns()) return;
    const fleet = fleetNow(deps);
    waitingOn.clear();
    const marks = new Map(
      (await deps.store.list(MARKS)).map((e) => [e.value.profile, e] as const),
    );
    for (const profile of deps.profiles.list()) {
      if (!deps.owns()) return;
      try {
        await one(profile, fleet, marks);
      } catch (error) {
        // A missing strategy or a foreign run of the same name stays so until something changes
        // (and every change starts a pass); anything else (the store, a race) is retried.
        const lasting =
          error instanceof FlotillaError &&
          error.code === "failed_precondition" &&
          !isRevisionConflict(error);
        if (!lasting) retryDue = true;
        log[lasting ? "warn" : "error"](
          { err: error, profile: profile.record.name },
          `auto-upgrade profile ${showValue(profile.record.name)} made no run`,
        );
      }
    }
  };

  const poke = (): void => {
    if (!deps.owns()) return;
    if (running !== undefined) {
      again = true;
      return;
    }
    retryDue = false;
    running = pass()
      .catch((error: unknown) => {
        retryDue = true;
        log.error({ err: error }, "auto-upgrade pass failed");
      })
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          poke();
        }
      });
  };

  return {
    poke,
    retryIfDue() {
      if (retryDue || [...waitingOn.values()].some((run) => !inFlight(run)))
        poke();
    },
    async idle() {
      while (running !== undefined) await running;
    },
    async lastRuns() {
      return new Map(
        (await deps.store.list(MARKS)).map(
          (e) => [e.value.profile, e.value.run] as const,
        ),
      );
    },
  };
}
