/**
 * One bundle's pass (docs/semantics.md#releasing) against the live fleet: which clusters it targets
 * now, what each holds (its intent) and reports (the latest counted report), core's `rolloutPass`,
 * then a SetBundle in the intent of every cluster released, and a RemoveBundle for every cluster
 * that is no longer targeted. Publishing is idempotent (an unchanged intent keeps its generation),
 * so a pass repeated after a crash or a failed publish converges.
 */
import {
  bundleTargets,
  dependencyHolds,
  compact,
  driftCorrectionFor,
  rolloutPass,
  type DependencyState,
  type DeploymentObservation,
  type FleetBundleSpec,
  type ClusterIntent,
  type IntentDriftCorrection,
  type PassInput,
} from "@flotilla/core";
import type { Fence } from "../intents/intent-fences.js";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import type { IntentWriter } from "../intents/intent-writer.js";
import type { Logger } from "../logger.js";
import type { ContentKeys } from "../security/content-keys.js";
import {
  deploymentObservation,
  type BundleObservations,
  type BundleReport,
} from "./bundle-observations.js";
import { contentsOf, forceSyncOf, type BundleRecord } from "./bundle-record.js";
import { contentKey } from "./bundle-render.js";
import type { Evaluation } from "./bundle-status.js";
import { rollbackReleases } from "./bundle-rollback.js";

/** Releases of one pass published at the same time, at most. */
const RELEASE_CONCURRENCY = 256;

/** Runs `task` for every item, at most `limit` at a time. */
async function inBatches<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, worker),
  );
}

/** What a pass reads and writes. */
export interface PassDeps {
  readonly intents: IntentWriter;
  /** The key of each content, which the intents of the clusters it is for carry. */
  readonly contentKeys: Pick<ContentKeys, "keyOf">;
  readonly directory: ClusterDirectory;
  readonly observations: BundleObservations;
  readonly log: Logger;
}

/** A bundle as passes see it. */
export interface PassSubject {
  readonly record: BundleRecord;
  readonly spec: FleetBundleSpec;
  /**
   * The bundles its `dependsOn` matches, with their state on each of their targets
   * (bundle-dependencies.ts); absent when it depends on none.
   */
  readonly dependencies?: readonly DependencyState[];
  /**
   * What the hub kept of its partition gates at the current revision
   * (docs/semantics.md#partition-gates); absent when it has none.
   */
  readonly gateRecords?: PassInput["gateRecords"];
}

/** What the hub knows about a bundle's targets now: no pass is run. */
export type BundleObservation = Pick<
  Evaluation,
  "targets" | "deployments" | "reports"
>;

/** The targets of `subject` now, what each holds (its intent) and reports. */
export async function observeBundle(
  deps: PassDeps,
  subject: Pick<PassSubject, "record" | "spec">,
): Promise<BundleObservation> {
  const { record, spec } = subject;
  const targets = bundleTargets(
    spec,
    deps.directory.clusters(),
    deps.directory.groups(),
  );
  const deployments = new Map<string, DeploymentObservation>();
  const reports = new Map<string, BundleReport>();
  for (const { cluster } of targets) {
    const { intent } =
      deps.intents.peek(cluster.name) ??
      (await deps.intents.current(cluster.name));
    const report = deps.observations.get(record.name, cluster.name);
    if (report !== undefined) reports.set(cluster.name, report);
    deployments.set(
      cluster.name,
      deploymentObservation(
        intent.bundles[record.name]?.revision,
        report,
        deps.directory.isUnreachable(cluster.name),
      ),
    );
  }
  return { targets, deployments, reports };
}

/** Where `subject` stands at `nowMs`, and the pass core would run on it (nothing is published). */
export async function evaluateBundle(
  deps: PassDeps,
  subject: PassSubject,
  nowMs: number,
): Promise<Evaluation> {
  const { record, spec } = subject;
  const observed = await observeBundle(deps, subject);
  const { targets, deployments } = observed;
  const clusters = targets.map((t) => t.cluster);
  const pass = rolloutPass({
    strategy: spec.rolloutStrategy,
    targets: clusters,
    clusterGroups: deps.directory.groups(),
    revision: record.revision,
    deployments,
    nowMs,
    paused: spec.paused,
    dependencyHolds: dependencyHolds(
      spec.dependsOn ?? [],
      subject.dependencies ?? [],
      clusters.map((c) => c.name),
    ),
    bundle: record.name,
    ...compact({ gateRecords: subject.gateRecords }),
  });
  return { ...observed, pass };
}

