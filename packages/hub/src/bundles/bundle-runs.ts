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

/** The record of a bundle `run` no longer drives; undefined when `run` does not drive it. */
export function releasedRecord(
  record: BundleRecord,
  run: string,
): BundleRecord | undefined {
  if (record.drivenBy?.run !== run) return undefined;
  const rest: { -readonly [K in keyof BundleRecord]: BundleRecord[K] } = {
    ...record,
  };
  delete rest.drivenBy;
  return rest;
}
