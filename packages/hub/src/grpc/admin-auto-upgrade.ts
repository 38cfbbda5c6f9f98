/**
 * AdminService: auto-upgrade profiles (create, update, get, list, delete) and GenerateUpdateRun
 * (docs/cli.md#auto-upgrade-profiles). A spec is checked whole by core's parser (problem paths
 * start at `spec`), and the strategy it names must be stored, before anything is written.
 */
import {
  compact,
  FlotillaError,
  parseAutoUpgradeProfile,
  profileNameProblem,
  showValue,
  strategyNameOf,
  type AutoUpgradeProfileSpec,
} from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import type {
  AutoUpgradeProfiles,
  StoredProfile,
} from "../autoupgrade/auto-upgrade-profiles.js";
import { checkProfileName } from "../autoupgrade/auto-upgrade-profiles.js";
import type { AutoUpgradeTrigger } from "../autoupgrade/auto-upgrade-trigger.js";
import {
  createProfileRun,
  fleetNow,
  profileTargetNow,
  type FleetNow,
} from "../autoupgrade/profile-runs.js";
import type { FleetCatalogue } from "../catalogue/fleet-catalogue.js";
import { isInFlight } from "../runs/run-manager.js";
import {
  runAudit,
  runStatus,
  warningsToWire,
  type Handlers,
  type RunHandlerDeps,
} from "./admin-run-common.js";
import { paginate } from "./pages.js";
import { audited, unary, type AuditTarget } from "./unary.js";

export interface AutoUpgradeHandlerDeps extends RunHandlerDeps {
  readonly profiles: AutoUpgradeProfiles;
  readonly trigger: AutoUpgradeTrigger;
  readonly catalogue: FleetCatalogue;
}

const WHAT = "auto-upgrade profile";

/** The spec of a request, parsed by core; the strategy it names must exist. */
function specFromWire(
  deps: AutoUpgradeHandlerDeps,
  spec: wire.AutoUpgradeProfileSpec__Output | null,
): AutoUpgradeProfileSpec {
  if (spec === null) {
    throw FlotillaError.invalid(WHAT, [
      { path: "spec", message: "is required", value: null },
    ]);
  }
  const text = (value: string): string | undefined =>
    value === "" ? undefined : value;
  const parsed = parseAutoUpgradeProfile(
    compact({
      channel: spec.channel,
      strategy:
        spec.strategy === "" ? undefined : strategyNameOf(spec.strategy),
      nodeImageSelection: text(spec.nodeImageSelection),
      disabled: spec.disabled,
      targetKubernetesVersion: spec.targetKubernetesVersion ?? undefined,
      longTermSupport: spec.longTermSupport ?? undefined,
    }),
    "spec",
  );
  if (!parsed.ok) throw FlotillaError.invalid(WHAT, parsed.problems);
  const { strategy } = parsed.value;
  if (strategy !== undefined) {
    try {
      deps.strategies.get(strategy);
    } catch {
      throw FlotillaError.invalid(WHAT, [
        {
          path: "spec.strategy",
          message: "names no stored update strategy (flotilla strategy list)",
          value: spec.strategy,
        },
      ]);
    }
  }
  return parsed.value;
}

/** Whether run `name` is started and not finished; false when it is gone. */
function runInFlight(deps: AutoUpgradeHandlerDeps, name: string): boolean {
  try {
    return isInFlight(deps.runs.get(name).run.state);
  } catch {
    return false;
  }
}

function specToWire(spec: AutoUpgradeProfileSpec): wire.AutoUpgradeProfileSpec {
  return {
    channel: spec.channel,
    strategy: spec.strategy ?? "",
    nodeImageSelection: spec.nodeImageSelection,
    disabled: spec.disabled,
    ...compact({
      targetKubernetesVersion: spec.targetKubernetesVersion,
      longTermSupport: spec.longTermSupport,
    }),
  };
}

