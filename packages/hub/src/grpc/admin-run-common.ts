/**
 * What the update-strategy, update-run and plan handlers share: their dependencies, the audit
 * record of a run command, and the wire shapes of a run's status.
 */
import {
  FlotillaError,
  type PlanOutput,
  type PlanWarning,
} from "@flotilla/core";
import { runToWire, type wire } from "@flotilla/protocol";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import type { RunManager, StoredRun } from "../runs/run-manager.js";
import type { UpdateStrategies } from "../strategies/update-strategies.js";
import type { AuditDeps, AuditTarget, CallContext } from "./unary.js";

export type Handlers = wire.AdminServiceHandlers;

export interface RunHandlerDeps extends AuditDeps {
  readonly runs: RunManager;
  readonly strategies: UpdateStrategies;
  readonly directory: ClusterDirectory;
  /** The plan of a bundle's rollout (AdminService.PreviewPlan with `bundle`). */
  readonly previewBundle: (name: string) => PlanOutput;
  /** The replica driving run `name`; absent or undefined: none known (a hub without replicas). */
  readonly ownerOf?: (name: string) => string | undefined;
}

/** The audit record of a call on a run (or on `targetKind`) named by `targetName`. */
export function runAudit<Req extends { reason: string }>(
  method: string,
  targetName: (r: Req) => string,
  targetKind = "update-run",
): AuditTarget<Req> {
  return { method, targetKind, targetName, reason: (r: Req) => r.reason };
}

/** A run's full status (the strategy's name is in the run's summary, not in RunStatus). */
export function runStatus(stored: StoredRun): wire.RunStatus {
  return runToWire(stored.run, stored.revision);
}

export function warningsToWire(
  warnings: readonly PlanWarning[],
): wire.Warning[] {
  return warnings.map((w) => ({ code: w.code, message: w.message }));
}

/** Who sent a command, and why if they said. */
export function actor(
  context: CallContext,
  reason: string,
): { actor: string; reason?: string } {
  return { actor: context.actor, ...(reason === "" ? {} : { reason }) };
}

/** Checks a list of names (stages, groups, members, gates); problems at `path[i]`. */
export function requireNames(names: readonly string[], path: string): void {
  const problems = names.flatMap((n, i) => {
    if (n === "")
      return [
        {
          path: `${path}[${String(i)}]`,
          message: "must not be empty",
          value: n,
        },
      ];
    if (n.length > 253) {
      return [
        {
          path: `${path}[${String(i)}]`,
          message: "must be at most 253 characters",
          value: n,
        },
      ];
    }
    return [];
  });
  if (problems.length > 0) throw FlotillaError.invalid("request", problems);
}
