/**
 * Reading Cluster API objects (v1beta1) for the Cluster API driver: where a Cluster's control plane
 * and MachineDeployments are, how far a control plane or MachineDeployment has rolled out to a
 * version, and whether it reports a failure. Rolled-out counts are trusted only once the controller
 * has observed the object's current generation, since `updatedReplicas` describes the spec it last
 * saw.
 */
import type { NodePool } from "@flotilla/core";
import type { PlatformFacts } from "./driver.js";
import {
  conditionOf,
  normalizeVersion,
  numberAt,
  record,
  stringAt,
  type JsonRecord,
} from "./kube-upgrade.js";
import { compact } from "@flotilla/core";

/** The label Cluster API puts on every object of a cluster. */
export const CAPI_CLUSTER_LABEL = "cluster.x-k8s.io/cluster-name";

export const CAPI_API_VERSION = "cluster.x-k8s.io/v1beta1";

/** A reference to an object by apiVersion, kind and name (namespace: the Cluster's). */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
}

/** `object.a.b` as an {@link ObjectRef}, or undefined when incomplete. */
export function refAt(
  object: unknown,
  ...path: readonly string[]
): ObjectRef | undefined {
  let cursor: unknown = object;
  for (const key of path) cursor = record(cursor)[key];
  const r = record(cursor);
  return typeof r.apiVersion === "string" &&
    typeof r.kind === "string" &&
    typeof r.name === "string"
    ? { apiVersion: r.apiVersion, kind: r.kind, name: r.name }
    : undefined;
}

/** How far one rollout (a control plane or a MachineDeployment) is. */
export interface Rollout {
  readonly name: string;
  /** Machines wanted. */
  readonly replicas: number;
  /** Machines at the wanted spec (0 until the controller has observed it). */
  readonly updated: number;
  /** All machines updated and ready, and nothing older left. */
  readonly done: boolean;
  /** The failure the object reports, if any. */
  readonly failure?: string;
}

function observed(object: JsonRecord): boolean {
  const generation = numberAt(object, "metadata", "generation") ?? 0;
  return (numberAt(object, "status", "observedGeneration") ?? -1) >= generation;
}

/** The reported failure: `status.failureMessage`/`failureReason`, or a False Ready of severity Error. */
function failureOf(object: JsonRecord): string | undefined {
  const message = stringAt(object, "status", "failureMessage");
  const reason = stringAt(object, "status", "failureReason");
  if (message !== undefined || reason !== undefined)
    return [reason, message].filter((x) => x !== undefined).join(": ");
  if (stringAt(object, "status", "phase") === "Failed") return "phase Failed";
  const conditions = record(object.status).conditions;
  const ready = Array.isArray(conditions)
    ? conditions.map(record).find((c) => c.type === "Ready")
    : undefined;
  if (ready?.status === "False" && ready.severity === "Error") {
    const reason = typeof ready.reason === "string" ? ready.reason : "NotReady";
    const message = typeof ready.message === "string" ? ready.message : "";
    return `${reason}: ${message}`;
  }
  return undefined;
}

/** A control plane's rollout to `version` (status.version is its lowest machine version). */
export function controlPlaneRollout(
  object: JsonRecord,
  version: string,
): Rollout {
  const replicas =
    numberAt(object, "spec", "replicas") ??
    numberAt(object, "status", "replicas") ??
    1;
  const fresh =
    observed(object) &&
    normalizeVersion(stringAt(object, "spec", "version")) === version;
  const updated = fresh
    ? Math.min(replicas, numberAt(object, "status", "updatedReplicas") ?? 0)
    : 0;
  const ready = conditionOf(object, "Ready");
  const failure = failureOf(object);
  return {
    name: stringAt(object, "metadata", "name") ?? "",
    replicas,
    updated,
    done:
      fresh &&
      normalizeVersion(stringAt(object, "status", "version")) === version &&
      updated === replicas &&
      (numberAt(object, "status", "replicas") ?? replicas) === replicas &&
      (numberAt(object, "status", "readyReplicas") ?? 0) >= replicas &&
      ready?.status !== "False",
    ...compact({ failure }),
  };
}

/** A MachineDeployment's rollout to `version` and, when given, infrastructure template `template`. */
export function machineDeploymentRollout(
  object: JsonRecord,
  version: string | undefined,
  template: string | undefined,
): Rollout {
  const replicas = numberAt(object, "spec", "replicas") ?? 0;
  const fresh =
    observed(object) &&
    (version === undefined ||
      normalizeVersion(
        stringAt(object, "spec", "template", "spec", "version"),
      ) === version) &&
    (template === undefined ||
      refAt(object, "spec", "template", "spec", "infrastructureRef")?.name ===
        template);
  const updated = fresh
    ? Math.min(replicas, numberAt(object, "status", "updatedReplicas") ?? 0)
    : 0;
  const failure = failureOf(object);
  return {
    name: stringAt(object, "metadata", "name") ?? "",
    replicas,
    updated,
    done:
      fresh &&
      updated === replicas &&
      (numberAt(object, "status", "replicas") ?? replicas) === replicas &&
      (numberAt(object, "status", "readyReplicas") ?? 0) >= replicas,
    ...compact({ failure }),
  };
}

/** The facts: the control plane's `status.version`; a pool per MachineDeployment, its template as image. */
export function capiFacts(
  controlPlane: JsonRecord,
  mds: readonly JsonRecord[],
): PlatformFacts {
  const control = normalizeVersion(stringAt(controlPlane, "status", "version"));
  const nodePools = mds.map((md): NodePool => {
    const infra = refAt(md, "spec", "template", "spec", "infrastructureRef");
    const kubelet = normalizeVersion(
      stringAt(md, "spec", "template", "spec", "version"),
    );
    return {
      name: stringAt(md, "metadata", "name") ?? "",
      imageFamily: infra?.kind ?? "unknown",
      imageVersion: infra?.name ?? "unknown",
      ...(kubelet === undefined || kubelet === control
        ? {}
        : { kubernetesVersion: kubelet }),
    };
  });
  return control === undefined
    ? { nodePools }
    : { kubernetesVersion: control, nodePools };
}

/** The apply configuration moving a MachineDeployment to `version` and/or infrastructure template `template`. */
export function machineDeploymentPatch(
  md: JsonRecord,
  namespace: string,
  version: string | undefined,
  template: string | undefined,
): JsonRecord {
  const infra = refAt(md, "spec", "template", "spec", "infrastructureRef");
  return {
    apiVersion: CAPI_API_VERSION,
    kind: "MachineDeployment",
    metadata: { name: stringAt(md, "metadata", "name"), namespace },
    spec: {
      template: {
        spec: {
          ...(version === undefined ? {} : { version: `v${version}` }),
          ...(template === undefined || infra === undefined
            ? {}
            : { infrastructureRef: { ...infra, name: template } }),
        },
      },
    },
  };
}
