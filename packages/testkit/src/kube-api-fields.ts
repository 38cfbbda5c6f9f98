/**
 * Field paths of Kubernetes objects for the local API server's server-side apply: the leaf fields
 * an apply configuration sets, reading, writing and removing them, JSON merge patch (RFC 7386),
 * and the `fieldsV1` encoding of `managedFields`.
 *
 * Deliberate simplification of the real structured-merge-diff: lists are atomic (one field owned
 * as a whole, as for lists without `x-kubernetes-list-map-keys`), and an empty object is a leaf.
 * That is enough for ownership and conflict tests; it does not merge containers by name.
 */

/** A JSON object as decoded from a request body. */
export type JsonObject = Record<string, unknown>;

/** One field: the keys from the object's root to a leaf. */
export type FieldPath = readonly string[];

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Deep copy of JSON data. */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}

/** Structural equality of JSON data (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** A field path as a map key (paths contain dots and slashes, e.g. label keys). */
export function pathKey(path: FieldPath): string {
  return JSON.stringify(path);
}

/** The inverse of {@link pathKey}. */
export function pathFromKey(key: string): FieldPath {
  return JSON.parse(key) as string[];
}

/** `.spec.replicas`, `.metadata.labels.app`: a path as Kubernetes prints it in conflicts. */
export function pathText(path: FieldPath): string {
  return path.map((p) => `.${p}`).join("");
}

/** Every leaf field under `value`, prefixed by `prefix`. */
export function leafPaths(value: unknown, prefix: FieldPath = []): FieldPath[] {
  if (!isJsonObject(value) || Object.keys(value).length === 0)
    return prefix.length === 0 ? [] : [prefix];
  return Object.entries(value).flatMap(([k, v]) =>
    leafPaths(v, [...prefix, k]),
  );
}

/** The value at `path`, or undefined. */
export function getPath(root: unknown, path: FieldPath): unknown {
  let node = root;
  for (const key of path) {
    if (!isJsonObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

/** Sets the value at `path`, creating objects on the way (replacing non-objects). */
export function setPath(
  root: JsonObject,
  path: FieldPath,
  value: unknown,
): void {
  let node = root;
  path.slice(0, -1).forEach((key) => {
    const next = node[key];
    if (isJsonObject(next)) node = next;
    else {
      const created: JsonObject = {};
      node[key] = created;
      node = created;
    }
  });
  const last = path.at(-1);
  if (last !== undefined) node[last] = cloneJson(value);
}

/** Removes the value at `path`, then every object on the way that became empty. */
export function deletePath(root: JsonObject, path: FieldPath): void {
  const chain: JsonObject[] = [root];
  for (const key of path.slice(0, -1)) {
    const next = chain.at(-1)?.[key];
    if (!isJsonObject(next)) return;
    chain.push(next);
  }
  const last = path.at(-1);
  if (last === undefined) return;
  Reflect.deleteProperty(chain[chain.length - 1] ?? {}, last);
  for (let i = chain.length - 1; i > 0; i--) {
    const node = chain[i];
    const key = path[i - 1];
    if (node === undefined || key === undefined || Object.keys(node).length > 0)
      return;
    Reflect.deleteProperty(chain[i - 1] ?? {}, key);
  }
}

/** RFC 7386 JSON merge patch: `null` removes, objects merge, everything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const result: JsonObject = isJsonObject(target) ? cloneJson(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) Reflect.deleteProperty(result, k);
    else result[k] = mergePatch(result[k], v);
  }
  return result;
}

/** Leaf fields whose values differ between two versions of an object (either side may lack them). */
export function changedPaths(
  before: JsonObject,
  after: JsonObject,
): FieldPath[] {
  const keys = new Map<string, FieldPath>();
  for (const p of [...leafPaths(before), ...leafPaths(after)])
    keys.set(pathKey(p), p);
  return [...keys.values()].filter(
    (p) => !jsonEqual(getPath(before, p), getPath(after, p)),
  );
}

/** Encodes owned fields the way `managedFields[].fieldsV1` does: `{"f:spec":{"f:replicas":{}}}`. */
export function toFieldsV1(paths: Iterable<FieldPath>): JsonObject {
  const root: JsonObject = {};
  for (const path of paths) {
    let node = root;
    for (const key of path) {
      const next = node[`f:${key}`];
      if (isJsonObject(next)) node = next;
      else {
        const created: JsonObject = {};
        node[`f:${key}`] = created;
        node = created;
      }
    }
  }
  return root;
}
