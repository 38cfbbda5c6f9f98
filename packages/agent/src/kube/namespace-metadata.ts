/**
 * fleet.yaml `namespaceLabels` / `namespaceAnnotations` (docs/bundles.md#namespace-labels-and-annotations):
 * the namespace a bundle deploys into (its fleet.yaml `namespace`, else its default namespace)
 * gets them by server-side apply.
 * - When the bundle's own manifests hold that Namespace, they are merged into it (the bundle's
 *   entries win on equal keys): one apply, one owner.
 * - Otherwise a Namespace holding only them is applied under a field manager of the bundle's own
 *   (`<agent's field manager>.<bundle>`), creating the namespace when it is missing. Being one
 *   manager per bundle, an entry dropped from fleet.yaml is removed at the next apply, and two
 *   bundles deploying into one namespace do not remove each other's. The apply is forced: an
 *   entry someone changed by hand is set back. When a revision sets none, the namespace is
 *   applied empty only if the bundle's manager still owns entries there (removing them).
 * The namespace is not in the bundle's inventory: removing the bundle leaves it, as it leaves
 * its labels.
 */
import type { KubeClient, KubeObject } from "./kube-client.js";
import type { PlannedObject } from "./bundle-plan.js";

/** What a revision sets on its namespace. */
export interface NamespaceMetadataRequest {
  /** The namespace the bundle deploys into. */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** The field manager of `bundle`'s namespace metadata. */
export function namespaceManager(fieldManager: string, bundle: string): string {
  return `${fieldManager}.${bundle}`;
}

function isEmpty(m: Readonly<Record<string, string>>): boolean {
  return Object.keys(m).length === 0;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * `planned` with the metadata merged into the bundle's own Namespace object when it has one;
 * `merged` says whether it did.
 */
export function mergeIntoPlanned(
  planned: readonly PlannedObject[],
  ns: NamespaceMetadataRequest,
): { readonly planned: PlannedObject[]; readonly merged: boolean } {
  let merged = false;
  const out = planned.map((p) => {
    if (p.ref.kind !== "Namespace" || p.ref.name !== ns.name) return p;
    merged = true;
    const metadata = record(p.object.metadata);
    const object: KubeObject = {
      ...p.object,
      metadata: {
        ...metadata,
        labels: { ...ns.labels, ...record(metadata.labels) },
        annotations: { ...ns.annotations, ...record(metadata.annotations) },
      },
    };
    return { ...p, object };
  });
  return { planned: out, merged };
}

/** Whether `manager` owns anything of `live` (its managedFields). */
function owns(live: KubeObject, manager: string): boolean {
  const fields = record(live.metadata).managedFields;
  return (
    Array.isArray(fields) && fields.some((f) => record(f).manager === manager)
  );
}

/** Applies the namespace's metadata as described in the module comment. */
export async function applyNamespaceMetadata(
  client: KubeClient,
  ns: NamespaceMetadataRequest,
  options: { readonly manager: string; readonly signal: AbortSignal },
): Promise<void> {
  const ref = {
    apiVersion: "v1",
    kind: "Namespace",
    namespace: "",
    name: ns.name,
  };
  if (isEmpty(ns.labels) && isEmpty(ns.annotations)) {
    const live = await client.get(ref, { signal: options.signal });
    if (live === undefined || !owns(live, options.manager)) return;
  }
  await client.apply(
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: ns.name,
        ...(isEmpty(ns.labels) ? {} : { labels: ns.labels }),
        ...(isEmpty(ns.annotations) ? {} : { annotations: ns.annotations }),
      },
    },
    { force: true, fieldManager: options.manager, signal: options.signal },
  );
}
