/**
 * Which bundle content must be kept: the objects that bundle records and cluster intents
 * reference. This is the one place that turns references into object names (with the
 * publisher's `contentName`: sealed content is named after its key), so that how content is
 * named and what is collected cannot disagree. `referencedContentNames` is the rule;
 * `fleetContentReferences` applies it to the hub's state.
 */
import type { ClusterIntent } from "@flotilla/core";
import { isSha256Digest } from "@flotilla/protocol";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import type { IntentWriter } from "../intents/intent-writer.js";
import type { StateStore } from "../store/state-store.js";
import type { BundleRecord } from "./bundle-record.js";
import { loadBundleRecords } from "./bundle-store.js";

/** How content is named in the store: the publisher's `contentName`. */
export type ContentNameOf = (digest: string) => string;

/** The object names of the content `record` references: its manifests, files and rendered contents. */
export function contentNamesOf(
  record: BundleRecord,
  nameOf: ContentNameOf,
): Set<string> {
  return referencedContentNames([record], [], nameOf);
}

/**
 * The object names referenced by `records` (manifests and rendered content of each bundle's
 * current revision, of the run driving it and of the earlier revisions it keeps) and by `intents` (the revision each cluster holds, which during a rollout
 * may be an older one), leaving out bundle `except` (one being deleted) in both.
 */
export function referencedContentNames(
  records: Iterable<BundleRecord>,
  intents: Iterable<ClusterIntent>,
  nameOf: ContentNameOf,
  except?: string,
): Set<string> {
  const names = new Set<string>();
  const add = (digest: string): void => {
    // A stored digest that is not one names nothing the store holds.
    if (isSha256Digest(digest)) names.add(nameOf(digest));
  };
  for (const record of records) {
    if (record.name === except) continue;
    for (const manifest of record.manifests) add(manifest.digest);
    for (const file of record.files ?? []) add(file.digest);
    for (const digest of Object.values(record.contents)) add(digest);
    // The revision a staged run rolls out, kept while the bundle's current revision moves on.
    for (const digest of Object.values(record.drivenBy?.contents ?? {}))
      add(digest);
    // Earlier revisions kept to roll back to (docs/semantics.md#rolling-back-a-bundle).
    for (const earlier of record.history ?? []) {
      for (const manifest of earlier.manifests) add(manifest.digest);
      for (const file of earlier.files ?? []) add(file.digest);
      for (const digest of Object.values(earlier.contents)) add(digest);
    }
  }
  for (const intent of intents) {
    for (const [bundle, held] of Object.entries(intent.bundles)) {
      if (bundle !== except) add(held.digest);
    }
  }
  return names;
}

/**
 * What the hub references now: every stored bundle record, and the intent of every cluster of
 * the fleet (read through the IntentWriter, so that a change being published is waited for).
 */
export async function fleetContentReferences(
  deps: {
    readonly store: StateStore;
    readonly intents: IntentWriter;
    readonly directory: ClusterDirectory;
    readonly nameOf: ContentNameOf;
  },
  except: string | undefined,
): Promise<Set<string>> {
  const records = (await loadBundleRecords(deps.store)).map(
    (entry) => entry.value,
  );
  const intents: ClusterIntent[] = [];
  for (const cluster of deps.directory.clusters()) {
    const current =
      deps.intents.peek(cluster.name) ??
      (await deps.intents.current(cluster.name));
    intents.push(current.intent);
  }
  return referencedContentNames(records, intents, deps.nameOf, except);
}
