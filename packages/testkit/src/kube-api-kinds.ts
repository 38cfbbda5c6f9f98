/**
 * The resource types the local Kubernetes API server serves (built-in kinds plus those of
 * established CustomResourceDefinitions) and the discovery documents client-node reads to map a
 * kind to its URL: `/api`, `/apis`, `/api/v1`, `/apis/GROUP/VERSION`.
 */
import { isJsonObject, type JsonObject } from "./kube-api-fields.js";

/** One servable resource type. `group` is "" for the core group. */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural used in URLs, e.g. `deployments`. */
  readonly plural: string;
  readonly namespaced: boolean;
  /** Whether it has a `/status` subresource (main-resource writes then ignore `status`). */
  readonly hasStatus: boolean;
}

const VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"];

function t(
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced: boolean,
  hasStatus = true,
): ResourceType {
  return { group, version, kind, plural, namespaced, hasStatus };
}

/** Built-in kinds of the subset the agent uses. */
export const BUILTIN_TYPES: readonly ResourceType[] = [
  t("", "v1", "Namespace", "namespaces", false),
  // Added for the upgrade drivers' tests (kubelet versions); the server's author owns the rest.
  t("", "v1", "Node", "nodes", false),
  t("", "v1", "ConfigMap", "configmaps", true, false),
  t("", "v1", "Secret", "secrets", true, false),
  t("", "v1", "Service", "services", true),
  t("", "v1", "Pod", "pods", true),
  t("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true),
  t("apps", "v1", "Deployment", "deployments", true),
  t("apps", "v1", "StatefulSet", "statefulsets", true),
  t("apps", "v1", "DaemonSet", "daemonsets", true),
  t("apps", "v1", "ReplicaSet", "replicasets", true),
  t("batch", "v1", "Job", "jobs", true),
  t(
    "apiextensions.k8s.io",
    "v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
    false,
  ),
  t("apiregistration.k8s.io", "v1", "APIService", "apiservices", false),
];

/** `group/version`, or `version` for the core group: an object's `apiVersion`. */
export function groupVersion(
  type: Pick<ResourceType, "group" | "version">,
): string {
  return type.group === "" ? type.version : `${type.group}/${type.version}`;
}

/**
 * The resource types a CustomResourceDefinition defines (one per served version), or a problem
 * naming the field that is missing.
 */
export function crdTypes(crd: JsonObject): ResourceType[] | string {
  const spec = isJsonObject(crd.spec) ? crd.spec : {};
  const names = isJsonObject(spec.names) ? spec.names : {};
  const { group } = spec;
  const { kind, plural } = names;
  if (typeof group !== "string" || group === "")
    return "spec.group: Required value";
  if (typeof kind !== "string" || kind === "")
    return "spec.names.kind: Required value";
  if (typeof plural !== "string" || plural === "")
    return "spec.names.plural: Required value";
  if (spec.scope !== "Namespaced" && spec.scope !== "Cluster")
    return `spec.scope: Unsupported value: ${JSON.stringify(spec.scope)}`;
  const versions = Array.isArray(spec.versions)
    ? spec.versions.filter(isJsonObject)
    : [];
  const served = versions.filter(
    (v) => v.served !== false && typeof v.name === "string",
  );
  if (served.length === 0)
    return "spec.versions: Required value: a served version";
  return served.map((v) => ({
    group,
    version: String(v.name),
    kind,
    plural,
    namespaced: spec.scope === "Namespaced",
    hasStatus:
      isJsonObject(v.subresources) && v.subresources.status !== undefined,
  }));
}

/** The status the API server's own controllers give a new object of `type`, if any. */
export function initialStatus(
  type: ResourceType,
  establishCrds: boolean,
): JsonObject | undefined {
  if (type.kind === "Namespace") return { phase: "Active" };
  if (type.kind !== "CustomResourceDefinition") return undefined;
  const conditions = [
    { type: "NamesAccepted", status: "True", reason: "NoConflicts" },
  ];
  if (establishCrds)
    conditions.push({
      type: "Established",
      status: "True",
      reason: "InitialNamesAccepted",
    });
  return { conditions };
}

/** Whether a CustomResourceDefinition's `Established` condition is True. */
export function isEstablished(crd: JsonObject): boolean {
  const status = isJsonObject(crd.status) ? crd.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  return conditions.some(
    (c) => isJsonObject(c) && c.type === "Established" && c.status === "True",
  );
}

/** A predicate: is a resource type one of those a CustomResourceDefinition defines? */
export function sameResourceAs(
  crd: JsonObject,
): (type: ResourceType) => boolean {
  const defined = crdTypes(crd);
  const first = typeof defined === "string" ? undefined : defined[0];
  return (x) =>
    first !== undefined && x.group === first.group && x.plural === first.plural;
}

/** `APIVersions` for `/api`. */
export function coreVersions(): JsonObject {
  return {
    kind: "APIVersions",
    apiVersion: "v1",
    versions: ["v1"],
    serverAddressByClientCIDRs: [],
  };
}

/** `APIGroupList` for `/apis`: every non-core group with its versions. */
export function groupList(types: readonly ResourceType[]): JsonObject {
  const groups = new Map<string, Set<string>>();
  for (const type of types) {
    if (type.group === "") continue;
    const versions = groups.get(type.group) ?? new Set<string>();
    versions.add(type.version);
    groups.set(type.group, versions);
  }
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: [...groups].map(([name, versions]) => {
      const list = [...versions].map((version) => ({
        groupVersion: `${name}/${version}`,
        version,
      }));
      return { name, versions: list, preferredVersion: list[0] };
    }),
  };
}

/** `APIResourceList` for one group version, or undefined when nothing is served there. */
export function resourceList(
  types: readonly ResourceType[],
  group: string,
  version: string,
): JsonObject | undefined {
  const served = types.filter(
    (x) => x.group === group && x.version === version,
  );
  if (served.length === 0) return undefined;
  const resources = served.flatMap((x) => {
    const main = {
      name: x.plural,
      singularName: x.kind.toLowerCase(),
      namespaced: x.namespaced,
      kind: x.kind,
      verbs: VERBS,
    };
    const status = {
      name: `${x.plural}/status`,
      singularName: "",
      namespaced: x.namespaced,
      kind: x.kind,
      verbs: ["get", "patch", "update"],
    };
    return x.hasStatus ? [main, status] : [main];
  });
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: groupVersion({ group, version }),
    resources,
  };
}
