/**
 * A bundle's revision and the content each cluster receives.
 *
 * The revision is a short hash of everything that decides what a cluster receives: the Kubernetes
 * objects, the renderer input files, the default namespace and the target customizations. Changing targets, the rollout
 * strategy or `paused` changes who gets it and how fast, not what they get, so it keeps the
 * revision (as Fleet's DeploymentID, which hashes manifests and per-cluster options). Applying
 * the same content again gives the same revision: nothing rolls out.
 *
 * Content is one protocol `BundleContent` per variant: per distinct pair of namespaces (the
 * bundle's, and each customization's without patches or Helm values), keyed by the default
 * namespace (then `>` and the fleet.yaml `namespace` when set), and one per customization with
 * `patches` or Helm values (`helm`), keyed as the namespaces then `#c<index>` (index in
 * `targetCustomizations`).
 * Stored records written before patches existed hold only namespace keys, which mean the same
 * thing now, so they stay readable as they are. Content is content-addressed, so clusters whose
 * effective content is the same share one object, whatever their key.
 */
import {
  builtInNamespaced,
  canonicalJson,
  compact,
  customizeManifests,
  fail,
  joinPath,
  movedMessage,
  namespaceMetadataFor,
  ok,
  type DeployOptions,
  type NamespaceMetadata,
  placeObjects,
  type FleetBundleSpec,
  type PlanWarning,
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
 * The revision of `objects` under the default `namespace`, fleet.yaml `namespace`
 * (`targetNamespace`), `targetCustomizations` (the parsed JSON) and the renderer input `files`
 * (their paths and digests), and the bundle's namespace labels and annotations (`options`; its
 * `correctDrift` is not content). Without a target namespace, files, Helm options or namespace
 * metadata it is what it was before those existed.
 */