function profileToWire(
  deps: AutoUpgradeHandlerDeps,
  fleet: FleetNow,
  stored: StoredProfile,
  lastRun: string | undefined,
): wire.AutoUpgradeProfile {
  const found = profileTargetNow(stored.record, fleet);
  const waitingFor =
    found.type === "target" &&
    lastRun !== undefined &&
    lastRun !== found.run &&
    runInFlight(deps, lastRun)
      ? lastRun
      : "";
  return {
    name: stored.record.name,
    spec: specToWire(stored.record.spec),
    createdAtMs: stored.record.createdAtMs,
    updatedAtMs: stored.record.updatedAtMs,
    revision: stored.revision,
    current:
      found.type === "skip"
        ? { description: "", run: "", skipReason: found.reason, waitingFor }
        : {
            description: found.target.description,
            run: found.run,
            skipReason: "",
            waitingFor,
          },
    lastRun: lastRun ?? "",
  };
}

export function autoUpgradeHandlers(
  deps: AutoUpgradeHandlerDeps,
): Pick<
  Handlers,
  | "CreateAutoUpgradeProfile"
  | "UpdateAutoUpgradeProfile"
  | "GetAutoUpgradeProfile"
  | "ListAutoUpgradeProfiles"
  | "DeleteAutoUpgradeProfile"
  | "GenerateUpdateRun"
> {
  const audit = <Req extends { name: string; reason: string }>(
    method: string,
  ): AuditTarget<Req> =>
    runAudit(method, (r: Req) => r.name, "auto-upgrade-profile");
  const lastRun = async (name: string): Promise<string | undefined> =>
    (await deps.trigger.lastRuns()).get(name);
  return {
    CreateAutoUpgradeProfile: unary(
      audited(deps, audit("CreateAutoUpgradeProfile"), async (request) => {
        checkProfileName(request.name);
        const spec = specFromWire(deps, request.spec);
        const stored = await deps.profiles.create(request.name, spec);
        return {
          profile: profileToWire(deps, fleetNow(deps), stored, undefined),
        };
      }),
    ),

    UpdateAutoUpgradeProfile: unary(
      audited(deps, audit("UpdateAutoUpgradeProfile"), async (request) => {
        checkProfileName(request.name);
        const spec = specFromWire(deps, request.spec);
        deps.profiles.get(request.name);
        const stored = await deps.profiles.update(
          request.name,
          spec,
          request.expectedRevision === 0 ? undefined : request.expectedRevision,
        );
        return {
          profile: profileToWire(
            deps,
            fleetNow(deps),
            stored,
            await lastRun(request.name),
          ),
        };
      }),
    ),

    GetAutoUpgradeProfile: unary(async (request) => {
      checkProfileName(request.name);
      const stored = deps.profiles.get(request.name);
      return {
        profile: profileToWire(
          deps,
          fleetNow(deps),
          stored,
          await lastRun(request.name),
        ),
      };
    }),

    ListAutoUpgradeProfiles: unary(async (request) => {
      const page = paginate(
        deps.profiles.list(),
        (p) => p.record.name,
        request.pageSize,
        request.pageToken,
      );
      const last = await deps.trigger.lastRuns();
      const fleet = fleetNow(deps);
      return {
        profiles: page.items.map((p) =>
          profileToWire(deps, fleet, p, last.get(p.record.name)),
        ),
        nextPageToken: page.nextPageToken,
      };
    }),

    DeleteAutoUpgradeProfile: unary(
      audited(deps, audit("DeleteAutoUpgradeProfile"), async (request) => {
        checkProfileName(request.name);
        await deps.profiles.delete(request.name);
        return {};
      }),
    ),

    GenerateUpdateRun: unary(
      audited(
        deps,
        runAudit("GenerateUpdateRun", (r) => r.profile, "auto-upgrade-profile"),
        async (request) => {
          const name = request.profile;
          const message = profileNameProblem(name);
          if (message !== undefined) {
            throw FlotillaError.invalid(WHAT, [
              { path: "profile", message, value: name },
            ]);
          }
          const { record } = deps.profiles.get(name);
          const found = profileTargetNow(record, fleetNow(deps));
          if (found.type === "skip") {
            throw new FlotillaError(
              "failed_precondition",
              `Cannot generate a run for auto-upgrade profile ${showValue(name)}: ${found.reason}`,
            );
          }
          const made = await createProfileRun(deps, record, found, "generate");
          return {
            run: runStatus(made.stored),
            created: made.created,
            warnings: warningsToWire(made.warnings),
          };
        },
      ),
    ),
  };
}
