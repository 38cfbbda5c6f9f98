/**
 * Bundles with Fleet-style partitioned rollouts (docs/semantics.md#partitioned-rollouts): stores
 * each bundle (spec + current revision, compare-and-set in the "bundles" collection), keeps the
 * latest agent reports, and runs passes that release the current revision into cluster intents.
 * Passes run on every counted status report and fleet change (coalesced, see pass-loop.ts) and on
 * an interval.
 *
 * State: bundle records are in the StateStore; which revision each cluster was released is in
 * its intent (read through the IntentWriter); agent reports are in memory only (see
 * bundle-observations.ts for why that is safe after a restart). One hub writes bundles: records
 * are read at start and kept in memory, and writes are compare-and-set.
 */
import {
  bundleSpecWarnings,
  bundleTargets,
  compact,
  FlotillaError,
  gatesAfter,
  type Cluster,
  matchesSelector,
  planFleet,
  showValue,
  type FleetBundleSpec,
  type LabelSelector,
  type PassResult,
  type PlanOutput,
  type PlanWarning,
} from "@flotilla/core";
import type { RollbackCause, StatusReport, wire } from "@flotilla/protocol";
import {
  drivenRecord,
  isReadyAt,
  releasedRecord,
  runRevision,
  withoutDriver,
} from "./bundle-runs.js";
import type { RunBundles } from "../runs/run-bundles.js";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import type { IntentPublisher } from "../intents/intent-publisher.js";
import type { IntentWriter } from "../intents/intent-writer.js";
import type { Logger } from "../logger.js";
import type { StateStore } from "../store/state-store.js";
import {
  prepareBundle,
  storedBundleSpec,
  type PreparedBundle,
} from "./bundle-input.js";
import { BundleObservations } from "./bundle-observations.js";
import {
  evaluateBundle,
  observeBundle,
  releaseRevision,
  runBundlePass,
  type PassDeps,
} from "./bundle-passes.js";
import { removeBundle } from "./bundle-removal.js";
import {
  cycleProblem,
  dependentNames,
  withDependencies,
} from "./bundle-dependencies.js";
import { redeployed, redeployProblems } from "./bundle-redeploy.js";
import { BUNDLES, type BundleRecord } from "./bundle-record.js";
import {
  DEFAULT_REVISION_HISTORY,
  revisionViews,
  rollbackTarget,
  rolledBackRecord,
} from "./bundle-history.js";
import { isGood, rollbackProgress } from "./bundle-rollback.js";
import { followCollection } from "../store/follow-collection.js";
import {
  bundleStatus,
  countsOf,
  type RunMemberOf,
  type BundleStatus,
  type BundleSummary,
} from "./bundle-status.js";
import {
  loadBundleRecords,
  updateBundleRecord,
  writeBundle,
} from "./bundle-store.js";
import {
  createContentCollector,
  DEFAULT_CONTENT_GC,
  type ContentGcOptions,
} from "./content-collector.js";
import { fleetContentReferences } from "./content-references.js";
import type { ObjectReader } from "./object-reader.js";
import type { ContentKeys } from "../security/content-keys.js";
import { createPassLoop, type PassBatch } from "./pass-loop.js";
import type { HelmSupport } from "./helm-chart.js";
import type { KustomizeSupport } from "./kustomize.js";
import {
  clusterBundles,
  renderApplied,
  renderPrepared,
  type ClusterBundle,
} from "./bundle-views.js";
import type { ClusterRender } from "./cluster-render.js";
import type { PartitionGates } from "./partition-gates.js";

/** What bundles need of the intent publisher's content store. */
export type BundleContentStore = Pick<
  IntentPublisher,
  | "putBundleContent"
  | "listBundleContent"
  | "removeBundleContent"
  | "contentName"
>;

/** What the bundle manager needs from the hub. */
export interface BundleManagerDeps {
  readonly store: StateStore;
  readonly intents: IntentWriter;
  /**
   * Where rendered content and inline manifests go (agents fetch content by digest), and where
   * content nothing references any more is collected from.
   */
  readonly publisher: BundleContentStore;
  /** Reads manifests uploaded with PutObject (createJetStreamObjectReader, objectReaderOf). */
  readonly objects: ObjectReader;
  /** The key of each content, for the intents (security/content-keys.ts). */
  readonly contentKeys: Pick<ContentKeys, "keyOf">;
  readonly directory: ClusterDirectory;
  readonly now: () => number;
  /** The component's logger (lines carry `bundleName`, `clusterName`, `revision`). */
  readonly log: Logger;
  /** Starts a repeating timer and returns its cancel; default `setInterval` (unref'd). */
  readonly every?: (intervalMs: number, tick: () => void) => () => void;
  /**
   * Whether this hub runs passes now: with several replicas only the owner of the bundles lease
   * does (docs/high-availability.md); default always.
   */
  readonly runsPasses?: () => boolean;
  /** helm and the chart fetcher for Helm bundles (helm-chart.ts); absent: they are refused. */
  readonly helm?: HelmSupport;
  /** kubectl for Kustomize bundles (kustomize.ts); absent: they are refused. */
  readonly kustomize?: KustomizeSupport;
  /** A cluster's place in a staged run, for the status of a bundle the run drives. */
  readonly runMember?: RunMemberOf;
  /**
   * Makes the runs of staged bundles (docs/semantics.md#staged-bundles); absent: a bundle with an
   * update strategy is refused.
   */
  readonly stagedRuns?: StagedRunMaker;
  /** Whether update run `run` exists (a bundle its run drives cannot be deleted); default yes. */
  readonly runExists?: (run: string) => boolean;
  /**
   * Stops the staged run driving a bundle that is rolled back to `revision`, its members in flight
   * Skipped with reason RolledBack (docs/semantics.md#rolling-back-a-bundle); absent: such a
   * rollback is refused.
   */
  readonly stopRolledBackRun?: (
    run: string,
    revision: string,
    actor: { readonly actor: string; readonly reason: string },
  ) => Promise<void>;
  /**
   * The metric gates between partitions (docs/semantics.md#partition-gates); absent: a bundle
   * whose rolloutStrategy has gates is refused.
   */
  readonly partitionGates?: PartitionGates;
}

