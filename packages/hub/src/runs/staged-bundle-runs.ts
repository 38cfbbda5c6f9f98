/**
 * Staged bundles (docs/semantics.md#staged-bundles): a bundle with an update strategy
 * (`bundle apply --update-strategy S`, or every bundle of `gitrepo add --strategy S`) rolls each
 * new revision out as a staged run the hub makes and starts itself. The apply that stores the
 * revision also records a pending driver in the bundle's record (one compare-and-set write), so no
 * partition pass releases the revision first; this module then makes the run
 * (`<bundle>-<revision[:8]>`), stops the bundle's earlier runs still in flight (superseded by the
 * newer revision), and starts it. Each step is audited with the hub as the actor.
 *
 * A hub stopped between the write and the run finds the driver still pending and makes the run on
 * its next tick (`makePending`); a run that cannot be made (its strategy was deleted) is tried
 * again there, the revision held meanwhile.
 */
import {
  FlotillaError,
  planStaged,
  resolveRun,
  showValue,
  type Cluster,
} from "@flotilla/core";
import type { Logger } from "pino";
import type { AuditLog } from "../audit/audit-log.js";
import { hubActor, hubRunRecord } from "../audit/takeover-audit.js";
import { stagedRunName } from "../bundles/bundle-runs.js";
import type {
  PendingDriver,
  StagedRunMaker,
} from "../bundles/bundle-manager.js";
import type { UpdateStrategies } from "../strategies/update-strategies.js";
import type { RunBundles } from "./run-bundles.js";
import { isInFlight, type RunManager } from "./run-manager.js";

/** The methods of the audit records (not RPCs: the hub acts on its own). */
export const STAGED_BUNDLE_METHODS = {
  create: "/flotilla.hub/StagedBundleCreateUpdateRun",
  start: "/flotilla.hub/StagedBundleStartUpdateRun",
  supersede: "/flotilla.hub/StagedBundleStopUpdateRun",
} as const;

/** Names tried for a revision's run before giving up (`<name>`, `<name>-2`, …). */
const MAX_NAME_ATTEMPTS = 50;

export interface StagedBundleRunDeps {
  readonly runs: Pick<RunManager, "create" | "command" | "list" | "supersede">;
  readonly strategies: Pick<UpdateStrategies, "get">;
  /** The bundles' drivers, with the pending one's revision and update strategy. */
  readonly bundles: () => Pick<RunBundles, "drivers" | "letGo"> & {
    stagedDriver(name: string): PendingDriver | undefined;
  };
  readonly audit: AuditLog;
  readonly now: () => number;
  readonly log: Logger;
  /** This replica's id, for the actor of the runs it makes. */
  readonly replica: () => string;
}

export interface StagedBundleRuns extends StagedRunMaker {
  /** Makes the run of every pending driver (the hub's tick, on the bundles' owner). */
  makePending(): Promise<void>;
}

