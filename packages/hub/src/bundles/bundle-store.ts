/**
 * Writing a checked bundle: manifests, renderer input files and rendered content into the object store first (content-
 * addressed, so a write that fails later leaves only unreferenced objects), then the record with
 * compare-and-set. Applying identical content again changes nothing and keeps the revision.
 */
import {
  canonicalJson,
  compact,
  FlotillaError,
  showValue,
} from "@flotilla/core";
import type { IntentPublisher } from "../intents/intent-publisher.js";
import {
  isRevisionConflict,
  type Entry,
  type StateStore,
} from "../store/state-store.js";
import type {
  DeployOptionTexts,
  PreparedBundle,
  PreparedManifest,
} from "./bundle-input.js";
import {
  BUNDLES,
  bundleKey,
  type BundleRecord,
  type ManifestRef,
} from "./bundle-record.js";
import { bundleRevision, renderContent } from "./bundle-render.js";
import { pendingDriver } from "./bundle-runs.js";
import { DEFAULT_REVISION_HISTORY, withHistory } from "./bundle-history.js";

/** What {@link writeBundle} needs. */
export interface BundleWriteDeps {
  readonly store: StateStore;
  readonly publisher: Pick<IntentPublisher, "putBundleContent">;
  readonly now: () => number;
}

/** A bundle as stored by {@link writeBundle}. */
export interface WrittenBundle {
  readonly record: BundleRecord;
  /** The StateStore revision of the record (for compare-and-set). */
  readonly entryRevision: number;
  /** True when the revision is new (the content changed, or the bundle is new). */
  readonly changed: boolean;
  /**
   * Set when nothing was stored because the revision is the one the bundle was rolled back from
   * ({@link WriteOptions.skipRolledBack}).
   */
  readonly skippedRolledBack?: string;
}

/** How {@link writeBundle} treats revision history (docs/semantics.md#rolling-back-a-bundle). */
export interface WriteOptions {
  /** Earlier revisions the record keeps; default DEFAULT_REVISION_HISTORY. */
  readonly revisionHistory?: number;
  /**
   * A sync of a source (a GitRepo) rather than an operator's apply: the revision the bundle was
   * rolled back from is not stored again, and the same revision keeps `rolledBack`.
   */
  readonly skipRolledBack?: boolean;
}

/**
 * Whether a new revision written over `previous` (undefined: a new bundle) is held for a staged
 * run the hub makes (docs/semantics.md#staged-bundles).
 */
export type StagePolicy = (previous: BundleRecord | undefined) => boolean;

/** Compare-and-set attempts before an apply gives up on a record that keeps changing. */
const MAX_ATTEMPTS = 5;

/** The revision of `bundle` whose renderer input files are stored as `files`. */
export function preparedRevision(
  bundle: PreparedBundle,
  files: readonly { readonly path: string; readonly digest: string }[],
): string {
  return bundleRevision(
    bundle.objects,
    bundle.spec.defaultNamespace,
    bundle.spec.targetNamespace,
    bundle.targetCustomizationsValue,
    files,
    bundle.helm,
    bundle.kustomize,
    bundle.spec,
  );
}

/**
 * Stores `bundle`; resolves with what is stored now. `onStored` hears the digest of every content
 * it stored, so that a caller whose write fails later can collect what is left unreferenced.
 */
