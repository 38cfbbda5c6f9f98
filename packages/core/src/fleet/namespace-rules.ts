/**
 * Where a bundle's objects go (docs/semantics.md#namespaces), as Fleet places them:
 * * `defaultNamespace` is the namespace of namespaced objects that set none;
 * * `namespace` (Fleet's target namespace) forces every namespaced object into it, even one that
 *   sets another, and refuses cluster-scoped objects, since the bundle is locked to one namespace.
 *
 * One pure function, {@link placeObjects}, used wherever objects are known: the hub on a bundle's
 * manifests (built-in kinds: {@link builtInNamespaced}), the agent on what it applies (API
 * discovery). A kind whose scope the caller cannot tell (a CRD's) is left as it is, for a later
 * caller that can.
 */
import { fail, ok, type Problem, type Result } from "../result.js";
import type { ManifestObject } from "./customize.js";

/** The namespace rules in force for one target. */
export interface NamespaceRules {
  /** Namespace of namespaced objects that set none; "" for none. */
  readonly defaultNamespace: string;
  /** fleet.yaml `namespace`: every namespaced object goes here, cluster-scoped ones are refused; "" for none. */
  readonly targetNamespace: string;
}

/** Whether a kind is namespaced: true, false, or undefined when the caller cannot tell. */
export type NamespacedPredicate = (
  apiVersion: string,
  kind: string,
) => boolean | undefined;

/** An object `namespace` moved out of the namespace it set. */
export interface MovedObject {
  /** The rule's field that moved it. */
  readonly path: string;
  readonly object: string;
  readonly from: string;
  readonly to: string;
}

/** Objects as placed, and which ones the target namespace moved. */
export interface PlacedObjects<T extends ManifestObject> {
  readonly objects: T[];
  readonly moved: MovedObject[];
}

// Built-in kinds by API group ("" is the core group), from Kubernetes' API discovery.
const CLUSTER_SCOPED: Readonly<Record<string, readonly string[]>> = {
  "": ["Namespace", "Node", "PersistentVolume", "ComponentStatus"],
  "rbac.authorization.k8s.io": ["ClusterRole", "ClusterRoleBinding"],
  "apiextensions.k8s.io": ["CustomResourceDefinition"],
  "apiregistration.k8s.io": ["APIService"],
  "admissionregistration.k8s.io": [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
  ],
  "scheduling.k8s.io": ["PriorityClass"],
  "storage.k8s.io": [
    "StorageClass",
    "CSIDriver",
    "CSINode",
    "VolumeAttachment",
  ],
  "node.k8s.io": ["RuntimeClass"],
  "networking.k8s.io": ["IngressClass"],
  "certificates.k8s.io": ["CertificateSigningRequest"],
  "flowcontrol.apiserver.k8s.io": ["FlowSchema", "PriorityLevelConfiguration"],
};

const NAMESPACED: Readonly<Record<string, readonly string[]>> = {
  "": [
    "ConfigMap",
    "Secret",
    "Service",
    "ServiceAccount",
    "Pod",
    "PersistentVolumeClaim",
    "Endpoints",
    "LimitRange",
    "ResourceQuota",
    "ReplicationController",
    "PodTemplate",
    "Event",
  ],
  apps: ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"],
  batch: ["Job", "CronJob"],
  "rbac.authorization.k8s.io": ["Role", "RoleBinding"],
  "networking.k8s.io": ["Ingress", "NetworkPolicy"],
  autoscaling: ["HorizontalPodAutoscaler"],
  policy: ["PodDisruptionBudget"],
  "coordination.k8s.io": ["Lease"],
  "discovery.k8s.io": ["EndpointSlice"],
};

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash === -1 ? "" : apiVersion.slice(0, slash);
}

/** Whether a built-in Kubernetes kind is namespaced; undefined for kinds it does not know (CRDs). */
export const builtInNamespaced: NamespacedPredicate = (apiVersion, kind) => {
  const group = groupOf(apiVersion);
  if (CLUSTER_SCOPED[group]?.includes(kind) === true) return false;
  if (NAMESPACED[group]?.includes(kind) === true) return true;
  return undefined;
};

/** `Kind ns/name` or `Kind name`. */
function describe(object: ManifestObject): string {
  const ns = object.metadata.namespace;
  return `${object.kind} ${ns === undefined || ns === "" ? "" : `${ns}/`}${object.metadata.name}`;
}

/** The problem of a cluster-scoped object under a target namespace: what it means, and the way out. */
export function clusterScopedProblem(
  object: ManifestObject,
  targetNamespace: string,
  path: string,
): Problem {
  return {
    path,
    message:
      `cluster-scoped ${object.kind} "${object.metadata.name}" (apiVersion ${object.apiVersion}) cannot be deployed: ` +
      `"namespace: ${targetNamespace}" locks the bundle to that namespace, which forbids cluster-scoped objects ` +
      `(as in Fleet); for the namespace of objects that set none, use "defaultNamespace" (what flotilla's "namespace" meant before)`,
    value: describe(object),
  };
}

/**
 * `objects` placed by `rules`: namespaced objects get the target namespace (even when they set
 * another; those are listed in `moved`) or, without one, the default namespace when they set none.
 * Cluster-scoped objects are kept as they are, or refused under a target namespace; objects of a
 * kind `isNamespaced` cannot tell are kept as they are. Problems are at `path` (the rule's field,
 * e.g. `bundle.namespace`) and name the object. The inputs are left unchanged.
 */
export function placeObjects<T extends ManifestObject>(
  objects: readonly T[],
  rules: NamespaceRules,
  isNamespaced: NamespacedPredicate,
  path = "",
): Result<PlacedObjects<T>> {
  const problems: Problem[] = [];
  const moved: MovedObject[] = [];
  const out = objects.map((object): T => {
    const scope = isNamespaced(object.apiVersion, object.kind);
    if (scope === undefined) return object;
    if (!scope) {
      if (rules.targetNamespace !== "")
        problems.push(
          clusterScopedProblem(object, rules.targetNamespace, path),
        );
      return object;
    }
    const own = object.metadata.namespace ?? "";
    const wanted =
      rules.targetNamespace !== ""
        ? rules.targetNamespace
        : own === ""
          ? rules.defaultNamespace
          : own;
    if (wanted === own) return object;
    if (own !== "")
      moved.push({ path, object: describe(object), from: own, to: wanted });
    if (wanted === "") return object;
    return { ...object, metadata: { ...object.metadata, namespace: wanted } };
  });
  return problems.length > 0 ? fail(problems) : ok({ objects: out, moved });
}

/** A one-line note for each object the target namespace moved (a warning, as Fleet moves silently). */
export function movedMessage(m: MovedObject): string {
  return `${m.object} sets namespace "${m.from}" but "namespace: ${m.to}" moves it to "${m.to}" (as in Fleet); use "defaultNamespace" to keep the namespaces objects set`;
}
