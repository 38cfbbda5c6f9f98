/**
 * The inventory of a bundle: a ConfigMap `flotilla-inventory-<bundle>` in the agent's namespace,
 * labelled `flotilla.dev/inventory-of=<bundle>`, whose data holds the bundle, the revision the
 * cluster holds and its objects (apiVersion, kind, namespace, name) as JSON. Pruning and removal
 * only ever delete objects listed here, so objects the bundle does not own are never touched, and
 * a restarted agent learns from the inventories which bundles the cluster holds.
 */
import type { KubeClient, KubeObject } from "./kube-client.js";
import type { ResourceRef } from "./manifest.js";

/** Label put on inventories, valued with the bundle name. */
export const INVENTORY_LABEL = "flotilla.dev/inventory-of";
/** Label put on every applied object, valued with the bundle name. */
export const BUNDLE_LABEL = "flotilla.dev/bundle";

/** A bundle's inventory as stored. */
export interface Inventory {
  readonly bundle: string;
  readonly revision: string;
  readonly refs: readonly ResourceRef[];
}

/** The inventory ConfigMap's name for `bundle`. */
export function inventoryName(bundle: string): string {
  return `flotilla-inventory-${bundle}`;
}

/** The inventory ConfigMap to apply. */
export function inventoryObject(
  namespace: string,
  inventory: Inventory,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: inventoryName(inventory.bundle),
      namespace,
      labels: { [INVENTORY_LABEL]: inventory.bundle },
    },
    data: {
      bundle: inventory.bundle,
      revision: inventory.revision,
      objects: JSON.stringify(
        inventory.refs.map(({ apiVersion, kind, namespace: ns, name }) => ({
          apiVersion,
          kind,
          namespace: ns,
          name,
        })),
      ),
    },
  };
}

function text(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}

/** The inventory in a ConfigMap, or an error message naming what is wrong with it. */
export function parseInventory(object: KubeObject): Inventory | string {
  const data = object.data as Record<string, unknown> | undefined;
  if (typeof data !== "object") return "data: missing";
  const { bundle, revision } = data;
  if (!text(bundle))
    return `data.bundle: must be a non-empty string, got ${JSON.stringify(bundle)}`;
  if (typeof revision !== "string")
    return `data.revision: must be a string, got ${JSON.stringify(revision)}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(data.objects));
  } catch {
    return "data.objects: not JSON";
  }
  if (!Array.isArray(parsed)) return "data.objects: must be a JSON array";
  const refs: ResourceRef[] = [];
  for (const [i, item] of parsed.entries()) {
    const r = item as Record<string, unknown>;
    if (
      typeof item !== "object" ||
      item === null ||
      !text(r.apiVersion) ||
      !text(r.kind) ||
      !text(r.name) ||
      typeof r.namespace !== "string"
    )
      return `data.objects[${String(i)}]: must have apiVersion, kind, namespace and name`;
    refs.push({
      apiVersion: r.apiVersion,
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
    });
  }
  return { bundle, revision, refs };
}

const configMap = (namespace: string, name: string): ResourceRef => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  namespace,
  name,
});

/** Reads a bundle's inventory; undefined when there is none. Throws on an unreadable one. */
export async function readInventory(
  client: KubeClient,
  namespace: string,
  bundle: string,
  signal?: AbortSignal,
): Promise<Inventory | undefined> {
  const found = await client.get(configMap(namespace, inventoryName(bundle)), {
    signal,
  });
  if (found === undefined) return undefined;
  const parsed = parseInventory(found);
  if (typeof parsed === "string")
    throw new Error(
      `Cannot read inventory "${namespace}/${inventoryName(bundle)}": ${parsed}`,
    );
  return parsed;
}

/** Every inventory in the namespace (unreadable ones are reported through `onInvalid`). */
export async function listInventories(
  client: KubeClient,
  namespace: string,
  onInvalid: (name: string, problem: string) => void,
  signal?: AbortSignal,
): Promise<Inventory[]> {
  const items = await client.list(
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace,
      labelSelector: INVENTORY_LABEL,
    },
    { signal },
  );
  const out: Inventory[] = [];
  for (const item of items) {
    const parsed = parseInventory(item);
    const name = String(
      (item.metadata as Record<string, unknown> | undefined)?.name,
    );
    if (typeof parsed === "string") onInvalid(name, parsed);
    else out.push(parsed);
  }
  return out.sort((a, b) =>
    a.bundle < b.bundle ? -1 : a.bundle > b.bundle ? 1 : 0,
  );
}

/** Writes (server-side apply, forced: the agent owns its inventories) a bundle's inventory. */
export async function writeInventory(
  client: KubeClient,
  namespace: string,
  inventory: Inventory,
  signal?: AbortSignal,
): Promise<void> {
  await client.apply(inventoryObject(namespace, inventory), {
    force: true,
    signal,
  });
}

/** Deletes a bundle's inventory (gone already is fine). */
export async function deleteInventory(
  client: KubeClient,
  namespace: string,
  bundle: string,
  signal?: AbortSignal,
): Promise<void> {
  await client.remove(configMap(namespace, inventoryName(bundle)), { signal });
}