export async function writeBundle(
  deps: BundleWriteDeps,
  bundle: PreparedBundle,
  signal?: AbortSignal,
  onStored: (digest: string) => void = () => undefined,
  stage: StagePolicy = () => false,
  writeOptions: WriteOptions = {},
): Promise<WrittenBundle> {
  const limit = writeOptions.revisionHistory ?? DEFAULT_REVISION_HISTORY;
  const options = compact({ signal });
  const put = async (bytes: Uint8Array): Promise<string> => {
    const digest = await deps.publisher.putBundleContent(bytes, options);
    onStored(digest);
    return digest;
  };
  const stored = async (
    list: readonly PreparedManifest[],
  ): Promise<ManifestRef[]> => {
    const refs: ManifestRef[] = [];
    for (const m of list) {
      refs.push(
        m.ref ?? {
          path: m.path,
          digest: await put(m.bytes),
          sizeBytes: m.bytes.byteLength,
        },
      );
    }
    return refs;
  };
  const manifests = await stored(bundle.manifests);
  const files = await stored(bundle.files);
  const revision = preparedRevision(bundle, files);
  const key = bundleKey(bundle.name);
  // The same revision keeps its stored content: a packaged chart differs from byte to byte
  // between two packagings of the same files (timestamps), and must not look like new content.
  const current = (await deps.store.get(BUNDLES, key, options))?.value;
  const contents =
    current?.revision === revision &&
    sameKeys(current.contents, bundle.variants)
      ? current.contents
      : await storeContents(bundle, revision, put);
  for (let attempt = 1; ; attempt++) {
    const entry = await deps.store.get(BUNDLES, key, options);
    const previous = entry?.value;
    const now = deps.now();
    if (
      writeOptions.skipRolledBack === true &&
      entry !== undefined &&
      entry.value.rolledBack?.from === revision
    ) {
      return {
        record: entry.value,
        entryRevision: entry.revision,
        changed: false,
        skippedRolledBack: revision,
      };
    }
    const built: BundleRecord = {
      name: bundle.name,
      namespace: bundle.spec.defaultNamespace,
      defaultNamespace: bundle.spec.defaultNamespace,
      targetNamespace: bundle.spec.targetNamespace,
      manifests,
      ...compact({
        files: files.length === 0 ? undefined : files,
        helmJson: bundle.helmJson === "" ? undefined : bundle.helmJson,
        kustomizeJson:
          bundle.kustomizeJson === "" ? undefined : bundle.kustomizeJson,
        ...optionTexts(bundle.optionsJson),
      }),
      targetsJson: bundle.targetsJson,
      targetCustomizationsJson: bundle.targetCustomizationsJson,
      rolloutStrategyJson: bundle.rolloutStrategyJson,
      paused: bundle.spec.paused,
      revision,
      contents,
      createdAtMs: previous?.createdAtMs ?? now,
      updatedAtMs: now,
      // Labels and dependsOn are not content: they change the record, not the revision.
      ...compact({
        labels: bundle.spec.labels,
        dependsOnJson:
          bundle.dependsOnJson === "" ? undefined : bundle.dependsOnJson,
        updateStrategyName: bundle.updateStrategyName,
      }),
      // Redeploys and the run driving the bundle are not content: an apply keeps them. A new
      // revision of a staged bundle is held for the run the hub makes of it, in this same write,
      // so that no pass releases it first (docs/semantics.md#staged-bundles).
      ...compact({
        forceSyncGeneration: previous?.forceSyncGeneration,
        forceSyncClusters: previous?.forceSyncClusters,
        drivenBy:
          previous?.revision !== revision && stage(previous)
            ? pendingDriver(bundle.name, revision, contents)
            : previous?.drivenBy,
        // A sync that stores the current revision again keeps the rollback that made it current;
        // an operator's apply clears it (docs/semantics.md#rolling-back-a-bundle).
        rolledBack:
          writeOptions.skipRolledBack === true &&
          previous?.revision === revision
            ? previous.rolledBack
            : undefined,
      }),
    };
    const record = withHistory(previous, built, limit, now);
    const changed = previous?.revision !== revision;
    if (entry !== undefined && sameRecord(entry.value, record)) {
      return {
        record: entry.value,
        entryRevision: entry.revision,
        changed: false,
      };
    }
    try {
      const entryRevision = await deps.store.put(BUNDLES, key, record, {
        ...options,
        expectedRevision: entry?.revision ?? 0,
      });
      return { record, entryRevision, changed };
    } catch (error) {
      if (!isRevisionConflict(error) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/** Renders and stores every content a target can get; digests by `contents` key (bundle-render.ts). */
async function storeContents(
  bundle: PreparedBundle,
  revision: string,
  put: (bytes: Uint8Array) => Promise<string>,
): Promise<Record<string, string>> {
  const contents: Record<string, string> = {};
  for (const variant of bundle.variants) {
    const bytes = renderContent(bundle.name, revision, variant);
    contents[variant.key] = await put(bytes);
  }
  return contents;
}

/** Whether `contents` has exactly the keys of `variants`. */
function sameKeys(
  contents: Readonly<Record<string, string>>,
  variants: PreparedBundle["variants"],
): boolean {
  const keys = Object.keys(contents);
  return (
    keys.length === variants.length &&
    variants.every((v) => contents[v.key] !== undefined)
  );
}

// Equal apart from the timestamps: nothing to write.
function sameRecord(a: BundleRecord, b: BundleRecord): boolean {
  const strip = (r: BundleRecord): unknown => ({
    ...r,
    createdAtMs: 0,
    updatedAtMs: 0,
  });
  return canonicalJson(strip(a)) === canonicalJson(strip(b));
}

/** Every stored bundle record. */
export function loadBundleRecords(
  store: StateStore,
): Promise<Entry<BundleRecord>[]> {
  return store.list(BUNDLES);
}

/** Deletes bundle `name`'s record if it is still at `expectedRevision`. */
export function deleteBundleRecord(
  store: StateStore,
  name: string,
  expectedRevision: number,
): Promise<void> {
  return store.delete(BUNDLES, bundleKey(name), { expectedRevision });
}

/**
 * Changes the stored record of bundle `name` with compare-and-set, retrying on a concurrent write:
 * `change` gets the stored record and answers the new one, or undefined when nothing is to change.
 * Neither the revision nor the content is touched here (pause, resume, redeploy). NOT_FOUND when
 * the bundle does not exist.
 */
export async function updateBundleRecord(
  deps: Pick<BundleWriteDeps, "store" | "now">,
  name: string,
  change: (record: BundleRecord) => BundleRecord | undefined,
): Promise<WrittenBundle> {
  const key = bundleKey(name);
  for (let attempt = 1; ; attempt++) {
    const entry = await deps.store.get(BUNDLES, key);
    if (entry === undefined) {
      throw new FlotillaError(
        "not_found",
        `Bundle ${showValue(name)} does not exist`,
      );
    }
    const next = change(entry.value);
    if (next === undefined)
      return {
        record: entry.value,
        entryRevision: entry.revision,
        changed: false,
      };
    const record = { ...next, updatedAtMs: deps.now() };
    try {
      const entryRevision = await deps.store.put(BUNDLES, key, record, {
        expectedRevision: entry.revision,
      });
      return { record, entryRevision, changed: true };
    } catch (error) {
      if (!isRevisionConflict(error) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/** The deployment-option texts of a record, those not given left out. */
function optionTexts(texts: DeployOptionTexts): Partial<DeployOptionTexts> {
  return Object.fromEntries(
    Object.entries(texts).filter(([, text]) => text !== ""),
  );
}