/** A staged bundle's revision waiting for its run. */
export interface PendingDriver {
  readonly bundle: string;
  /** The name the apply chose (taken names get a `-N` suffix). */
  readonly run: string;
  readonly revision: string;
  /** The bundle's update strategy; absent when it was taken off since. */
  readonly strategy?: string;
}

/** What makes the run of a staged bundle's new revision (the hub wires the run manager). */
export interface StagedRunMaker {
  /**
   * Checks, before anything is stored, that a run of `strategy` over `targets` could be made:
   * INVALID_ARGUMENT at `bundle.updateStrategyName` for a strategy that does not exist or that
   * selects none of the targets.
   */
  check(bundle: string, strategy: string, targets: readonly Cluster[]): void;
  /**
   * Makes and starts the run of the revision bundle `name`'s pending driver names, and stops the
   * bundle's earlier runs still in flight (superseded). Nothing when no driver is pending.
   */
  make(name: string, reason: string): Promise<void>;
  /** The plan of a run of `strategy` over `targets` (a staged bundle's preview). */
  plan(strategy: string, targets: readonly Cluster[]): PlanOutput;
}

export interface BundleManagerOptions {
  /**
   * When set, the manager itself gives every bundle a pass this often (docs/semantics.md#releasing
   * "every few seconds"), with `deps.every`. When absent, its owner calls `tick()` on its own
   * interval (the hub does, on its pass interval).
   */
  readonly passIntervalMs?: number;
  /** How unreferenced bundle content is collected; default {@link DEFAULT_CONTENT_GC}. */
  readonly contentGc?: ContentGcOptions;
  /**
   * Earlier revisions each record keeps to roll back to (docs/semantics.md#rolling-back-a-bundle);
   * default {@link DEFAULT_REVISION_HISTORY}.
   */
  readonly revisionHistory?: number;
}

/** What RollbackBundle asks for (docs/semantics.md#rolling-back-a-bundle). */
export interface RollbackRequest {
  /** A revision kept (or an unambiguous prefix); "" for the newest earlier good one. */
  readonly to: string;
  readonly allAtOnce: boolean;
  readonly cause: RollbackCause;
  /** Why: the operator's reason, or what failed. */
  readonly message: string;
  /** Who asks; "" for the hub itself. */
  readonly actor: string;
}

/** What ApplyBundle answers. */
export interface ApplyResult {
  readonly bundle: BundleSummary;
  /** False when the content (hence the revision) is unchanged. */
  readonly changed: boolean;
  readonly warnings: readonly PlanWarning[];
}

/** What PauseBundle, ResumeBundle and RedeployBundle answer. */
export interface RecordChange {
  readonly bundle: BundleSummary;
  /** False when the stored record already said so. */
  readonly changed: boolean;
}