/**
 * Runs a pass of `subject` and publishes its decisions; returns the evaluation it acted on. A
 * publish that fails is logged and left for the next pass (the cluster stays unreleased).
 */
export async function runBundlePass(
  deps: PassDeps,
  subject: PassSubject,
  nowMs: number,
): Promise<Evaluation> {
  const { record, spec } = subject;
  const log = deps.log.child({ bundle: record.name });
  const evaluation = await evaluateBundle(deps, subject, nowMs);
  const keyOf = new Map(
    evaluation.targets.map((t) => [t.cluster.name, contentKey(spec, t)]),
  );
  const targetOf = new Map(evaluation.targets.map((t) => [t.cluster.name, t]));
  // Releases go to different clusters: publish them side by side, a bounded number at a time.
  await inBatches(
    releasesOf(deps, record, spec, evaluation),
    RELEASE_CONCURRENCY,
    async (release) => {
      const target = targetOf.get(release.cluster);
      if (target === undefined) return;
      try {
        const intent = await releaseRevision(
          deps,
          subject,
          target,
          release.revision,
        );
        if (intent === undefined) return;
        log.info(
          {
            cluster: release.cluster,
            generation: intent.generation,
            revision: release.revision,
            ...compact({ partition: release.partition, kind: release.kind }),
          },
          "Bundle released",
        );
      } catch (err) {
        log.warn(
          { err, cluster: release.cluster },
          "Bundle release not published",
        );
      }
    },
  );
  await removeFromUntargeted(deps, record.name, keyOf, log);
  await refreshHeld(deps, subject, evaluation, keyOf, log);
  return evaluation;
}

/** A release a pass publishes. */
interface PassRelease {
  readonly cluster: string;
  readonly revision: string;
  readonly partition?: string;
  readonly kind?: string;
}

/**
 * What a pass releases: core's decisions; while a rollback is in progress, only the revision rolled
 * back to, to the clusters holding the one rolled back from (docs/semantics.md#rolling-back-a-bundle);
 * or, while a staged run drives the bundle
 * (docs/semantics.md#staged-bundle-runs), nothing new but the run's base revision to targets that
 * hold nothing yet (the run releases its own revision to its members).
 */
function releasesOf(
  deps: PassDeps,
  record: BundleRecord,
  spec: FleetBundleSpec,
  evaluation: Evaluation,
): readonly PassRelease[] {
  const driver = record.drivenBy;
  if (driver === undefined)
    return (
      rollbackReleases(record, spec, evaluation) ?? evaluation.pass.release
    );
  const base = driver.baseRevision;
  // A paused bundle releases nothing (docs/semantics.md#pausing-a-bundle).
  if (base === undefined || spec.paused) return [];
  return evaluation.targets
    .filter(
      (t) =>
        deps.intents.peek(t.cluster.name)?.intent.bundles[record.name] ===
        undefined,
    )
    .map((t) => ({ cluster: t.cluster.name, revision: base }));
}

/**
 * Writes `revision` of the bundle into the intent of `target` as every release does (partition
 * releases and staged runs, docs/semantics.md#staged-bundle-runs): the content of the target's
 * customization variant, sealed with its key, the redeploy counter and drift correction. Resolves
 * with the intent written, or undefined (logged) when the revision's content is not kept.
 */
export async function releaseRevision(
  deps: PassDeps,
  { record, spec }: Pick<PassSubject, "record" | "spec">,
  target: Evaluation["targets"][number],
  revision: string,
  fence?: Fence,
): Promise<ClusterIntent | undefined> {
  const key = contentKey(spec, target);
  const digest = contentsOf(record, revision)?.[key];
  if (digest === undefined) {
    // Contents are rendered for every variant a customization can give; this is a bug.
    deps.log.error(
      {
        bundle: record.name,
        cluster: target.cluster.name,
        contentKey: key,
        revision,
      },
      "No bundle content for the cluster's customization",
    );
    return undefined;
  }
  const { intent } = await deps.intents.change(
    target.cluster.name,
    [
      {
        type: "SetBundle",
        bundle: record.name,
        revision,
        digest,
        key: deps.contentKeys.keyOf(digest),
        forceSync: forceSyncOf(record, target.cluster.name),
        ...compact({ correctDrift: intentDriftOf(spec, target) }),
      },
    ],
    compact({ fence }),
  );
  return intent;
}

