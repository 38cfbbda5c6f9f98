/**
 * A bundle's revision and the content each cluster receives.
 *
 * The revision is a short hash of everything that decides what a cluster receives: the Kubernetes
 * objects, the renderer input files, the default namespace and the target customizations. Changing targets, the rollout
 * strategy or `paused` changes who gets it and how fast, not what they get, so it keeps the
 * revision (as Fleet's DeploymentID, which hashes manifests and per-cluster options). Applying
 * the same content again gives the same revision: nothing rolls out.
 *
 * Content is one protocol `BundleContent` per variant: per distinct default namespace (the
 * bundle's, and each customization's without patches), keyed by the namespace, and one per
 * customization with `patches` or Helm values (`helm`), keyed `namespace#c<index>` (index in `targetCustomizations`).
 * Stored records written before patches existed hold only namespace keys, which mean the same
 * thing now, so they stay readable as they are. Content is content-addressed, so clusters whose
 * effective content is the same share one object, whatever their key.
 */
import {
  canonicalJson,
  compact,
  customizeManifests,
  fail,
  joinPath,
  ok,
  type FleetBundleSpec,
  type Problem,
  type Result,
} from "@flotilla/core";
import {
  type BundleHelm,
  encodeBundleContent,
  sha256Digest,
  type KubernetesObject,
} from "@flotilla/protocol";

/** Hex digits of the revision: 64 bits of SHA-256, collision-free for any one bundle's history. */
const REVISION_HEX_DIGITS = 16;

/**
 * The revision of `objects` under `namespace` with `targetCustomizations` (the parsed JSON) and
 * the renderer input `files` (their paths and digests; none leaves the revision of a bundle of
 * manifests as it was before files existed).
 */
export function bundleRevision(
  objects: readonly KubernetesObject[],
  namespace: string,
  targetCustomizations: unknown,
  files: readonly { readonly path: string; readonly digest: string }[] = [],
  helm?: { readonly options: unknown; readonly chartDigest: string },
): string {
  const text = canonicalJson({
    resources: objects,
    namespace,
    targetCustomizations: targetCustomizations ?? [],
    ...compact({
      files:
        files.length === 0 ? undefined : files.map((f) => [f.path, f.digest]),
      helm,
    }),
  });
  return sha256Digest(text).slice(
    "sha256:".length,
    "sha256:".length + REVISION_HEX_DIGITS,
  );
}

/** One content a target of a bundle can get: its key in the record's `contents`, and what it holds. */
export interface ContentVariant {
  readonly key: string;
  readonly namespace: string;
  readonly objects: readonly KubernetesObject[];
  /** The customization (index) whose options the variant carries, when it has its own. */
  readonly customization?: number;
  /** A Helm bundle's chart and this variant's values (helm-chart.ts). */
  readonly helm?: BundleHelm;
}

/**
 * The key in `contents` of the content a target gets: its default namespace, followed by
 * `#c<index>` when its customization (`customization`, index in `spec.targetCustomizations`)
 * patches the manifests.
 */
export function contentKey(
  spec: FleetBundleSpec,
  namespace: string,
  customization: number | undefined,
): string {
  if (customization === undefined) return namespace;
  const c = spec.targetCustomizations[customization];
  const patches = c?.patches ?? [];
  return patches.length === 0 && c?.helm === undefined
    ? namespace
    : `${namespace}#c${String(customization)}`;
}

/**
 * Every content a target of `spec` can get: the bundle's namespace, each deploying
 * customization's, and each deploying customization with patches (its objects patched). Fails
 * with every patch problem, paths starting at `path` (`bundle`).
 */
export function contentVariants(
  spec: FleetBundleSpec,
  objects: readonly KubernetesObject[],
  path = "",
): Result<ContentVariant[]> {
  const variants = new Map<string, ContentVariant>();
  const problems: Problem[] = [];
  variants.set(spec.namespace, {
    key: spec.namespace,
    namespace: spec.namespace,
    objects,
  });
  spec.targetCustomizations.forEach((c, i) => {
    if (c.doNotDeploy) return;
    const namespace = c.namespace ?? spec.namespace;
    const key = contentKey(spec, namespace, i);
    if (key === namespace) {
      variants.set(key, { key, namespace, objects });
      return;
    }
    const customized = customizeManifests(objects, c, {
      bundleNamespace: spec.namespace,
      path: joinPath(joinPath(path, "targetCustomizations"), i),
    });
    if (customized.ok) {
      variants.set(key, {
        key,
        namespace,
        objects: customized.value,
        customization: i,
      });
    } else {
      problems.push(...customized.problems);
    }
  });
  if (problems.length > 0) return fail(problems);
  return ok(
    [...variants.values()].sort((a, b) =>
      a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
    ),
  );
}

/** The encoded content of one revision for clusters whose default namespace is `namespace`. */
export function renderContent(
  bundle: string,
  revision: string,
  namespace: string,
  objects: readonly KubernetesObject[],
  helm?: BundleHelm,
): Uint8Array {
  return encodeBundleContent({
    apiVersion: "flotilla.dev/v1",
    kind: "BundleContent",
    bundle,
    revision,
    namespace,
    resources: objects,
    ...compact({ helm }),
  });
}
