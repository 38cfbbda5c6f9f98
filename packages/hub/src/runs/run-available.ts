/**
 * What an update run is given as available versions (docs/engine.md#the-version-catalogue): the
 * fleet catalogue for the run's clusters. A cluster whose driver reports no Kubernetes versions
 * (no catalogue, or one without Kubernetes versions, as Cluster API's), in a fleet
 * where no operator published a Kubernetes release, cannot tell which Kubernetes versions it may
 * take: for it the run's own Kubernetes target counts as offered, as the operator named it (the
 * agent still refuses a step Kubernetes would refuse). Node images are never assumed.
 */
import {
  canonicalJson,
  type AvailableVersions,
  type Run,
  type RunEvent,
  type RunPayload,
} from "@flotilla/core";
import type { FleetCatalogue } from "../catalogue/fleet-catalogue.js";

/** Whether a cluster's agent reported the Kubernetes versions it can take (cluster registry). */
export type ReportsCatalogue = (cluster: string) => boolean;

export function runAvailable(
  catalogue: FleetCatalogue,
  clusters: readonly string[],
  payload: RunPayload,
  reportsCatalogue: ReportsCatalogue,
): AvailableVersions {
  const available = catalogue.available(clusters);
  if (payload.kind !== "upgrade" || payload.upgrade.type === "NodeImageOnly")
    return available;
  const target = payload.upgrade.kubernetesVersion;
  const published = available.kubernetes.some((k) => k.clusters === undefined);
  const unknown = published
    ? []
    : clusters.filter((c) => !reportsCatalogue(c)).sort();
  if (unknown.length === 0) return available;
  return {
    ...available,
    kubernetes: [
      ...available.kubernetes,
      unknown.length === clusters.length
        ? { version: target }
        : { version: target, clusters: unknown },
    ],
  };
}

/**
 * The `AvailableVersionsChanged` event an upgrade run needs after a catalogue change, or undefined
 * when it has no availability data or its clusters' catalogue is what it holds.
 */
export function availableEvent(
  catalogue: FleetCatalogue,
  run: Run,
  reportsCatalogue: ReportsCatalogue,
): RunEvent | undefined {
  if (run.payload.kind !== "upgrade" || run.available === undefined)
    return undefined;
  const available = runAvailable(
    catalogue,
    memberNames(run),
    run.payload,
    reportsCatalogue,
  );
  return availableChanged(run, available)
    ? { type: "AvailableVersionsChanged", available }
    : undefined;
}

/** The names of every member of `run`. */
export function memberNames(run: Run): string[] {
  return run.stages.flatMap((s) =>
    s.groups.flatMap((g) => g.members.map((m) => m.name)),
  );
}

/** Whether `next` differs from what the run holds. */
export function availableChanged(run: Run, next: AvailableVersions): boolean {
  return canonicalJson(run.available ?? null) !== canonicalJson(next);
}