export function createStagedBundleRuns(
  deps: StagedBundleRunDeps,
): StagedBundleRuns {
  const { log } = deps;
  /** Bundles whose run is being made now: one maker per bundle at a time. */
  const making = new Map<string, Promise<void>>();

  const note = (
    action: keyof typeof STAGED_BUNDLE_METHODS,
    run: string,
    bundle: string,
    reason: string,
    message: string,
  ): void => {
    const record = hubRunRecord({
      atMs: deps.now(),
      replica: deps.replica(),
      method: STAGED_BUNDLE_METHODS[action],
      run,
      reason,
      message,
    });
    deps.audit.append(record).catch((error: unknown) => {
      log.warn({ err: error, runName: run, bundle }, "audit record lost");
    });
  };

  const strategyOf = (bundle: string, name: string) => {
    try {
      return deps.strategies.get(name).strategy;
    } catch (error) {
      throw new FlotillaError(
        "failed_precondition",
        `Cannot make the staged run of bundle ${showValue(bundle)}: its update strategy ${showValue(name)} does not exist`,
        { cause: error },
      );
    }
  };

  const makeOne = async (bundle: string, reason: string): Promise<void> => {
    const pending = deps.bundles().stagedDriver(bundle);
    if (pending === undefined) return;
    if (pending.strategy === undefined) {
      // The strategy was taken off before the run was made: the partitions take the revision.
      await deps.bundles().letGo(bundle, pending.run, "completed");
      return;
    }
    const strategy = strategyOf(bundle, pending.strategy);
    const taken = new Set(deps.runs.list().map((r) => r.run.name));
    let name = pending.run;
    for (let attempt = 2; taken.has(name); attempt++) {
      if (attempt > MAX_NAME_ATTEMPTS)
        throw new FlotillaError(
          "failed_precondition",
          `Cannot name the staged run of bundle ${showValue(bundle)}: ${showValue(pending.run)} and ${String(MAX_NAME_ATTEMPTS - 1)} more are taken`,
        );
      name = stagedRunName(bundle, pending.revision, attempt);
    }
    await deps.runs.create({
      name,
      strategy,
      strategyName: pending.strategy,
      payload: { kind: "bundle", bundle, revision: pending.revision },
      supersede: true,
    });
    note(
      "create",
      name,
      bundle,
      reason,
      `Created for revision ${pending.revision} of staged bundle ${bundle} (update strategy ${pending.strategy})`,
    );
    log.info(
      { runName: name, bundle, revision: pending.revision },
      "staged run of a bundle revision made",
    );
    // Earlier runs still in flight stop at once; their members are this run's now.
    for (const { run } of deps.runs.list()) {
      if (
        run.name === name ||
        run.payload.kind !== "bundle" ||
        run.payload.bundle !== bundle ||
        !isInFlight(run.state)
      )
        continue;
      const why = `superseded by update run ${name} (revision ${pending.revision} of bundle ${bundle})`;
      try {
        await deps.runs.supersede(run.name, name, {
          actor: hubActor(deps.replica()),
          reason: why,
        });
        note("supersede", run.name, bundle, why, `Stopped: ${why}`);
      } catch (error) {
        // Finished meanwhile: nothing to stop.
        log.warn(
          { err: error, runName: run.name, bundle },
          "cannot stop a superseded run",
        );
      }
    }
    await deps.runs.command(name, {
      type: "StartRun",
      actor: hubActor(deps.replica()),
      reason: `revision ${pending.revision} of staged bundle ${bundle}`,
    });
    note(
      "start",
      name,
      bundle,
      reason,
      `Started for revision ${pending.revision} of staged bundle ${bundle}`,
    );
  };

  const make = (bundle: string, reason: string): Promise<void> => {
    const before = making.get(bundle) ?? Promise.resolve();
    const next = before.then(
      () => makeOne(bundle, reason),
      () => makeOne(bundle, reason),
    );
    const settled = next.catch(() => undefined);
    making.set(bundle, settled);
    void settled.then(() => {
      if (making.get(bundle) === settled) making.delete(bundle);
    });
    return next;
  };

  return {
    check(bundle, strategyName, targets: readonly Cluster[]) {
      let strategy;
      try {
        strategy = deps.strategies.get(strategyName).strategy;
      } catch {
        throw FlotillaError.invalid("bundle", [
          {
            path: "bundle.updateStrategyName",
            message: "is not a stored update strategy (flotilla strategy list)",
            value: strategyName,
          },
        ]);
      }
      const resolved = resolveRun({
        name: "check",
        strategy,
        clusters: targets,
        payload: { kind: "bundle", bundle, revision: "check" },
        createdAtMs: deps.now(),
      });
      const problems = resolved.ok
        ? resolved.value.stages.some((s) => s.memberCount > 0)
          ? []
          : [
              {
                path: "bundle.updateStrategyName",
                message: `selects none of the bundle's ${String(targets.length)} targets (${targets
                  .slice(0, 5)
                  .map((t) => t.name)
                  .join(", ")}${targets.length > 5 ? ", ..." : ""})`,
                value: strategyName,
              },
            ]
        : resolved.problems.map((p) => ({
            path: "bundle.updateStrategyName",
            message: `${p.path}: ${p.message}`,
            value: strategyName,
          }));
      if (problems.length > 0) throw FlotillaError.invalid("bundle", problems);
    },

    make,

    plan(strategyName, targets) {
      const planned = planStaged(
        deps.strategies.get(strategyName).strategy,
        targets,
      );
      if (!planned.ok) throw FlotillaError.invalid("plan", planned.problems);
      return planned.value;
    },

    async makePending() {
      for (const driver of deps.bundles().drivers()) {
        if (driver.pending !== true || making.has(driver.bundle)) continue;
        await make(driver.bundle, "a pending staged run").catch(
          (error: unknown) => {
            log.warn(
              { err: error, bundle: driver.bundle },
              "the staged run of a bundle revision is not made yet",
            );
          },
        );
      }
    },
  };
}