/** Staged runs of bundle revisions (docs/semantics.md#staged-bundle-runs): see {@link RunBundles}. */
export interface BundleManager extends RunBundles {
  /** Loads stored bundles and resumes their rollouts. */
  start(): Promise<void>;
  /** Stops the interval and waits for the running pass. */
  stop(): Promise<void>;
  /** Creates or updates a bundle; INVALID_ARGUMENT (nothing stored) for a bad spec. */
  apply(
    spec: wire.BundleSpec__Output | null | undefined,
    reason: string,
    options?: {
      readonly signal?: AbortSignal;
      /**
       * A sync of a source (a GitRepo): the revision the bundle was rolled back from is not stored
       * again (docs/semantics.md#rolling-back-a-bundle); the answer warns RolledBackRevision.
       */
      readonly skipRolledBack?: boolean;
    },
  ): Promise<ApplyResult>;
  /**
   * Makes an earlier revision current again; the clusters holding the current one get it back,
   * paced by the pass (docs/semantics.md#rolling-back-a-bundle). NOT_FOUND for an unknown bundle;
   * FAILED_PRECONDITION when it keeps no earlier revision; INVALID_ARGUMENT for a `to` that is not
   * kept, is ambiguous or is the current revision (nothing stored).
   */
  rollback(name: string, request: RollbackRequest): Promise<RecordChange>;
  /**
   * Checks a spec exactly as `apply` does and stores nothing: INVALID_ARGUMENT with every problem
   * (a git repository reads all its bundles before it applies any: docs/gitops.md#sync).
   */
  check(
    spec: wire.BundleSpec__Output,
    options?: { readonly signal?: AbortSignal },
  ): Promise<void>;
  /** Every bundle, by name. */
  list(): Promise<BundleSummary[]>;
  /** A bundle's status; NOT_FOUND if it does not exist. */
  get(name: string): Promise<BundleStatus>;
  /**
   * Removes the bundle from every cluster's intent, then deletes it; NOT_FOUND if absent. Works
   * on a full store (bundle-removal.ts).
   */
  delete(name: string, reason: string): Promise<void>;
  /**
   * Pauses or resumes the bundle (its stored `paused`, compare-and-set); the revision stays. A
   * paused bundle releases nothing (docs/semantics.md#pausing-a-bundle). NOT_FOUND if absent.
   */
  setPaused(
    name: string,
    paused: boolean,
    reason: string,
  ): Promise<RecordChange>;
  /**
   * Makes the agents of `clusters` (every target when empty) that hold the bundle apply it again,
   * even if nothing changed (docs/semantics.md#redeploying-a-bundle); no new revision.
   * INVALID_ARGUMENT (nothing stored) for a cluster that is not a target holding the bundle.
   */
  redeploy(
    name: string,
    clusters: readonly string[],
    reason: string,
  ): Promise<RecordChange>;
  /** Stores a PutObject upload, kept for the collection grace until an apply references it. */
  storeUpload(
    content: Uint8Array,
    options?: { readonly signal?: AbortSignal },
  ): Promise<string>;
  /**
   * What `cluster` gets from `source`: a spec (checked as apply checks it: INVALID_ARGUMENT; stored
   * nowhere) or an applied bundle's name (`revision` "" for the current one). NOT_FOUND for an
   * unknown cluster, bundle or revision (docs/bundles.md#what-a-cluster-gets).
   */
  render(
    cluster: string,
    source: RenderSource,
    options?: { readonly signal?: AbortSignal },
  ): Promise<ClusterRender>;
  /** Every bundle that targets `cluster`, with its state there; NOT_FOUND for an unknown cluster. */
  clusterBundles(cluster: string): Promise<ClusterBundle[]>;
  /** The plan of the bundle's rollout over its current targets (only those `selector` matches). */
  preview(name: string, selector?: LabelSelector): PlanOutput;
  /** A counted status report (of the cluster's current intent generation); other subjects are ignored. */
  onStatus(cluster: string, report: StatusReport): void;
  /** Takes in bundles applied or deleted through other hub replicas until `signal` aborts. */
  follow(signal: AbortSignal): Promise<void>;
  /** Clusters joined, left, were relabelled, became unreachable or reachable, or groups changed. */
  onFleetChanged(): void;
  /** Asks for a pass of every bundle (the interval calls it). */
  tick(): void;
  /** Resolves once no pass is running or waiting (tests, shutdown). */
  idle(): Promise<void>;
  /** The revision of staged bundle `name` waiting for its run (docs/semantics.md#staged-bundles). */
  stagedDriver(name: string): PendingDriver | undefined;
  /**
   * Approves gate `gate` after partition `partition` at the bundle's current revision
   * (docs/semantics.md#partition-gates): the next partitions may start whatever it measured.
   * NOT_FOUND for an unknown bundle; INVALID_ARGUMENT for a gate the partition does not have.
   */
  approveGate(
    name: string,
    partition: string,
    gate: string,
    actor: string,
  ): Promise<void>;
}

/** What RenderBundle renders: a spec not applied, or an applied bundle. */
export type RenderSource =
  | { readonly spec: wire.BundleSpec__Output | null | undefined }
  | { readonly name: string; readonly revision: string };

interface Loaded {
  readonly record: BundleRecord;
  readonly entryRevision: number;
  readonly spec: FleetBundleSpec;
  /** The last published pass of `record`, for hold reasons and partitions in status. */
  lastPass?: PassResult;
  deleting: boolean;
}

/** Least time between two batches of passes while reports keep arriving. */
export const PASS_SPACING_MS = 20;

const defaultEvery = (intervalMs: number, tick: () => void): (() => void) => {
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
  };
};

/**
 * What an apply of a staged bundle says of its run (docs/semantics.md#staged-bundles): a new
 * revision with no target makes no run.
 */
function stagedWarnings(
  prepared: PreparedBundle,
  record: BundleRecord,
  changed: boolean,
): PlanWarning[] {
  const strategy = prepared.updateStrategyName;
  if (
    strategy === undefined ||
    !changed ||
    record.drivenBy?.revision === record.revision
  )
    return [];
  return [
    {
      code: "NoStagedRun",
      message: `no cluster is a target of the bundle, so revision ${record.revision} makes no run of update strategy ${strategy}; a cluster that becomes a target gets it through the partition rollout`,
    },
  ];
}

