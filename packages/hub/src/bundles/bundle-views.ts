/**
 * Per-cluster views of bundles (docs/bundles.md#what-a-cluster-gets): what a cluster gets from a
 * bundle not applied yet or from an applied one (RenderBundle), and every bundle that targets a
 * cluster with its state there (GetCluster, Fleet's BundleDeployments). Both read only.
 */
import {
  bundleClusterState,
  compareNames,
  FlotillaError,
  showValue,
  targetDecision,
  type Cluster,
  type ClusterGroup,
  type PassResult,
} from "@flotilla/core";
import {
  parseBundleContent,
  sha256Digest,
  type BundleClusterView,
} from "@flotilla/protocol";
import type { IntentWriter } from "../intents/intent-writer.js";
import type { PreparedBundle } from "./bundle-input.js";
import {
  deploymentObservation,
  type BundleObservations,
} from "./bundle-observations.js";
import type { PassSubject } from "./bundle-passes.js";
import { contentKey } from "./bundle-render.js";
import { clusterView } from "./bundle-status.js";
import { preparedRevision } from "./bundle-store.js";
import {
  clusterObjects,
  decisionFields,
  type ClusterRender,
  type ViewContent,
} from "./cluster-render.js";
import type { HelmSupport } from "./helm-chart.js";
import type { ObjectReader } from "./object-reader.js";

/** What rendering for a cluster reads. */
export interface ViewDeps {
  readonly objects: ObjectReader;
  readonly intents: Pick<IntentWriter, "peek" | "current">;
  readonly helm?: HelmSupport;
}

/** The cluster and its groups, and how the call may be cancelled. */
export interface ViewTarget {
  readonly cluster: Cluster;
  readonly groups: readonly ClusterGroup[];
  readonly signal?: AbortSignal;
}

/** What `bundle` (checked, stored nowhere) gives `target.cluster`. */
export async function renderPrepared(
  deps: Pick<ViewDeps, "helm">,
  bundle: PreparedBundle,
  { cluster, groups, signal }: ViewTarget,
): Promise<ClusterRender> {
  // Inline files are stored under their bytes' digest, as apply would store them.
  const files = bundle.files.map(
    (f) => f.ref ?? { path: f.path, digest: sha256Digest(f.bytes) },
  );
  const revision = preparedRevision(bundle, files);
  const decision = targetDecision(bundle.spec, cluster, groups);
  const base = {
    bundle: bundle.name,
    cluster: cluster.name,
    revision,
    ...decisionFields(bundle.spec, decision),
  };
  if (decision.target === undefined)
    return { ...base, contentKey: "", helm: false, objects: [], notes: [] };
  const key = contentKey(bundle.spec, decision.target);
  const variant = bundle.variants.find((v) => v.key === key);
  if (variant === undefined)
    throw new FlotillaError(
      "internal",
      `Bundle ${showValue(bundle.name)} has no content ${showValue(key)} for cluster ${showValue(cluster.name)}`,
    );
  const placed = await clusterObjects(variant, cluster, deps.helm, signal);
  return {
    ...base,
    contentKey: key,
    helm: variant.helm !== undefined,
    ...placed,
  };
}

/**
 * What the applied bundle `subject` gives `target.cluster`: its current revision (`revision` ""
 * or the current one) or the revision the cluster holds, read from the stored content.
 * NOT_FOUND for a revision the hub does not keep.
 */
export async function renderApplied(
  deps: ViewDeps,
  subject: PassSubject,
  revision: string,
  { cluster, groups, signal }: ViewTarget,
): Promise<ClusterRender> {
  const { record, spec } = subject;
  const decision = targetDecision(spec, cluster, groups);
  const key =
    decision.target === undefined ? "" : contentKey(spec, decision.target);
  const { intent } =
    deps.intents.peek(cluster.name) ??
    (await deps.intents.current(cluster.name));
  const held = intent.bundles[record.name];
  let digest: string | undefined;
  let notes: string[] = [];
  if (revision === "" || revision === record.revision) {
    revision = record.revision;
    digest = record.contents[key];
  } else if (held?.revision === revision) {
    digest = held.digest;
    notes = [
      `revision ${revision} is the one the cluster holds; the target decision is the current spec's`,
    ];
  } else {
    throw new FlotillaError(
      "not_found",
      `Bundle ${showValue(record.name)} has no revision ${showValue(revision)} on the hub: it keeps the current revision (${record.revision}) and the one each cluster holds (${held === undefined ? `cluster ${cluster.name} holds none` : `cluster ${cluster.name} holds ${held.revision}`})`,
    );
  }
  const base = {
    bundle: record.name,
    cluster: cluster.name,
    revision,
    ...decisionFields(spec, decision),
  };
  if (decision.target === undefined)
    return { ...base, contentKey: "", helm: false, objects: [], notes };
  if (digest === undefined)
    throw new FlotillaError(
      "internal",
      `Bundle ${showValue(record.name)} stores no content ${showValue(key)} for cluster ${showValue(cluster.name)}`,
    );
  const content = await readContent(deps.objects, digest, signal);
  const placed = await clusterObjects(content, cluster, deps.helm, signal);
  return {
    ...base,
    contentKey: key,
    contentDigest: digest,
    helm: content.helm !== undefined,
    objects: placed.objects,
    notes: [...notes, ...placed.notes],
  };
}

