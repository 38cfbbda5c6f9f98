/**
 * A bundle's revisions and rollback for people (docs/semantics.md#rolling-back-a-bundle): the
 * `bundle history` table and the "rolled back from X to Y" line of `bundle get` and `bundle list`.
 */
import type { wire } from "@flotilla/protocol";
import { enumWord } from "./enum-word.js";
import type { RenderOptions } from "./options.js";
import { renderTable, type Column } from "./table.js";
import { formatAgo } from "./time.js";

/** The first 12 characters of a revision. */
function short(revision: string): string {
  return revision.slice(0, 12);
}

/** `Manual`, `FailureBudget`, … */
export function causeWord(cause: wire.BundleRollback__Output["cause"]): string {
  return enumWord(cause, "ROLLBACK_CAUSE_");
}

/**
 * `rolled back from X to Y (Manual, by alice, 2m ago)`, with `: N of M clusters back` when the
 * progress is known (GetBundle).
 */
export function rollbackLine(
  rolled: wire.BundleRollback__Output,
  nowMs: number,
  withProgress: boolean,
): string {
  const by = rolled.actor === "" ? "by the hub" : `by ${rolled.actor}`;
  const head = `rolled back from ${short(rolled.fromRevision)} to ${short(rolled.toRevision)} (${causeWord(rolled.cause)}, ${by}, ${formatAgo(rolled.atMs, nowMs)})`;
  const tail = withProgress
    ? `: ${String(rolled.clustersBack)} of ${String(rolled.clustersTouched)} clusters back`
    : "";
  const why = rolled.message === "" ? "" : ` — ${rolled.message}`;
  return `${head}${tail}${why}`;
}

/** The `bundle history` table: the current revision first, then the earlier ones kept. */
export function revisionTable(
  revisions: readonly wire.BundleRevision__Output[],
  options: RenderOptions,
  nowMs: number,
): string[] {
  const columns: Column<wire.BundleRevision__Output>[] = [
    { header: "REVISION", cell: (r) => short(r.revision) },
    { header: "STORED", cell: (r) => formatAgo(r.storedAtMs, nowMs) },
    {
      header: "GOOD",
      cell: (r) =>
        r.readyAtMs === undefined
          ? "no"
          : `yes (Ready ${formatAgo(r.readyAtMs, nowMs)})`,
    },
    { header: "CURRENT", cell: (r) => (r.current ? "*" : "") },
  ];
  return renderTable(columns, revisions, options.style);
}
