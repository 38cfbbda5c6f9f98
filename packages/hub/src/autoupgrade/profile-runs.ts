/**
 * The run of an auto-upgrade profile's current target (docs/engine.md#auto-upgrade-profiles):
 * resolved against the version catalogue, named after the profile and the target, and created
 * through the run manager like any operator's run, with the profile's strategy (or every member at
 * once) and the profile as its origin. A run of that name made by the same profile counts as this
 * target's run, so asking twice, from the trigger or GenerateUpdateRun, never makes a second one.
 */
import {
  ALL_MEMBERS_AT_ONCE,
  FlotillaError,
  profileRunName,
  resolveProfileTarget,
  showValue,
  type AvailableVersions,
  type Cluster,
  type PlanWarning,
  type ProfileTarget,
  type RunOrigin,
} from "@flotilla/core";
import type { FleetCatalogue } from "../catalogue/fleet-catalogue.js";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import type { RunManager, StoredRun } from "../runs/run-manager.js";
import type { UpdateStrategies } from "../strategies/update-strategies.js";
import type { ProfileRecord } from "./auto-upgrade-profiles.js";

/** A profile's target now and the run it makes, or why it has none. */
export type ProfileTargetNow =
  | {
      readonly type: "target";
      readonly target: ProfileTarget;
      readonly run: string;
    }
  | { readonly type: "skip"; readonly reason: string };

/** What profiles resolve against: the catalogue's offers and the fleet's clusters, read once. */
export interface FleetNow {
  readonly available: AvailableVersions;
  readonly clusters: readonly Cluster[];
}

/** Reads {@link FleetNow}. */
export function fleetNow(deps: ProfileRunDeps): FleetNow {
  return {
    available: deps.catalogue.available(),
    clusters: deps.directory.clusters(),
  };
}

/** Resolves `profile` against the fleet now. */
export function profileTargetNow(
  profile: ProfileRecord,
  fleet: FleetNow,
): ProfileTargetNow {
  const resolved = resolveProfileTarget(
    profile.spec,
    fleet.available,
    fleet.clusters,
  );
  if (resolved.type === "skip") return resolved;
  return {
    type: "target",
    target: resolved.target,
    run: profileRunName(profile.name, resolved.target),
  };
}

export interface ProfileRunDeps {
  readonly runs: RunManager;
  readonly strategies: UpdateStrategies;
  readonly catalogue: FleetCatalogue;
  readonly directory: ClusterDirectory;
}

/** The run of a target, and whether this call created it. */
export interface ProfileRun {
  readonly stored: StoredRun;
  readonly created: boolean;
  readonly warnings: readonly PlanWarning[];
}

/**
 * Creates the run of `target` for `profile` (not started), or finds the one made before.
 * FAILED_PRECONDITION when the profile's strategy is gone, or when a run of that name exists that
 * this profile did not make.
 */
export async function createProfileRun(
  deps: ProfileRunDeps,
  profile: ProfileRecord,
  found: Extract<ProfileTargetNow, { type: "target" }>,
  createdBy: RunOrigin["createdBy"],
): Promise<ProfileRun> {
  const { spec, name } = profile;
  const strategyName = spec.strategy;
  let strategy = ALL_MEMBERS_AT_ONCE;
  if (strategyName !== undefined) {
    try {
      strategy = deps.strategies.get(strategyName).strategy;
    } catch (error) {
      throw new FlotillaError(
        "failed_precondition",
        `Cannot create the run of auto-upgrade profile ${showValue(name)}: its update strategy ${showValue(strategyName)} does not exist`,
        { cause: error },
      );
    }
  }
  const origin: RunOrigin = {
    profile: name,
    channel: spec.channel,
    target: found.target.description,
    createdBy,
  };
  try {
    const created = await deps.runs.create({
      name: found.run,
      strategy,
      ...(strategyName === undefined ? {} : { strategyName }),
      payload: { kind: "upgrade", upgrade: found.target.upgrade },
      origin,
    });
    return { stored: created, created: true, warnings: created.warnings };
  } catch (error) {
    if (!(error instanceof FlotillaError) || error.code !== "already_exists")
      throw error;
  }
  const existing = deps.runs.get(found.run);
  if (existing.run.origin?.profile !== name) {
    throw new FlotillaError(
      "failed_precondition",
      `Cannot create the run of auto-upgrade profile ${showValue(name)}: update run ${showValue(found.run)} exists and was not made by this profile`,
    );
  }
  return { stored: existing, created: false, warnings: [] };
}
