/**
 * Field ownership for the local Kubernetes API server's server-side apply, after Kubernetes'
 * rules: an apply by a manager sets the fields of its configuration and owns exactly those; a
 * field it owned before and no longer sets is removed unless another manager owns it too; a field
 * another manager owns with a different value is a conflict (409) unless `force` moves it over.
 * An update (merge patch, edit) makes its manager the owner of every field whose value it changed.
 */
import {
  changedPaths,
  deletePath,
  getPath,
  jsonEqual,
  leafPaths,
  pathKey,
  pathText,
  setPath,
  toFieldsV1,
  type FieldPath,
  type JsonObject,
} from "./kube-api-fields.js";
import { KubeApiError } from "./kube-api-error.js";

/** The fields one manager owns, and how it last wrote them. */
export interface Ownership {
  readonly operation: "Apply" | "Update";
  readonly time: string;
  readonly paths: ReadonlyMap<string, FieldPath>;
}

/** Owners of an object's fields by manager name. */
export type Owners = ReadonlyMap<string, Ownership>;

/**
 * Applies `config` by `options.manager` to `live` (mutated and returned) and the new owners;
 * throws a 409 Conflict listing every conflicting field when `force` is off.
 */
export function applyOwnership(
  live: JsonObject,
  owners: Owners,
  config: JsonObject,
  options: { manager: string; force: boolean },
): { live: JsonObject; owners: Map<string, Ownership> } {
  const paths = new Map(leafPaths(config).map((p) => [pathKey(p), p]));
  const next = new Map(owners);
  const conflicts: string[] = [];
  for (const [manager, owned] of owners) {
    if (manager === options.manager) continue;
    const lost = [...paths].filter(
      ([k, p]) =>
        owned.paths.has(k) && !jsonEqual(getPath(live, p), getPath(config, p)),
    );
    if (lost.length === 0) continue;
    if (!options.force) {
      conflicts.push(
        ...lost.map(([, p]) => `conflict with "${manager}": ${pathText(p)}`),
      );
      continue;
    }
    const kept = new Map(owned.paths);
    for (const [k] of lost) kept.delete(k);
    next.set(manager, { ...owned, paths: kept });
  }
  if (conflicts.length > 0) {
    const n = conflicts.length;
    throw new KubeApiError(
      409,
      "Conflict",
      `Apply failed with ${String(n)} conflict${n === 1 ? "" : "s"}: ${conflicts.join("; ")}`,
    );
  }
  const previous: ReadonlyMap<string, FieldPath> =
    next.get(options.manager)?.paths ?? new Map<string, FieldPath>();
  for (const [k, p] of previous) {
    const ownedByOthers = [...next].some(
      ([m, o]) => m !== options.manager && o.paths.has(k),
    );
    if (!paths.has(k) && !ownedByOthers) deletePath(live, p);
  }
  for (const p of paths.values()) setPath(live, p, getPath(config, p));
  const mine = owners.get(options.manager);
  const same =
    mine?.operation === "Apply" &&
    mine.paths.size === paths.size &&
    [...paths.keys()].every((k) => mine.paths.has(k));
  // An apply that owns the same fields keeps its time, so a no-op apply changes nothing.
  next.set(options.manager, {
    operation: "Apply",
    time: same ? mine.time : new Date().toISOString(),
    paths,
  });
  return { live, owners: next };
}

/** The owners after `manager` changed an object from `before` to `after` by an update. */
export function updateOwnership(
  owners: Owners,
  before: JsonObject,
  after: JsonObject,
  manager: string,
): Map<string, Ownership> {
  const changed = changedPaths(before, after);
  const next = new Map<string, Ownership>();
  for (const [m, o] of owners) {
    const kept = new Map(o.paths);
    for (const p of changed) kept.delete(pathKey(p));
    next.set(m, { ...o, paths: kept });
  }
  const mine = new Map(next.get(manager)?.paths ?? []);
  for (const p of changed)
    if (getPath(after, p) !== undefined) mine.set(pathKey(p), p);
  if (changed.length > 0)
    next.set(manager, {
      operation: "Update",
      time: new Date().toISOString(),
      paths: mine,
    });
  return next;
}

/** `metadata.managedFields` for `owners` (managers owning nothing left out). */
export function managedFields(
  owners: Owners | undefined,
  apiVersion: string,
): JsonObject[] {
  return [...(owners ?? [])]
    .filter(([, o]) => o.paths.size > 0)
    .map(([manager, o]) => ({
      manager,
      operation: o.operation,
      apiVersion,
      time: o.time,
      fieldsType: "FieldsV1",
      fieldsV1: toFieldsV1(o.paths.values()),
    }));
}