/** The stored content `digest`, decoded. */
async function readContent(
  objects: ObjectReader,
  digest: string,
  signal: AbortSignal | undefined,
): Promise<ViewContent> {
  const bytes = await objects.read(
    digest,
    signal === undefined ? {} : { signal },
  );
  if (bytes === undefined)
    throw new FlotillaError(
      "not_found",
      `The bundle content ${digest} is no longer stored`,
    );
  const parsed = parseBundleContent(bytes);
  if (!parsed.ok)
    throw FlotillaError.invalid(`stored content ${digest}`, parsed.problems);
  const c = parsed.value;
  return {
    namespace: c.namespace,
    targetNamespace: c.targetNamespace ?? "",
    objects: c.resources,
    ...(c.helm === undefined ? {} : { helm: c.helm }),
  };
}

/** One bundle on a cluster. */
export interface ClusterBundle {
  readonly bundle: string;
  /** The bundle's current revision. */
  readonly revision: string;
  readonly view: BundleClusterView;
}

/** A bundle as {@link clusterBundles} reads it: its subject and its last pass. */
export interface ViewedBundle extends PassSubject {
  readonly lastPass?: PassResult;
}

/** What {@link clusterBundles} reads. */
export interface ClusterBundlesDeps {
  readonly intents: Pick<IntentWriter, "peek" | "current">;
  readonly observations: Pick<BundleObservations, "get">;
  readonly isUnreachable: (cluster: string) => boolean;
}

// The held clusters and partitions of a pass by cluster, built once per pass.
const passIndexes = new WeakMap<
  PassResult,
  {
    readonly held: ReadonlyMap<string, PassResult["held"][number]>;
    readonly partition: ReadonlyMap<string, string>;
  }
>();

function passIndex(pass: PassResult) {
  let index = passIndexes.get(pass);
  if (index === undefined) {
    const partition = new Map<string, string>();
    for (const p of pass.partitions)
      for (const c of p.clusters) partition.set(c, p.name);
    index = { held: new Map(pass.held.map((h) => [h.cluster, h])), partition };
    passIndexes.set(pass, index);
  }
  return index;
}

/**
 * Every bundle of `bundles` that targets `cluster`, by name, with its state there: one target
 * decision per bundle for this cluster (no bundle's other targets are looked at), the cluster's
 * intent once, and the latest report. Hold reasons and partitions are the last pass's.
 */
export async function clusterBundles(
  deps: ClusterBundlesDeps,
  bundles: Iterable<ViewedBundle>,
  cluster: Cluster,
  groups: readonly ClusterGroup[],
): Promise<ClusterBundle[]> {
  const { intent } =
    deps.intents.peek(cluster.name) ??
    (await deps.intents.current(cluster.name));
  const unreachable = deps.isUnreachable(cluster.name);
  const out: ClusterBundle[] = [];
  for (const b of bundles) {
    const { record } = b;
    if (targetDecision(b.spec, cluster, groups).target === undefined) continue;
    const report = deps.observations.get(record.name, cluster.name);
    const deployment = deploymentObservation(
      intent.bundles[record.name]?.revision,
      report,
      unreachable,
    );
    const index = b.lastPass === undefined ? undefined : passIndex(b.lastPass);
    const state = bundleClusterState(deployment, record.revision);
    out.push({
      bundle: record.name,
      revision: record.revision,
      view: clusterView(cluster.name, state, {
        deployment,
        report,
        held: index?.held.get(cluster.name),
        partition: index?.partition.get(cluster.name),
      }),
    });
  }
  return out.sort((a, b) => compareNames(a.bundle, b.bundle));
}
