/**
 * Manifests as the gateway receives them and the helpers every adapter shares: naming the objects
 * of a revision (refusing malformed ones before anything is applied) and capping per-resource
 * reasons to what a status report may carry.
 */
import { fail, ok, type Problem, type Result } from "@flotilla/core";
import { MAX_REASONS } from "@flotilla/protocol";
import type { Manifest, ResourceStatus } from "./gateway.js";

/** Identity of one object of a bundle. `namespace` is "" for cluster-scoped objects. */
export interface ResourceRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/** Options of {@link resourceRefs}. */
export interface ResourceRefsOptions {
  /** Namespace for namespaced objects that set none. */
  readonly namespace: string;
  /** Whether a kind is cluster-scoped; the client-node adapter answers from API discovery. */
  readonly isClusterScoped: (apiVersion: string, kind: string) => boolean;
}

/** Well-known cluster-scoped kinds, for adapters without API discovery (the simulated cluster). */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  "APIService",
  "ClusterRole",
  "ClusterRoleBinding",
  "CustomResourceDefinition",
  "MutatingWebhookConfiguration",
  "Namespace",
  "PersistentVolume",
  "PriorityClass",
  "StorageClass",
  "ValidatingWebhookConfiguration",
]);

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `group/kind namespace/name`, unique per object within a cluster. */
export function resourceKey(ref: ResourceRef): string {
  const group = ref.apiVersion.includes("/")
    ? ref.apiVersion.slice(0, ref.apiVersion.indexOf("/"))
    : "";
  return `${group}/${ref.kind} ${ref.namespace}/${ref.name}`;
}

/**
 * The identities of a revision's objects, or every problem (path `manifests[i]…`) when one is
 * malformed or an object appears twice, so a bad revision is refused as a whole.
 */
export function resourceRefs(
  manifests: readonly Manifest[],
  options: ResourceRefsOptions,
): Result<ResourceRef[]> {
  const problems: Problem[] = [];
  const refs: ResourceRef[] = [];
  const seen = new Map<string, number>();
  manifests.forEach((manifest: unknown, i) => {
    const at = `manifests[${String(i)}]`;
    if (!isRecord(manifest)) {
      problems.push({
        path: at,
        message: "must be an object",
        value: manifest,
      });
      return;
    }
    const apiVersion = text(manifest.apiVersion);
    const kind = text(manifest.kind);
    const metadata = isRecord(manifest.metadata) ? manifest.metadata : {};
    const name = text(metadata.name);
    const namespace = metadata.namespace;
    const missing = (field: string, value: unknown): void => {
      problems.push({
        path: `${at}.${field}`,
        message: "must be a non-empty string",
        value,
      });
    };
    if (apiVersion === undefined) missing("apiVersion", manifest.apiVersion);
    if (kind === undefined) missing("kind", manifest.kind);
    if (name === undefined) missing("metadata.name", metadata.name);
    if (namespace !== undefined && text(namespace) === undefined)
      missing("metadata.namespace", namespace);
    if (apiVersion === undefined || kind === undefined || name === undefined)
      return;
    const ref: ResourceRef = {
      apiVersion,
      kind,
      name,
      namespace: options.isClusterScoped(apiVersion, kind)
        ? ""
        : (text(namespace) ?? options.namespace),
    };
    const key = resourceKey(ref);
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push({
        path: at,
        message: `duplicate object; first defined at manifests[${String(first)}]`,
        value: `${kind} ${ref.namespace === "" ? "" : `${ref.namespace}/`}${name}`,
      });
      return;
    }
    seen.set(key, i);
    refs.push(ref);
  });
  return problems.length > 0 ? fail(problems) : ok(refs);
}

/** Keeps at most `max` resource statuses (default: the protocol's MAX_REASONS), counting the rest. */
export function capResources(
  resources: readonly ResourceStatus[],
  max = MAX_REASONS,
): { resources: readonly ResourceStatus[]; resourcesTruncated: number } {
  return {
    resources: resources.slice(0, max),
    resourcesTruncated: Math.max(0, resources.length - max),
  };
}
