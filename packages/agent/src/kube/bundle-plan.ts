/**
 * Checking a bundle revision before anything is sent: every manifest under the size limit and
 * well formed (manifest.ts), the bundle name usable in the inventory's name and label, every kind
 * served by the cluster or defined by a CustomResourceDefinition of the same revision (whose
 * `spec.scope` then says whether it is namespaced), and no object twice. The result is the objects
 * to apply, in apply order, each with its namespace set and the bundle label added.
 */
import {
  formatProblem,
  placeObjects,
  type ManifestObject,
  type Problem,
} from "@flotilla/core";
import { applyOrder } from "./apply-order.js";
import type { Manifest } from "./gateway.js";
import { BUNDLE_LABEL, inventoryName } from "./inventory.js";
import type { KubeClient, KubeObject } from "./kube-client.js";
import { resourceRefs, type ResourceRef } from "./manifest.js";

/** One object to apply. */
export interface PlannedObject {
  readonly ref: ResourceRef;
  readonly object: KubeObject;
  /** Whether its kind comes from a CRD of this revision (not servable before that CRD is). */
  readonly definedByBundle: boolean;
}

const LABEL_VALUE = /^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$/;
const MAX_LABEL_VALUE = 63;

function rec(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function groupOf(apiVersion: string): string {
  return apiVersion.includes("/")
    ? apiVersion.slice(0, apiVersion.indexOf("/"))
    : "";
}

/** `group/version/kind` → namespaced, for the kinds the revision's CRDs define. */
function crdScopes(manifests: readonly Manifest[]): Map<string, boolean> {
  const scopes = new Map<string, boolean>();
  for (const m of manifests) {
    if (m.kind !== "CustomResourceDefinition") continue;
    const spec = rec(m.spec);
    const kind = rec(spec.names).kind;
    const versions = Array.isArray(spec.versions) ? spec.versions : [];
    for (const v of versions.map(rec))
      scopes.set(
        `${String(spec.group)}/${String(v.name)}/${String(kind)}`,
        spec.scope !== "Cluster",
      );
  }
  return scopes;
}

/**
 * The revision's objects in apply order, or every problem found (each naming the manifest).
 * Only discovery reads are sent to the cluster.
 */
export async function planBundle(
  client: KubeClient,
  request: {
    bundle: string;
    manifests: readonly Manifest[];
    namespace?: string;
    targetNamespace?: string;
  },
  options: { maxManifestBytes: number; signal?: AbortSignal },
): Promise<PlannedObject[] | string> {
  const problems: Problem[] = [];
  const { bundle, manifests } = request;
  if (
    bundle.length > MAX_LABEL_VALUE ||
    !LABEL_VALUE.test(bundle) ||
    inventoryName(bundle).length > 253
  )
    problems.push({
      path: "bundle",
      message: "must be a valid label value of at most 63 characters",
      value: bundle,
    });
  manifests.forEach((m, i) => {
    const bytes = Buffer.byteLength(JSON.stringify(m));
    if (bytes > options.maxManifestBytes)
      problems.push({
        path: `manifests[${String(i)}]`,
        message: `is ${String(bytes)} bytes, over the limit of ${String(options.maxManifestBytes)}`,
        value: `${String(m.kind)} ${String(rec(m.metadata).name)}`,
      });
  });
  const shape = resourceRefs(manifests, {
    namespace: "default",
    isClusterScoped: () => false,
  });
  if (!shape.ok) problems.push(...shape.problems);
  if (problems.length > 0) return problems.map(formatProblem).join("; ");

  const defined = crdScopes(manifests);
  const namespaced = new Map<string, boolean>();
  const fromBundle = new Set<string>();
  for (const [i, m] of manifests.entries()) {
    const apiVersion = String(m.apiVersion);
    const kind = String(m.kind);
    const key = `${apiVersion}/${kind}`;
    if (namespaced.has(key)) continue;
    const own = defined.get(
      `${groupOf(apiVersion)}/${apiVersion.slice(apiVersion.indexOf("/") + 1)}/${kind}`,
    );
    const served = await client.resource(apiVersion, kind, {
      signal: options.signal,
    });
    if (served !== undefined) namespaced.set(key, served.namespaced);
    else if (own !== undefined) {
      namespaced.set(key, own);
      fromBundle.add(key);
    } else {
      problems.push({
        path: `manifests[${String(i)}]`,
        message: `kind "${kind}" of "${apiVersion}" is not served by the cluster nor defined by a CustomResourceDefinition of the bundle`,
        value: kind,
      });
      namespaced.set(key, true);
    }
  }
  if (problems.length > 0) return problems.map(formatProblem).join("; ");
  const placed = placeObjects(
    manifests as readonly ManifestObject[],
    { defaultNamespace: "", targetNamespace: request.targetNamespace ?? "" },
    (apiVersion, kind) => namespaced.get(`${apiVersion}/${kind}`),
    "namespace",
  );
  if (!placed.ok) return placed.problems.map(formatProblem).join("; ");
  return planned(bundle, placed.value.objects, request.namespace, {
    namespaced,
    fromBundle,
  });
}

/** The placed objects with their namespaces and the bundle label, in apply order. */
function planned(
  bundle: string,
  manifests: readonly Manifest[],
  namespace: string | undefined,
  scopes: {
    namespaced: ReadonlyMap<string, boolean>;
    fromBundle: ReadonlySet<string>;
  },
): PlannedObject[] | string {
  const { namespaced, fromBundle } = scopes;
  const refs = resourceRefs(manifests, {
    namespace: namespace ?? "default",
    isClusterScoped: (apiVersion, kind) =>
      namespaced.get(`${apiVersion}/${kind}`) === false,
  });
  if (!refs.ok) return refs.problems.map(formatProblem).join("; ");

  const objects = refs.value.map((ref, i): PlannedObject => {
    const manifest = structuredClone(manifests[i] ?? {}) as KubeObject;
    const metadata = { ...rec(manifest.metadata) };
    if (ref.namespace === "") delete metadata.namespace;
    else metadata.namespace = ref.namespace;
    metadata.labels = { ...rec(metadata.labels), [BUNDLE_LABEL]: bundle };
    manifest.metadata = metadata;
    return {
      ref,
      object: manifest,
      definedByBundle: fromBundle.has(`${ref.apiVersion}/${ref.kind}`),
    };
  });
  return applyOrder(objects.map((p) => ({ ...p, kind: p.ref.kind }))).map(
    ({ ref, object, definedByBundle }) => ({ ref, object, definedByBundle }),
  );
}
