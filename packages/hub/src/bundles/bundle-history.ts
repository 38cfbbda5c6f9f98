/**
 * A bundle's revision history and rollbacks (docs/semantics.md#rolling-back-a-bundle): the record
 * keeps its last earlier revisions, each with the content-defining fields its revision hash covers
 * and its rendered contents, so that a rollback can make one current again without the original
 * files. Pure functions over records; bundle-rollback.ts stores them.
 */
import { compact, FlotillaError, showValue } from "@flotilla/core";
import type {
  BundleContentFields,
  BundleRevisionEntry,
  BundleRevisionView,
  BundleRollback,
} from "@flotilla/protocol";
import type { BundleRecord } from "./bundle-record.js";

/** Earlier revisions a record keeps unless the hub is told otherwise (`--bundle-revision-history`). */
export const DEFAULT_REVISION_HISTORY = 10;

/** Fields of a record that a rollback replaces, or drops when the target has none. */
const REPLACED: ReadonlySet<string> = new Set([
  "defaultNamespace",
  "targetNamespace",
  "files",
  "helmJson",
  "kustomizeJson",
  "namespaceLabelsJson",
  "namespaceAnnotationsJson",
  "readyAtMs",
  "history",
]);

/** The content-defining fields of `record` (its current revision's). */
export function contentFieldsOf(
  record: BundleContentFields,
): BundleContentFields {
  return {
    namespace: record.namespace,
    manifests: record.manifests,
    targetCustomizationsJson: record.targetCustomizationsJson,
    revision: record.revision,
    contents: record.contents,
    ...compact({
      defaultNamespace: record.defaultNamespace,
      targetNamespace: record.targetNamespace,
      files: record.files,
      helmJson: record.helmJson,
      kustomizeJson: record.kustomizeJson,
      namespaceLabelsJson: record.namespaceLabelsJson,
      namespaceAnnotationsJson: record.namespaceAnnotationsJson,
    }),
  };
}

/** The current revision of `record` as a history entry. */
function entryOf(record: BundleRecord): BundleRevisionEntry {
  return {
    ...contentFieldsOf(record),
    storedAtMs: record.storedAtMs ?? record.updatedAtMs,
    ...compact({ readyAtMs: record.readyAtMs }),
  };
}

/** `history` without `revisions`, at most `limit` long (oldest dropped). */
function trimmed(
  history: readonly BundleRevisionEntry[],
  without: ReadonlySet<string>,
  limit: number,
): BundleRevisionEntry[] {
  return history.filter((e) => !without.has(e.revision)).slice(0, limit);
}

/**
 * `next` (a record an apply built, for the same bundle as `previous`) with the history fields: a
 * new revision pushes the previous current one into the history (deduplicated by revision, at
 * most `limit` kept, oldest dropped) and is stored at `nowMs`; the same revision keeps them.
 */
export function withHistory(
  previous: BundleRecord | undefined,
  next: BundleRecord,
  limit: number,
  nowMs: number,
): BundleRecord {
  if (previous === undefined) return { ...next, storedAtMs: nowMs };
  if (previous.revision === next.revision) {
    return {
      ...next,
      ...compact({
        storedAtMs: previous.storedAtMs,
        readyAtMs: previous.readyAtMs,
        history: previous.history,
      }),
    };
  }
  const history = trimmed(
    [entryOf(previous), ...(previous.history ?? [])],
    new Set([next.revision]),
    limit,
  );
  return {
    ...next,
    storedAtMs: nowMs,
    ...(history.length === 0 ? {} : { history }),
  };
}

/** The revisions of `record`, the current one first, then its history newest first. */
export function revisionViews(record: BundleRecord): BundleRevisionView[] {
  return [
    {
      revision: record.revision,
      storedAtMs: record.storedAtMs ?? record.updatedAtMs,
      ...compact({ readyAtMs: record.readyAtMs }),
      current: true,
    },
    ...(record.history ?? []).map((e) => ({
      revision: e.revision,
      storedAtMs: e.storedAtMs,
      ...compact({ readyAtMs: e.readyAtMs }),
      current: false,
    })),
  ];
}

/**
 * The history entry a rollback of `record` goes to: `to` (a revision or an unambiguous prefix of
 * one), else the newest earlier revision that was good, else the newest earlier one. Refused
 * (nothing is stored) when there is no earlier revision, when `to` names none of them or several,
 * or when it names the current revision.
 */
export function rollbackTarget(
  record: BundleRecord,
  to: string,
): BundleRevisionEntry {
  const name = showValue(record.name);
  const history = record.history ?? [];
  if (to === "") {
    const target = history.find((e) => e.readyAtMs !== undefined) ?? history[0];
    if (target === undefined)
      throw new FlotillaError(
        "failed_precondition",
        `Cannot roll back bundle ${name}: it keeps no earlier revision (current ${showValue(record.revision)})`,
      );
    return target;
  }
  const kept = (): string =>
    revisionViews(record)
      .map((v) => `${v.revision}${v.current ? " (current)" : ""}`)
      .join(", ");
  const matches = history.filter((e) => e.revision.startsWith(to));
  const current = record.revision.startsWith(to);
  const only = matches.length === 1 && !current ? matches[0] : undefined;
  if (only !== undefined) return only;
  const why =
    matches.length === 0 && current
      ? `is the current revision of bundle ${record.name}: roll back to an earlier one`
      : matches.length === 0
        ? `is not a revision bundle ${record.name} keeps`
        : `matches several revisions of bundle ${record.name}: give more of it`;
  throw FlotillaError.invalid("rollback", [
    {
      path: "toRevision",
      message: `${why}; revisions kept: ${kept()}`,
      value: to,
    },
  ]);
}

/**
 * `record` rolled back to `target` (one of its history entries): the target's content-defining
 * fields become current, the current revision goes into the history (at most `limit` kept) and
 * `rollback` is recorded. Nothing else (targets, rollout strategy, labels, pause) changes.
 */
export function rolledBackRecord(
  record: BundleRecord,
  target: BundleRevisionEntry,
  rollback: BundleRollback,
  limit: number,
): BundleRecord {
  // The current revision's optional content fields go: the target's own (maybe absent) replace them.
  const rest = Object.fromEntries(
    Object.entries(record).filter(([key]) => !REPLACED.has(key)),
  ) as unknown as BundleRecord;
  const history = trimmed(
    [entryOf(record), ...(record.history ?? [])],
    new Set([target.revision]),
    limit,
  );
  const { readyAtMs, storedAtMs, ...fields } = target;
  return {
    ...rest,
    ...fields,
    storedAtMs,
    ...compact({ readyAtMs }),
    ...(history.length === 0 ? {} : { history }),
    rolledBack: rollback,
  };
}
