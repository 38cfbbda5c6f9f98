/**
 * Readiness of one live object, by kind, following what `kubectl rollout status` and Helm's
 * `--wait` check: the controller has observed the latest generation, and the kind's own signal
 * says the object serves (replicas updated and available, Job complete, Pod ready, LoadBalancer
 * has an address, PVC bound, CRD established, APIService available). Kinds without a rule are
 * Ready when their controller observed the generation and their `Ready` or `Available`
 * condition, when present, is True; kinds without status (ConfigMap, Secret...) once they exist.
 */
import type { KubeObject } from "./kube-client.js";

/** The readiness of one object: Ready, NotReady, or Failed (will not become Ready by itself). */
export interface Readiness {
  readonly state: "Ready" | "NotReady" | "Failed";
  readonly message: string;
}

type Json = Record<string, unknown>;

function rec(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Json)
    : {};
}

function num(value: unknown, fallback = 0): number {
  return typeof value === "number" ? value : fallback;
}

function str(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}

/** `what: detail`, or `what` when there is no detail. */
function withDetail(what: string, detail: unknown): string {
  return typeof detail === "string" && detail !== ""
    ? `${what}: ${detail}`
    : what;
}

function condition(status: Json, type: string): Json | undefined {
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  return conditions.map(rec).find((c) => c.type === type);
}

function isTrue(status: Json, type: string): boolean {
  return condition(status, type)?.status === "True";
}

const READY: Readiness = { state: "Ready", message: "" };
const notReady = (message: string): Readiness => ({
  state: "NotReady",
  message,
});

/** NotReady while the controller has not observed the object's latest generation. */
function generationLag(object: KubeObject): Readiness | undefined {
  const status = rec(object.status);
  const generation = num(rec(object.metadata).generation);
  if (status.observedGeneration === undefined || generation === 0)
    return undefined;
  const observed = num(status.observedGeneration);
  return observed < generation
    ? notReady(
        `waiting for the controller to observe generation ${String(generation)} (observed ${String(observed)})`,
      )
    : undefined;
}

function replicas(
  object: KubeObject,
  fields: { ready: string; updated?: string },
  what: string,
): Readiness {
  const lag = generationLag(object);
  if (lag) return lag;
  const status = rec(object.status);
  if (status.observedGeneration === undefined)
    return notReady(`waiting for the ${what} controller`);
  const want = num(rec(object.spec).replicas, 1);
  if (fields.updated !== undefined) {
    const updated = num(status[fields.updated]);
    if (updated < want)
      return notReady(`${String(updated)} of ${String(want)} replicas updated`);
  }
  const ready = num(status[fields.ready]);
  return ready < want
    ? notReady(
        `${String(ready)} of ${String(want)} replicas ${fields.ready === "availableReplicas" ? "available" : "ready"}`,
      )
    : READY;
}

function deployment(object: KubeObject): Readiness {
  const progressing = condition(rec(object.status), "Progressing");
  if (progressing?.reason === "ProgressDeadlineExceeded")
    return {
      state: "Failed",
      message: withDetail("progress deadline exceeded", progressing.message),
    };
  return replicas(
    object,
    { ready: "availableReplicas", updated: "updatedReplicas" },
    "deployment",
  );
}

function statefulSet(object: KubeObject): Readiness {
  const base = replicas(
    object,
    { ready: "readyReplicas", updated: "updatedReplicas" },
    "statefulset",
  );
  if (base.state !== "Ready") return base;
  const status = rec(object.status);
  return status.updateRevision !== undefined &&
    status.currentRevision !== status.updateRevision
    ? notReady(`rolling out revision ${str(status.updateRevision)}`)
    : READY;
}

function daemonSet(object: KubeObject): Readiness {
  const lag = generationLag(object);
  if (lag) return lag;
  const status = rec(object.status);
  if (status.observedGeneration === undefined)
    return notReady("waiting for the daemonset controller");
  const desired = num(status.desiredNumberScheduled);
  const updated = num(status.updatedNumberScheduled);
  const available = num(status.numberAvailable);
  if (updated < desired)
    return notReady(`${String(updated)} of ${String(desired)} pods updated`);
  return available < desired
    ? notReady(`${String(available)} of ${String(desired)} pods available`)
    : READY;
}

function job(object: KubeObject): Readiness {
  const status = rec(object.status);
  if (isTrue(status, "Failed"))
    return {
      state: "Failed",
      message: withDetail("job failed", condition(status, "Failed")?.message),
    };
  return isTrue(status, "Complete") ? READY : notReady("job not complete");
}

function pod(object: KubeObject): Readiness {
  const status = rec(object.status);
  if (status.phase === "Succeeded") return READY;
  if (status.phase === "Failed")
    return {
      state: "Failed",
      message: `pod failed: ${str(status.reason, str(status.message))}`,
    };
  return isTrue(status, "Ready")
    ? READY
    : notReady(`pod ${str(status.phase, "Pending")}, not ready`);
}

function service(object: KubeObject): Readiness {
  if (rec(object.spec).type !== "LoadBalancer") return READY;
  const ingress = rec(rec(object.status).loadBalancer).ingress;
  return Array.isArray(ingress) && ingress.length > 0
    ? READY
    : notReady("waiting for a load balancer address");
}

function byCondition(
  object: KubeObject,
  type: string,
  what: string,
): Readiness {
  const c = condition(rec(object.status), type);
  return c?.status === "True"
    ? READY
    : notReady(
        `${what}${typeof c?.message === "string" && c.message !== "" ? `: ${c.message}` : ""}`,
      );
}

function generic(object: KubeObject): Readiness {
  const lag = generationLag(object);
  if (lag) return lag;
  const status = rec(object.status);
  for (const type of ["Ready", "Available"]) {
    const c = condition(status, type);
    if (c !== undefined)
      return c.status === "True"
        ? READY
        : notReady(
            `${type} is ${String(c.status)}${typeof c.message === "string" && c.message !== "" ? `: ${c.message}` : ""}`,
          );
  }
  return READY;
}

/** The readiness of a live object; see the module comment. */
export function readinessOf(object: KubeObject): Readiness {
  switch (object.kind) {
    case "Deployment":
      return deployment(object);
    case "StatefulSet":
      return statefulSet(object);
    case "DaemonSet":
      return daemonSet(object);
    case "ReplicaSet":
      return replicas(object, { ready: "readyReplicas" }, "replicaset");
    case "Job":
      return job(object);
    case "Pod":
      return pod(object);
    case "Service":
      return service(object);
    case "PersistentVolumeClaim": {
      const phase = rec(object.status).phase;
      return phase === "Bound"
        ? READY
        : notReady(`claim ${str(phase, "Pending")}`);
    }
    case "CustomResourceDefinition":
      return byCondition(object, "Established", "not established");
    case "APIService":
      return byCondition(object, "Available", "not available");
    default:
      return generic(object);
  }
}