/**
 * A target's `correctDrift` in the intent's form: its customization's, else the bundle's
 * (docs/semantics.md#drift-correction); undefined unless enabled.
 */
function intentDriftOf(
  spec: FleetBundleSpec,
  target: Evaluation["targets"][number],
): IntentDriftCorrection | undefined {
  const chosen = driftCorrectionFor(
    spec,
    target.customization === undefined
      ? undefined
      : spec.targetCustomizations[target.customization],
  );
  return chosen === undefined ? undefined : { force: chosen.force };
}

/**
 * Brings the entry of every target whose intent holds the bundle (at any revision) up to date
 * without changing its revision: the content key, for entries written before content was sealed
 * (without it the agent could not fetch that content again), the redeploy counter, which makes
 * the agent apply what it holds again (docs/semantics.md#redeploying-a-bundle), `correctDrift`,
 * which is not content: a change reaches the agents without a new revision
 * (docs/semantics.md#drift-correction), and, at the current revision, the content of the
 * cluster's customization (`contentKeys`), which changes when its labels or groups do after the
 * release (a cluster released before its labels arrived).
 */
async function refreshHeld(
  deps: PassDeps,
  { record, spec }: PassSubject,
  evaluation: Evaluation,
  contentKeys: ReadonlyMap<string, string>,
  log: Logger,
): Promise<void> {
  const bundle = record.name;
  for (const target of evaluation.targets) {
    const { cluster } = target;
    const held = deps.intents.peek(cluster.name)?.intent.bundles[bundle];
    if (held === undefined) continue;
    const own = contentsOf(record, held.revision)?.[
      contentKeys.get(cluster.name) ?? ""
    ];
    const digest = own ?? held.digest;
    const key = deps.contentKeys.keyOf(digest);
    const forceSync = forceSyncOf(record, cluster.name);
    const correctDrift = intentDriftOf(spec, target);
    if (
      digest === held.digest &&
      held.key === key &&
      (held.forceSync ?? 0) === forceSync &&
      held.correctDrift?.force === correctDrift?.force
    )
      continue;
    try {
      await deps.intents.change(cluster.name, [
        {
          type: "SetBundle",
          bundle,
          revision: held.revision,
          digest,
          key,
          forceSync,
          ...compact({ correctDrift }),
        },
      ]);
      if (digest !== held.digest)
        log.info(
          { cluster: cluster.name, revision: held.revision },
          "Bundle content follows the cluster's customization",
        );
      if ((held.forceSync ?? 0) !== forceSync)
        log.info(
          { cluster: cluster.name, revision: held.revision, forceSync },
          "Bundle redeployed",
        );
    } catch (err) {
      log.warn(
        { err, cluster: cluster.name },
        "Held bundle entry not published",
      );
    }
  }
}

/** RemoveBundle for every registered cluster whose intent holds `bundle` but is not a target. */
async function removeFromUntargeted(
  deps: PassDeps,
  bundle: string,
  targets: ReadonlyMap<string, string>,
  log: Logger,
): Promise<void> {
  for (const cluster of deps.directory.clusters()) {
    if (targets.has(cluster.name)) continue;
    try {
      const { intent } =
        deps.intents.peek(cluster.name) ??
        (await deps.intents.current(cluster.name));
      if (!(bundle in intent.bundles)) continue;
      const after = await deps.intents.change(cluster.name, [
        { type: "RemoveBundle", bundle },
      ]);
      deps.observations.forget(bundle, cluster.name);
      log.info(
        { cluster: cluster.name, generation: after.intent.generation },
        "Bundle removed from a cluster it no longer targets",
      );
    } catch (err) {
      log.warn({ err, cluster: cluster.name }, "Bundle removal not published");
    }
  }
}

/** RemoveBundle from every registered cluster's intent (bundle deletion); throws on the first failure. */
export async function removeEverywhere(
  deps: PassDeps,
  bundle: string,
): Promise<number> {
  let removed = 0;
  for (const cluster of deps.directory.clusters()) {
    const { intent } = await deps.intents.current(cluster.name);
    if (!(bundle in intent.bundles)) continue;
    await deps.intents.change(cluster.name, [{ type: "RemoveBundle", bundle }]);
    removed++;
  }
  return removed;
}
