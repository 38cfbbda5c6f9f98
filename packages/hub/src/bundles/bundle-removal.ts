/**
 * Deleting a bundle: out of every cluster's intent first (a crash in between leaves a record
 * whose deletion can be asked again, never an intent naming a bundle that no longer exists),
 * then its record. Both are writes, and a full JetStream store refuses every write, even a
 * delete marker; so when the store is full, the bundle's own content (what no other bundle or
 * intent references) and content past its grace are removed first, which writes nothing, and the
 * deletion is tried again. Deleting a bundle must stay possible when nothing else is.
 */
import { FlotillaError, showValue } from "@flotilla/core";
import type { StateStore } from "../store/state-store.js";
import { removeEverywhere, type PassDeps } from "./bundle-passes.js";
import type { BundleRecord } from "./bundle-record.js";
import { deleteBundleRecord } from "./bundle-store.js";
import type { ContentCollector } from "./content-collector.js";
import { contentNamesOf } from "./content-references.js";

/** What a removal writes and frees. */
export interface RemovalDeps {
  readonly pass: PassDeps;
  readonly store: StateStore;
  readonly collector: ContentCollector;
}

/** A stored bundle: its record and the record's revision in the store. */
export interface StoredBundle {
  readonly record: BundleRecord;
  readonly entryRevision: number;
}

/**
 * Removes `bundle` from every intent and deletes its record; resolves with the number of
 * clusters whose intent changed. Its content is collected afterwards (in the background).
 */
export async function removeBundle(
  deps: RemovalDeps,
  bundle: StoredBundle,
): Promise<number> {
  const { name } = bundle.record;
  const remove = async (): Promise<number> => {
    const removed = await removeEverywhere(deps.pass, name);
    await deleteBundleRecord(deps.store, name, bundle.entryRevision);
    return removed;
  };
  const fresh = contentNamesOf(bundle.record, (digest) =>
    deps.collector.contentName(digest),
  );
  let removed: number;
  try {
    removed = await remove();
  } catch (error) {
    if (!isStoreFull(error)) throw error;
    const freed = await deps.collector.collect({ except: name, fresh });
    deps.pass.log.warn(
      { bundle: name, ...freed },
      "The store is full: freed the bundle's content before deleting it",
    );
    try {
      removed = await remove();
    } catch (again) {
      if (!isStoreFull(again)) throw again;
      throw new FlotillaError(
        "resource_exhausted",
        `Cannot delete bundle ${showValue(name)}: the JetStream store is still full after removing ${String(freed.objects)} objects (${String(freed.sizeBytes)} bytes) that nothing else references; delete a bundle with content of its own, or give JetStream more storage`,
        { cause: again },
      );
    }
  }
  void deps.collector.collectQuietly({ fresh });
  return removed;
}

function isStoreFull(error: unknown): boolean {
  return error instanceof FlotillaError && error.code === "resource_exhausted";
}
