/**
 * Per-cluster patches of a bundle's manifests: a `targetCustomizations` entry's `patches` (fleet.yaml,
 * flotilla's own field: Fleet customizes through overlay files instead, which flotilla does not
 * read). Each patch names one object by kind and name (and apiVersion and namespace when given)
 * and is a JSON Merge Patch (RFC 7386, merge-patch.ts) applied to it, in order.
 *
 * A patch that matches no object is a problem, not a warning: it is almost always a typo, and the
 * clusters would otherwise silently get unpatched content. A patch may not change what it patches
 * (apiVersion, kind, metadata.name, metadata.namespace), so the object stays the one it names.
 */
import { fail, joinPath, ok, type Problem, type Result } from "../result.js";
import { applyMergePatch } from "./merge-patch.js";

/** Which object a patch applies to; unset apiVersion or namespace matches any. */
export interface PatchTarget {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly name: string;
  /** Compared with the object's namespace, or the default namespace when the object sets none. */
  readonly namespace?: string;
}

/** One entry of `targetCustomizations[].patches`. */
export interface ManifestPatch {
  readonly target: PatchTarget;
  /** A JSON Merge Patch (RFC 7386) of the object. */
  readonly patch: Readonly<Record<string, unknown>>;
}

/** A Kubernetes object of a bundle (the shape of protocol's KubernetesObject). */
export type ManifestObject = Readonly<Record<string, unknown>> & {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: Readonly<Record<string, unknown>> & {
    readonly name: string;
    readonly namespace?: string;
  };
};

/** What {@link customizeManifests} reads of a customization. */
export interface ManifestCustomization {
  /** Default namespace of the clusters it matches, instead of the bundle's. */
  readonly defaultNamespace?: string;
  readonly patches?: readonly ManifestPatch[];
}

/** Options of {@link customizeManifests}. */
export interface CustomizeOptions {
  /** The bundle's default namespace ("" for none), used when the customization sets none. */
  readonly bundleNamespace?: string;
  /** Path of the customization, for problems (`bundle.targetCustomizations[1]`). */
  readonly path?: string;
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Why `patch` may not be applied, with the path (inside it) and value of the offending field; undefined when
 * it may. It may not set (or delete) apiVersion, kind, metadata.name or metadata.namespace.
 */
export function patchProblem(patch: unknown): Problem | undefined {
  if (!isObject(patch)) {
    return {
      path: "",
      message: "must be a JSON object (a merge patch)",
      value: patch,
    };
  }
  for (const key of ["apiVersion", "kind"]) {
    if (key in patch) {
      return {
        path: key,
        message: `must not change the object's ${key}`,
        value: patch[key],
      };
    }
  }
  if (!("metadata" in patch)) return undefined;
  const metadata = patch["metadata"];
  if (!isObject(metadata)) {
    return { path: "metadata", message: "must be an object", value: metadata };
  }
  for (const key of ["name", "namespace"]) {
    if (key in metadata) {
      return {
        path: `metadata.${key}`,
        message: `must not change the object's ${key}: the patch target names the object`,
        value: metadata[key],
      };
    }
  }
  return undefined;
}

/** True when `target` names `object`, whose namespace is `defaultNamespace` if it sets none. */
export function matchesPatchTarget(
  target: PatchTarget,
  object: ManifestObject,
  defaultNamespace: string,
): boolean {
  return (
    object.kind === target.kind &&
    object.metadata.name === target.name &&
    (target.apiVersion === undefined ||
      object.apiVersion === target.apiVersion) &&
    (target.namespace === undefined ||
      (object.metadata.namespace ?? defaultNamespace) === target.namespace)
  );
}

function describeTarget(t: PatchTarget): string {
  const parts = [`kind "${t.kind}"`, `name "${t.name}"`];
  if (t.apiVersion !== undefined) parts.push(`apiVersion "${t.apiVersion}"`);
  if (t.namespace !== undefined) parts.push(`namespace "${t.namespace}"`);
  return parts.join(", ");
}

/**
 * `manifests` as the clusters matched by `customization` receive them: every patch applied, in
 * order, to every object its target names. Fails with every problem (a patch matching no object,
 * a patch changing what it patches); the inputs are left unchanged.
 */
export function customizeManifests(
  manifests: readonly ManifestObject[],
  customization: ManifestCustomization,
  options: CustomizeOptions = {},
): Result<ManifestObject[]> {
  const defaultNamespace =
    customization.defaultNamespace ?? options.bundleNamespace ?? "";
  const out = [...manifests];
  const problems: Problem[] = [];
  (customization.patches ?? []).forEach((p, j) => {
    const path = joinPath(joinPath(options.path ?? "", "patches"), j);
    const bad = patchProblem(p.patch);
    if (bad !== undefined) {
      const at = joinPath(path, "patch");
      problems.push({
        ...bad,
        path: bad.path === "" ? at : joinPath(at, bad.path),
      });
      return;
    }
    let matched = false;
    out.forEach((object, i) => {
      if (!matchesPatchTarget(p.target, object, defaultNamespace)) return;
      matched = true;
      // patchProblem held, so identity fields are unchanged: still a ManifestObject.
      out[i] = applyMergePatch(object, p.patch) as ManifestObject;
    });
    if (!matched) {
      problems.push({
        path: joinPath(path, "target"),
        message: `matches no object of the bundle (${describeTarget(p.target)}, default namespace "${defaultNamespace}")`,
        value: p.target,
      });
    }
  });
  return problems.length > 0 ? fail(problems) : ok(out);
}