export function bundleRevision(
  objects: readonly KubernetesObject[],
  namespace: string,
  targetNamespace: string,
  targetCustomizations: unknown,
  files: readonly { readonly path: string; readonly digest: string }[] = [],
  helm?: { readonly options: unknown; readonly chartDigest: string },
  kustomize?: unknown,
  options: DeployOptions = {},
): string {
  const text = canonicalJson({
    resources: objects,
    namespace,
    ...(targetNamespace === "" ? {} : { targetNamespace }),
    targetCustomizations: targetCustomizations ?? [],
    ...compact({
      files:
        files.length === 0 ? undefined : files.map((f) => [f.path, f.digest]),
      helm,
      kustomize,
      namespaceLabels: options.namespaceLabels,
      namespaceAnnotations: options.namespaceAnnotations,
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
  /** Default namespace, for namespaced objects that set none. */
  readonly namespace: string;
  /** fleet.yaml `namespace` in force ("" for none): the agent applies it to kinds the hub cannot tell. */
  readonly targetNamespace: string;
  readonly objects: readonly KubernetesObject[];
  /** The customization (index) whose options the variant carries, when it has its own. */
  readonly customization?: number;
  /** A Helm bundle's chart and this variant's values (helm-chart.ts). */
  readonly helm?: BundleHelm;
  /** Labels and annotations of the namespace it deploys into; empty maps for none. */
  readonly namespaceMetadata?: NamespaceMetadata;
}

/** What decides a target's content: its namespaces and the customization it got. */
export interface ContentTarget {
  readonly namespace: string;
  readonly targetNamespace: string;
  readonly customization?: number | undefined;
}

/**
 * The key in `contents` of the content a target gets: its default namespace, then `>` and its
 * fleet.yaml `namespace` when it has one, then `#c<index>` when its customization (`customization`,
 * index in `spec.targetCustomizations`) patches the manifests. Keys of records written before
 * keep their form.
 */
export function contentKey(spec: FleetBundleSpec, t: ContentTarget): string {
  const forced = t.targetNamespace === "" ? "" : `>${t.targetNamespace}`;
  const own =
    t.customization !== undefined &&
    hasOwnContent(spec.targetCustomizations[t.customization]);
  const patched = own ? `#c${String(t.customization)}` : "";
  return `${t.namespace}${forced}${patched}`;
}

/**
 * Whether a customization changes what its clusters get beyond namespaces: patches, Helm values,
 * a kustomization of its own, namespace labels or annotations.
 */
function hasOwnContent(
  c: FleetBundleSpec["targetCustomizations"][number] | undefined,
): boolean {
  return (
    c !== undefined &&
    ((c.patches ?? []).length > 0 ||
      c.helm !== undefined ||
      c.kustomize !== undefined ||
      c.namespaceLabels !== undefined ||
      c.namespaceAnnotations !== undefined)
  );
}

/** Variants and the notes on objects that a fleet.yaml `namespace` moved. */
export interface RenderedVariants {
  readonly variants: ContentVariant[];
  readonly warnings: PlanWarning[];
}

/**
 * Every content a target of `spec` can get: the bundle's namespaces, each deploying
 * customization's, and each deploying customization with patches (its objects patched), each
 * placed by its namespace rules (docs/semantics.md#namespaces) for the kinds the hub knows. A
 * customization found in `own` (its Kustomize render, kustomize.ts) starts from those objects
 * instead of the bundle's. Fails with every patch and placement problem, paths starting at
 * `path` (`bundle`).
 */
export function contentVariants(
  spec: FleetBundleSpec,
  objects: readonly KubernetesObject[],
  path = "",
  own: ReadonlyMap<number, readonly KubernetesObject[]> = new Map(),
): Result<RenderedVariants> {
  const variants = new Map<string, ContentVariant>();
  const problems: Problem[] = [];
  const warnings = new Map<string, PlanWarning>();
  const add = (
    t: ContentTarget,
    source: readonly KubernetesObject[],
    rulePath: string,
  ): void => {
    const key = contentKey(spec, t);
    if (variants.has(key)) return;
    // The default namespace stays with the agent (content.namespace), as before.
    const placed = placeObjects(
      source,
      { defaultNamespace: "", targetNamespace: t.targetNamespace },
      builtInNamespaced,
      rulePath,
    );
    if (!placed.ok) {
      problems.push(...placed.problems);
      return;
    }
    for (const m of placed.value.moved) {
      const message = `${m.path}: ${movedMessage(m)}`;
      warnings.set(message, { code: "NamespaceMovesObject", message });
    }
    const metadata = namespaceMetadataFor(
      spec,
      t.customization === undefined
        ? undefined
        : spec.targetCustomizations[t.customization],
    );
    variants.set(key, {
      key,
      namespace: t.namespace,
      targetNamespace: t.targetNamespace,
      objects: placed.value.objects,
      namespaceMetadata: metadata,
      ...(key.includes("#c")
        ? compact({ customization: t.customization })
        : {}),
    });
  };
  add(
    { namespace: spec.defaultNamespace, targetNamespace: spec.targetNamespace },
    objects,
    joinPath(path, "namespace"),
  );
  spec.targetCustomizations.forEach((c, i) => {
    if (c.doNotDeploy) return;
    const at = joinPath(joinPath(path, "targetCustomizations"), i);
    const t: ContentTarget = {
      namespace: c.defaultNamespace ?? spec.defaultNamespace,
      targetNamespace: c.targetNamespace ?? spec.targetNamespace,
      customization: i,
    };
    const rulePath =
      c.targetNamespace === undefined
        ? joinPath(path, "namespace")
        : joinPath(at, "namespace");
    const base = own.get(i) ?? objects;
    if ((c.patches ?? []).length === 0) {
      // Without patches the objects are the bundle's (or its own render); Helm values still make
      // a variant of its own.
      add(t, base, rulePath);
      return;
    }
    const customized = customizeManifests(base, c, {
      bundleNamespace: spec.defaultNamespace,
      path: at,
    });
    if (customized.ok) add(t, customized.value, rulePath);
    else problems.push(...customized.problems);
  });
  if (problems.length > 0) return fail(problems);
  return ok({
    variants: [...variants.values()].sort((a, b) =>
      a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
    ),
    warnings: [...warnings.values()],
  });
}

/** The encoded content of one revision for the clusters that get `variant`. */
export function renderContent(
  bundle: string,
  revision: string,
  variant: Omit<ContentVariant, "key">,
): Uint8Array {
  return encodeBundleContent({
    apiVersion: "flotilla.dev/v1",
    kind: "BundleContent",
    bundle,
    revision,
    namespace: variant.namespace,
    ...(variant.targetNamespace === ""
      ? {}
      : { targetNamespace: variant.targetNamespace }),
    resources: variant.objects,
    ...compact({
      helm: variant.helm,
      namespaceLabels: nonEmpty(variant.namespaceMetadata?.labels),
      namespaceAnnotations: nonEmpty(variant.namespaceMetadata?.annotations),
    }),
  });
}

function nonEmpty(
  map: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> | undefined {
  return map === undefined || Object.keys(map).length === 0 ? undefined : map;
}
