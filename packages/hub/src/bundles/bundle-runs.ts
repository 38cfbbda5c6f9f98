/**
 * What a staged run of a bundle revision needs of the bundle (docs/semantics.md#staged-bundle-runs):
 * the checks at its creation, the record of the run driving the bundle, and whether a cluster is
 * Ready at the run's revision. The releases themselves are the partition releases' code
 * (`releaseRevision` in bundle-passes.ts); this only decides what to write into the record.
 */
import { FlotillaError, showValue } from "@flotilla/core";
import type { BundleReport } from "./bundle-observations.js";
import type { BundleDriver, BundleRecord } from "./bundle-record.js";

/**
 * The revision a run of `record` asked for `requested` rolls out: the current one for "" or the
 * current one itself. The hub keeps only the current revision's content, so any other is refused.
 */
export function runRevision(record: BundleRecord, requested: string): string {
  if (requested === "" || requested === record.revision) return record.revision;
  throw FlotillaError.invalid("update run", [
    {
      path: "payload.revision",
      message: `is not a revision of bundle ${showValue(record.name)}: the hub keeps its current revision ${showValue(record.revision)} only (see flotilla bundle get)`,
      value: requested,
    },
  ]);
}

/** Whether `report` says the cluster's copy is Ready (or Modified: drifted but ready) at `revision`. */
export function isReadyAt(
  report: BundleReport | undefined,
  revision: string,
): boolean {
  return (
    report?.revision === revision &&
    (report.phase === "Ready" || report.phase === "Modified")
  );
}

/**
 * The record of a bundle now driven by `run` at its current revision. `base` is the revision the
 * partition rollout had released (to at least one target), or undefined.
 */
export function drivenRecord(
  record: BundleRecord,
  run: string,
  base: string | undefined,
): BundleRecord {
  const drivenBy: BundleDriver = {
    run,
    revision: record.revision,
    contents: record.contents,
    ...(base === undefined ? {} : { baseRevision: base }),
  };
  return { ...record, drivenBy };
}

/** Longest run name (a DNS label). */
const MAX_RUN_NAME = 63;

/**
 * The name of the run the hub makes of `revision` of staged bundle `bundle`
 * (docs/semantics.md#staged-bundles): `<bundle>-<first 8 digits of the revision>`, the bundle's
 * name shortened to fit a DNS label; `attempt` > 1 adds `-<attempt>` (the name was taken).
 */
export function stagedRunName(
  bundle: string,
  revision: string,
  attempt = 1,
): string {
  const suffix = `-${revision.slice(0, 8)}${attempt > 1 ? `-${String(attempt)}` : ""}`;
  const head = bundle.slice(0, MAX_RUN_NAME - suffix.length).replace(/-+$/, "");
  return `${head}${suffix}`;
}

/** The driver of a staged bundle's new revision before its run exists. */
export function pendingDriver(
  bundle: string,
  revision: string,
  contents: Readonly<Record<string, string>>,
): BundleDriver {
  return {
    run: stagedRunName(bundle, revision),
    revision,
    contents,
    pending: true,
  };
}

/**
 * How a run stops driving a bundle: it `completed` (or was skipped), it was `deleted`, or its
 * creation `failed` after it was recorded as the driver.
 */
export type LetGoCause = "completed" | "deleted" | "failed";

/**
 * The record of a bundle `run` no longer drives because of `cause`; undefined when nothing changes
 * (`run` does not drive it). A staged bundle (docs/semantics.md#staged-bundles) goes back to its
 * partitions only when the run completed: a deleted run leaves it held where it is, and a run
 * whose creation failed is made again (the driver is pending once more).
 */
export function releasedRecord(
  record: BundleRecord,
  run: string,
  cause: LetGoCause = "completed",
): BundleRecord | undefined {
  const driver = record.drivenBy;
  if (driver?.run !== run) return undefined;
  if (record.updateStrategyName !== undefined && cause !== "completed") {
    if (cause === "deleted" || driver.pending === true) return undefined;
    return { ...record, drivenBy: { ...driver, pending: true } };
  }
  const rest: { -readonly [K in keyof BundleRecord]: BundleRecord[K] } = {
    ...record,
  };
  delete rest.drivenBy;
  return rest;
}

/**
 * `record` driven by no run: a rollback takes the bundle from the run that drove it
 * (docs/semantics.md#rolling-back-a-bundle).
 */
export function withoutDriver(record: BundleRecord): BundleRecord {
  if (record.drivenBy === undefined) return record;
  const rest: { -readonly [K in keyof BundleRecord]: BundleRecord[K] } = {
    ...record,
  };
  delete rest.drivenBy;
  return rest;
}