/** A BundleManager over `deps`. */
export function createBundleManager(
  deps: BundleManagerDeps,
  options: BundleManagerOptions = {},
): BundleManager {
  const { log } = deps;
  const revisionHistory = options.revisionHistory ?? DEFAULT_REVISION_HISTORY;
  const bundles = new Map<string, Loaded>();
  const observations = new BundleObservations();
  const passDeps: PassDeps = {
    intents: deps.intents,
    contentKeys: deps.contentKeys,
    directory: deps.directory,
    observations,
    log,
  };
  const queues = new Map<string, Promise<unknown>>();
  let cancelInterval: (() => void) | undefined;
  const collector = createContentCollector(
    {
      content: deps.publisher,
      references: (except) =>
        fleetContentReferences(
          {
            ...deps,
            nameOf: (digest) => deps.publisher.contentName(digest),
          },
          except,
        ),
      now: deps.now,
      log,
      every: deps.every ?? defaultEvery,
    },
    options.contentGc ?? DEFAULT_CONTENT_GC,
  );

  // Applies and deletes of one bundle run one after another.
  const serial = <T>(name: string, task: () => Promise<T>): Promise<T> => {
    const run = (queues.get(name) ?? Promise.resolve()).then(task, task);
    const settled = run.catch(() => undefined);
    queues.set(name, settled);
    void settled.then(() => {
      if (queues.get(name) === settled) queues.delete(name);
    });
    return run;
  };

  const loaded = (name: string): Loaded => {
    const found = bundles.get(name);
    if (found === undefined || found.deleting) {
      throw new FlotillaError(
        "not_found",
        `Bundle ${showValue(name)} does not exist`,
      );
    }
    return found;
  };

  // The bundles passes see now (not being deleted).
  const live = (): Loaded[] => [...bundles.values()].filter((b) => !b.deleting);
  // `b` with the facts of the bundles it depends on (docs/semantics.md#dependencies-between-bundles).
  const subjectOf = async (b: Loaded) => {
    const subject = await withDependencies(passDeps, b, live());
    const gates = deps.partitionGates;
    if (gates === undefined || b.spec.rolloutStrategy.gates.length === 0)
      return subject;
    return {
      ...subject,
      gateRecords: await gates.recordsOf(b.record.name, b.record.revision),
    };
  };
  // A pass of `name` and of every bundle that waits for it, and no other.
  const requestWithDependents = (
    name: string,
    spec: FleetBundleSpec,
    others: readonly Loaded[] = live(),
  ): void => {
    loop.request(name);
    for (const d of dependentNames(name, spec, others)) loop.request(d);
  };

  const runBatch = async (batch: PassBatch): Promise<void> => {
    if (deps.runsPasses?.() === false) return;
    observations.retainClusters(
      new Set(deps.directory.clusters().map((c) => c.name)),
    );
    const names = batch === "all" ? [...bundles.keys()] : [...batch];
    for (const name of names.sort()) {
      const b = bundles.get(name);
      if (b === undefined || b.deleting) continue;
      try {
        const evaluation = await runBundlePass(
          passDeps,
          await subjectOf(b),
          deps.now(),
        );
        const { pass } = evaluation;
        b.lastPass = pass;
        if (b.record.readyAtMs === undefined && isGood(evaluation))
          await markGood(name, b.record.revision);
        // docs/semantics.md#partition-gates: measured by the replica that runs passes; the next
        // pass judges the partitions by the new measurements.
        if (
          pass.gateMeasurements.length > 0 &&
          b.record.drivenBy === undefined &&
          !b.spec.paused &&
          deps.partitionGates !== undefined
        ) {
          await deps.partitionGates.measure(
            name,
            b.record.revision,
            b.spec.rolloutStrategy.gates,
            pass.gateMeasurements,
          );
          loop.request(name);
        }
      } catch (err) {
        log.warn({ err, bundle: name }, "Bundle pass failed");
      }
    }
  };
  const loop = createPassLoop(
    runBatch,
    (err: unknown) => {
      log.error({ err }, "Bundle pass batch failed");
    },
    // A pass looks at every target: under a stream of reports, wait as long as the last batch
    // took (at least PASS_SPACING_MS) so reports gather and passes take at most half the hub.
    { spacingMs: (lastMs) => Math.max(PASS_SPACING_MS, lastMs) },
  );

  const summaryOf = async (b: Loaded): Promise<BundleSummary> => {
    const evaluation = await evaluateBundle(
      passDeps,
      await subjectOf(b),
      deps.now(),
    );
    return {
      record: b.record,
      counts: countsOf(evaluation, b.record.revision),
    };
  };

  const registered = (name: string): Cluster => {
    const found = deps.directory.cluster(name);
    if (found === undefined)
      throw new FlotillaError(
        "not_found",
        `Cluster ${showValue(name)} is not registered`,
      );
    return found;
  };

  // Changes the stored record (compare-and-set) and the loaded one; not serialised by itself.
  const changeStored = async (
    name: string,
    change: (record: BundleRecord) => BundleRecord | undefined,
  ): Promise<{ readonly b: Loaded; readonly changed: boolean }> => {
    const written = await updateBundleRecord(deps, name, change);
    const b: Loaded = {
      record: written.record,
      entryRevision: written.entryRevision,
      spec: storedBundleSpec(written.record),
      deleting: false,
    };
    bundles.set(name, b);
    return { b, changed: written.changed };
  };

  // Records when a pass first saw the current revision Ready on every target
  // (docs/semantics.md#rolling-back-a-bundle). Not through `serial`: a delete waits for passes
  // inside it. A newer record loaded meanwhile is kept.
  const markGood = async (name: string, revision: string): Promise<void> => {
    const now = deps.now();
    const written = await updateBundleRecord(deps, name, (record) =>
      record.revision !== revision || record.readyAtMs !== undefined
        ? undefined
        : { ...record, readyAtMs: now },
    );
    const known = bundles.get(name);
    if (
      written.changed &&
      known !== undefined &&
      !known.deleting &&
      known.entryRevision < written.entryRevision
    ) {
      bundles.set(name, {
        ...known,
        record: written.record,
        entryRevision: written.entryRevision,
      });
      log.info({ bundle: name, revision }, "Bundle revision Ready everywhere");
    }
  };

  // A change of the stored record that keeps its revision (pause, resume, redeploy).
  const changeRecord = (
    name: string,
    reason: string,
    message: string,
    change: (record: BundleRecord) => BundleRecord | undefined,
  ): Promise<RecordChange> =>
    serial(name, async () => {
      loaded(name);
      const written = await changeStored(name, change);
      const { b } = written;
      if (written.changed) {
        log.info({ bundle: name, reason }, message);
        loop.request(name);
      }
      return { bundle: await summaryOf(b), changed: written.changed };
    });

  /**
   * Whether a new revision of `prepared` is held for a staged run (docs/semantics.md#staged-bundles):
   * it has an update strategy and targets; the run that strategy makes is checked first (nothing is
   * stored when it could not be made). A staged bundle with no targets makes no run.
   */
  const stagedTargets = (prepared: PreparedBundle): boolean => {
    const strategy = prepared.updateStrategyName;
    if (strategy === undefined) return false;
    if (deps.stagedRuns === undefined) {
      throw FlotillaError.invalid("bundle", [
        {
          path: "bundle.updateStrategyName",
          message:
            "this hub makes no staged runs of bundle revisions: give rolloutStrategyJson instead",
          value: strategy,
        },
      ]);
    }
    const targets = bundleTargets(
      prepared.spec,
      deps.directory.clusters(),
      deps.directory.groups(),
    ).map((t) => t.cluster);
    if (targets.length === 0) return false;
    deps.stagedRuns.check(prepared.name, strategy, targets);
    return true;
  };

  /**
   * A bundle with partition gates on a hub that cannot measure them is refused, as such runs are
   * (docs/semantics.md#partition-gates).
   */
  const refuseUnmeasurable = (prepared: PreparedBundle): void => {
    const gates = prepared.spec.rolloutStrategy.gates;
    if (gates.length === 0 || prepared.updateStrategyName !== undefined) return;
    if (deps.partitionGates?.measurable === true) return;
    throw FlotillaError.invalid("bundle", [
      {
        path: "bundle.rolloutStrategyJson.gates",
        message: `has metric gates (${gates.map((g) => g.name).join(", ")}), but this hub has no Prometheus to measure them: start it with --prometheus-url`,
      },
    ]);
  };

  return {
    async start() {
      bundles.clear();
      for (const entry of await loadBundleRecords(deps.store)) {
        try {
          bundles.set(entry.value.name, {
            record: entry.value,
            entryRevision: entry.revision,
            spec: storedBundleSpec(entry.value),
            deleting: false,
          });
        } catch (err) {
          log.error(
            { err, bundle: entry.value.name },
            "Stored bundle is invalid; skipped",
          );
        }
      }
      cancelInterval?.();
      cancelInterval =
        options.passIntervalMs === undefined
          ? undefined
          : (deps.every ?? defaultEvery)(options.passIntervalMs, () => {
              loop.request();
            });
      loop.request();
      collector.start();
    },

    async stop() {
      cancelInterval?.();
      cancelInterval = undefined;
      await loop.stop();
      await collector.stop();
    },

    async check(spec, { signal } = {}) {
      const prepared = await prepareBundle(
        spec,
        deps.objects,
        signal,
        deps.helm,
        deps.kustomize,
      );
      refuseUnmeasurable(prepared);
      stagedTargets(prepared);
    },

    async apply(spec, reason, { signal, skipRolledBack = false } = {}) {
      const prepared = await prepareBundle(
        spec,
        deps.objects,
        signal,
        deps.helm,
        deps.kustomize,
      );
      refuseUnmeasurable(prepared);
      const staged = stagedTargets(prepared);
      const result = await serial(prepared.name, async () => {
        const cycle = cycleProblem(prepared.name, prepared.spec, live());
        if (cycle !== undefined) throw FlotillaError.invalid("bundle", [cycle]);
        const before = bundles.get(prepared.name);
        const { record, entryRevision, changed, skippedRolledBack } =
          await collector.writeOrCollect((onStored) =>
            writeBundle(deps, prepared, signal, onStored, () => staged, {
              revisionHistory,
              skipRolledBack,
            }),
          );
        const b: Loaded = {
          record,
          entryRevision,
          spec: prepared.spec,
          deleting: false,
        };
        bundles.set(record.name, b);
        log.info(
          {
            bundle: record.name,
            revision: record.revision,
            changed,
            reason,
          },
          "Bundle applied",
        );
        // Its labels may have changed which bundles wait for it: those of before and of now.
        if (before !== undefined)
          requestWithDependents(record.name, before.spec);
        requestWithDependents(record.name, b.spec);
        const evaluation = await evaluateBundle(
          passDeps,
          await subjectOf(b),
          deps.now(),
        );
        const plan = planFleet(
          b.spec.rolloutStrategy,
          evaluation.targets.map((t) => t.cluster),
          deps.directory.groups(),
        );
        return {
          bundle: { record, counts: countsOf(evaluation, record.revision) },
          changed,
          warnings: [
            ...prepared.warnings,
            ...(staged ? [] : plan.warnings),
            ...stagedWarnings(prepared, record, changed),
            ...(skippedRolledBack === undefined
              ? []
              : [
                  {
                    code: "RolledBackRevision",
                    message: `revision ${skippedRolledBack} was rolled back from and is not released again until an operator applies the bundle (bundle apply) or the source changes it; the bundle stays at revision ${record.revision}`,
                  },
                ]),
          ],
        };
      });
      if (result.bundle.record.drivenBy?.pending !== true) return result;
      // Outside the bundle's queue: making the run records the run as its driver through it.
      try {
        await deps.stagedRuns?.make(prepared.name, reason);
      } catch (error) {
        log.warn(
          { err: error, bundle: prepared.name },
          "the staged run of the new revision is not made yet",
        );
        return {
          ...result,
          warnings: [
            ...result.warnings,
            {
              code: "StagedRunNotMade",
              message: `the run of revision ${result.bundle.record.revision} is not made yet (${error instanceof Error ? error.message : String(error)}); the hub tries again, and holds the revision meanwhile`,
            },
          ],
        };
      }
      return { ...result, bundle: await summaryOf(loaded(prepared.name)) };
    },

    async list() {
      const out: BundleSummary[] = [];
      for (const name of [...bundles.keys()].sort()) {
        const b = bundles.get(name);
        if (b !== undefined && !b.deleting) out.push(await summaryOf(b));
      }
      return out;
    },

    async get(name) {
      const b = loaded(name);
      const evaluation = await evaluateBundle(
        passDeps,
        await subjectOf(b),
        deps.now(),
      );
      const { rolledBack } = b.record;
      return {
        ...bundleStatus(
          b.record,
          evaluation,
          b.lastPass ?? evaluation.pass,
          deps.runMember,
        ),
        revisions: revisionViews(b.record),
        ...(rolledBack === undefined
          ? {}
          : {
              rollbackProgress: rollbackProgress(
                rolledBack,
                evaluation.deployments,
              ),
            }),
      };
    },

    async rollback(name, request) {
      // Refused before anything is stopped or read from the fleet.
      const { record: asked } = loaded(name);
      const to = rollbackTarget(asked, request.to).revision;
      const driver = asked.drivenBy;
      if (driver !== undefined && driver.pending !== true) {
        if (deps.stopRolledBackRun === undefined)
          throw new FlotillaError(
            "failed_precondition",
            `Cannot roll back bundle ${showValue(name)}: update run ${showValue(driver.run)} drives it (revision ${showValue(driver.revision)})`,
          );
        // Outside the bundle's queue: stopping the run may hand the bundle back (letGo), which
        // queues behind this call.
        await deps.stopRolledBackRun(driver.run, to, {
          actor: request.actor === "" ? "hub" : request.actor,
          reason: `bundle ${name} rolled back to revision ${to}${request.message === "" ? "" : `: ${request.message}`}`,
        });
      }
      return serial(name, async () => {
        const b = loaded(name);
        const { deployments } = await observeBundle(passDeps, b);
        const written = await changeStored(name, (current) => {
          // The run that drove the bundle (stopped above) drives it no more: the rollback does.
          const record = withoutDriver(current);
          const target = rollbackTarget(record, request.to);
          return rolledBackRecord(
            record,
            target,
            {
              from: record.revision,
              to: target.revision,
              cause: request.cause,
              message: request.message,
              atMs: deps.now(),
              actor: request.actor,
              ...(request.allAtOnce ? { allAtOnce: true } : {}),
              clusters: [...deployments]
                .filter(([, d]) => d.releasedRevision === record.revision)
                .map(([cluster]) => cluster)
                .sort(),
            },
            revisionHistory,
          );
        });
        const rolled = written.b.record.rolledBack;
        log.info(
          {
            bundle: name,
            from: rolled?.from,
            revision: rolled?.to,
            cause: request.cause,
            clusters: rolled?.clusters.length,
          },
          "Bundle rolled back",
        );
        loop.request(name);
        return { bundle: await summaryOf(written.b), changed: true };
      });
    },

    delete(name, reason) {
      return serial(name, async () => {
        const b = loaded(name);
        const driver = b.record.drivenBy;
        if (
          driver !== undefined &&
          driver.pending !== true &&
          (deps.runExists?.(driver.run) ?? true)
        ) {
          // Its members would only time out (docs/semantics.md#bundle-driven-by-run).
          throw new FlotillaError(
            "failed_precondition",
            `Cannot delete bundle ${showValue(name)}: staged run ${showValue(driver.run)} drives it (revision ${showValue(driver.revision)}); delete the run first (flotilla run delete ${driver.run})`,
          );
        }
        b.deleting = true;
        try {
          // A pass of this bundle may be publishing right now: let it finish; later ones skip it.
          await loop.settled();
          const removed = await removeBundle(
            { pass: passDeps, store: deps.store, collector },
            b,
          );
          log.info(
            { bundle: name, clusters: removed, reason },
            "Bundle deleted",
          );
        } catch (error) {
          b.deleting = false;
          loop.request(name);
          throw error;
        }
        if (bundles.get(name) === b) bundles.delete(name);
        observations.forgetBundle(name);
        await deps.partitionGates?.forget(name).catch((err: unknown) => {
          log.warn({ err, bundle: name }, "partition gate records not deleted");
        });
        // Its dependents now wait for a bundle that does not exist
        // (docs/semantics.md#dependencies-between-bundles): their status says so.
        for (const d of dependentNames(name, b.spec, live())) loop.request(d);
      });
    },

    setPaused(name, paused, reason) {
      return changeRecord(
        name,
        reason,
        paused ? "Bundle paused" : "Bundle resumed",
        (record) =>
          record.paused === paused ? undefined : { ...record, paused },
      );
    },

    async redeploy(name, clusters, reason) {
      const b = loaded(name);
      const evaluation = await evaluateBundle(passDeps, b, deps.now());
      const targets = new Set(evaluation.targets.map((t) => t.cluster.name));
      const problems = redeployProblems(name, clusters, (cluster) =>
        !targets.has(cluster)
          ? "is not a target of the bundle"
          : evaluation.deployments.get(cluster)?.releasedRevision === undefined
            ? "does not hold the bundle yet: nothing to redeploy"
            : undefined,
      );
      if (problems.length > 0)
        throw FlotillaError.invalid("redeploy", problems);
      return changeRecord(name, reason, "Bundle redeployed", (record) =>
        redeployed(record, clusters, targets),
      );
    },

    async render(clusterName, source, { signal } = {}) {
      const cluster = registered(clusterName);
      const target = {
        cluster,
        groups: deps.directory.groups(),
        ...compact({ signal }),
      };
      if ("spec" in source) {
        const prepared = await prepareBundle(
          source.spec,
          deps.objects,
          signal,
          deps.helm,
        );
        return renderPrepared(deps, prepared, target);
      }
      return renderApplied(
        { ...deps, ...compact({ helm: deps.helm }) },
        loaded(source.name),
        source.revision,
        target,
      );
    },

    async clusterBundles(clusterName) {
      const cluster = registered(clusterName);
      const live = [...bundles.values()].filter((b) => !b.deleting);
      return await clusterBundles(
        {
          intents: deps.intents,
          observations,
          isUnreachable: (c) => deps.directory.isUnreachable(c),
        },
        live,
        cluster,
        deps.directory.groups(),
      );
    },

    storeUpload(content, uploadOptions) {
      return collector.putUpload(content, uploadOptions);
    },

    preview(name, selector) {
      const b = loaded(name);
      const groups = deps.directory.groups();
      const clusters = deps.directory
        .clusters()
        .filter(
          (c) => selector === undefined || matchesSelector(selector, c.labels),
        );
      const targets = bundleTargets(b.spec, clusters, groups).map(
        (t) => t.cluster,
      );
      // A staged bundle's revisions roll out as runs of its update strategy.
      const staged = b.record.updateStrategyName;
      if (staged !== undefined && deps.stagedRuns !== undefined)
        return deps.stagedRuns.plan(staged, targets);
      const plan = planFleet(b.spec.rolloutStrategy, targets, groups);
      return {
        ...plan,
        warnings: [...bundleSpecWarnings(b.spec), ...plan.warnings],
      };
    },

    onStatus(cluster, report) {
      if (report.subject.kind !== "bundle") return;
      const name = report.subject.bundle;
      const b = bundles.get(name);
      if (b === undefined || b.deleting) return;
      if (observations.record(cluster, report))
        requestWithDependents(name, b.spec);
    },

    onFleetChanged() {
      loop.request();
    },

    follow(signal) {
      const take = (record: BundleRecord, entryRevision: number): void => {
        const known = bundles.get(record.name);
        if (known !== undefined && known.entryRevision >= entryRevision) return;
        if (known?.deleting === true) return;
        try {
          bundles.set(record.name, {
            record,
            entryRevision,
            spec: storedBundleSpec(record),
            deleting: false,
          });
          loop.request(record.name);
        } catch (err) {
          log.error(
            { err, bundle: record.name },
            "Stored bundle is invalid; skipped",
          );
        }
      };
      return followCollection(deps.store, BUNDLES, signal, {
        put: (_name, record, revision) => {
          take(record, revision);
        },
        delete(name) {
          const known = bundles.get(name);
          if (known === undefined || known.deleting) return;
          bundles.delete(name);
          observations.forgetBundle(name);
        },
        error: (err: unknown) => {
          log.warn({ err }, "cannot follow a bundle change");
        },
      });
    },

    tick() {
      loop.request();
    },

    runBasis(name, requested) {
      // A promise whatever is refused: callers await it.
      return Promise.resolve().then(() => {
        const b = loaded(name);
        const revision = runRevision(b.record, requested);
        const targets = bundleTargets(
          b.spec,
          deps.directory.clusters(),
          deps.directory.groups(),
        );
        return {
          revision,
          clusters: targets.map((t) => t.cluster),
          atTarget: (cluster) =>
            deps.intents.peek(cluster)?.intent.bundles[name]?.revision ===
              revision && isReadyAt(observations.get(name, cluster), revision),
          ...compact({ drivenBy: b.record.drivenBy?.run }),
        };
      });
    },

    drive(name, run, revision, replacing, pendingOnly = false) {
      return serial(name, async () => {
        const b = loaded(name);
        const { deployments } = await observeBundle(passDeps, b);
        // The revision the partition rollout had released, if it had reached any target.
        const base = [...deployments.values()].some(
          (d) => d.releasedRevision === b.record.revision,
        )
          ? b.record.revision
          : undefined;
        await changeStored(name, (record) => {
          const driver = record.drivenBy?.run;
          if (pendingOnly && record.drivenBy?.pending !== true) {
            throw new FlotillaError(
              "failed_precondition",
              `The run of revision ${showValue(revision)} of bundle ${showValue(name)} was made already${driver === undefined ? "" : ` (${showValue(driver)})`}`,
            );
          }
          if (driver !== undefined && driver !== replacing && driver !== run) {
            throw new FlotillaError(
              "failed_precondition",
              `Bundle ${showValue(name)} is driven by update run ${showValue(driver)}: delete that run or let it complete first`,
            );
          }
          if (record.revision !== revision) {
            throw new FlotillaError(
              "failed_precondition",
              `Bundle ${showValue(name)} changed to revision ${showValue(record.revision)} meanwhile; create the run again`,
            );
          }
          return drivenRecord(record, run, base);
        });
        log.info({ bundle: name, run, revision }, "Bundle driven by a run");
        loop.request(name);
      });
    },

    async releaseForRun(releases, fence) {
      const failed = new Map<string, unknown>();
      const groups = deps.directory.groups();
      for (const release of releases) {
        try {
          if (release.again) {
            await serial(release.bundle, () =>
              changeStored(release.bundle, (record) => {
                const targets = bundleTargets(
                  storedBundleSpec(record),
                  deps.directory.clusters(),
                  groups,
                );
                return redeployed(
                  record,
                  [release.member],
                  new Set(targets.map((t) => t.cluster.name)),
                );
              }),
            );
          }
          const b = bundles.get(release.bundle);
          // Deleted meanwhile: nothing to release; the member times out.
          if (b === undefined || b.deleting) continue;
          const cluster = deps.directory.cluster(release.member);
          const target =
            cluster === undefined
              ? undefined
              : bundleTargets(b.spec, [cluster], groups)[0];
          // Not a target any more (left, relabelled): the run hears of it from the registry.
          if (target === undefined) continue;
          await releaseRevision(passDeps, b, target, release.revision, fence);
        } catch (error) {
          failed.set(release.member, error);
        }
      }
      return failed;
    },

    observed(name, cluster) {
      return observations.get(name, cluster);
    },

    letGo(name, run, cause = "completed") {
      return serial(name, async () => {
        const b = bundles.get(name);
        if (b === undefined || b.deleting || b.record.drivenBy?.run !== run)
          return;
        const written = await changeStored(name, (record) =>
          releasedRecord(record, run, cause),
        );
        if (!written.changed) return;
        const { drivenBy } = written.b.record;
        log.info(
          { bundle: name, run, cause },
          drivenBy === undefined
            ? "Bundle back on its partition rollout"
            : "Bundle held for a new run of its revision",
        );
        loop.request(name);
      });
    },

    stagedDriver(name) {
      const b = bundles.get(name);
      const driver = b?.record.drivenBy;
      if (b === undefined || b.deleting || driver?.pending !== true)
        return undefined;
      return {
        bundle: name,
        run: driver.run,
        revision: driver.revision,
        ...compact({ strategy: b.record.updateStrategyName }),
      };
    },

    drivers() {
      return live().flatMap((b) => {
        const driver = b.record.drivenBy;
        return driver === undefined
          ? []
          : [
              {
                bundle: b.record.name,
                run: driver.run,
                ...(driver.pending === true ? { pending: true } : {}),
              },
            ];
      });
    },

    idle() {
      return loop.idle();
    },

    async approveGate(name, partition, gate, actor) {
      const b = loaded(name);
      const gates = deps.partitionGates;
      const evaluation = await evaluateBundle(
        passDeps,
        await subjectOf(b),
        deps.now(),
      );
      const names = evaluation.pass.partitions.map((p) => p.name);
      const index = names.indexOf(partition);
      const after = gatesAfter(b.spec.rolloutStrategy.gates, names, index);
      const problems =
        index < 0
          ? [
              {
                path: "partition",
                message: `names no partition of bundle ${showValue(name)} (partitions: ${names.map((n) => showValue(n)).join(", ")})`,
                value: partition,
              },
            ]
          : !after.some((g) => g.name === gate)
            ? [
                {
                  path: "gate",
                  message: `names no gate after partition ${showValue(partition)} (gates: ${after.map((g) => showValue(g.name)).join(", ") || "none"})`,
                  value: gate,
                },
              ]
            : [];
      if (problems.length > 0 || gates === undefined)
        throw FlotillaError.invalid("gate approval", problems);
      await gates.approve(name, b.record.revision, partition, gate, actor);
      log.info(
        { bundle: name, revision: b.record.revision, partition, gate, actor },
        "Partition gate approved",
      );
      loop.request(name);
    },
  };
}
