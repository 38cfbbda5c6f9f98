/**
 * Drift: whether a live object still holds what the agent applied. Only the fields the bundle's
 * manifest sets are compared (the API server adds defaults and controllers add status, which are
 * not drift). Objects compare key by key, lists element by element with the same length (so
 * defaults the server adds inside list elements, such as a container's `imagePullPolicy`, are not
 * drift), scalars by value. A known limit: values the server normalises (resource quantities
 * such as "1000m" → "1") read as drift on a real cluster.
 */
import type { KubeObject } from "./kube-client.js";

/** One field that no longer holds the applied value. */
export interface FieldDrift {
  /** `spec.replicas`, `metadata.labels.app`, `spec.template.spec.containers[0].image`. */
  readonly path: string;
  readonly applied: unknown;
  readonly live: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function compare(
  applied: unknown,
  live: unknown,
  path: string,
  out: FieldDrift[],
): void {
  if (isRecord(applied)) {
    if (!isRecord(live)) {
      out.push({ path, applied, live });
      return;
    }
    for (const [k, v] of Object.entries(applied))
      compare(v, live[k], path === "" ? k : `${path}.${k}`, out);
    return;
  }
  if (Array.isArray(applied)) {
    if (!Array.isArray(live) || live.length !== applied.length) {
      out.push({ path, applied, live });
      return;
    }
    applied.forEach((v, i) => {
      compare(v, live[i], `${path}[${String(i)}]`, out);
    });
    return;
  }
  if (applied !== live) out.push({ path, applied, live });
}

/** The applied fields (outside status and server-set metadata) whose live values differ. */
export function driftOf(applied: KubeObject, live: KubeObject): FieldDrift[] {
  const out: FieldDrift[] = [];
  for (const [key, value] of Object.entries(applied)) {
    if (key === "apiVersion" || key === "kind" || key === "status") continue;
    if (key === "metadata") {
      const metadata = isRecord(value) ? value : {};
      const liveMeta = isRecord(live.metadata) ? live.metadata : {};
      for (const field of ["labels", "annotations"])
        if (metadata[field] !== undefined)
          compare(metadata[field], liveMeta[field], `metadata.${field}`, out);
      continue;
    }
    compare(value, live[key], key, out);
  }
  return out;
}

function show(value: unknown): string {
  const text = value === undefined ? "nothing" : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** `spec.replicas changed from 2 to 5` (the first few fields; the rest counted). */
export function describeDrift(drift: readonly FieldDrift[], max = 3): string {
  const shown = drift
    .slice(0, max)
    .map((d) => `${d.path} changed from ${show(d.applied)} to ${show(d.live)}`);
  const more = drift.length - shown.length;
  return more > 0
    ? `${shown.join("; ")}; and ${String(more)} more`
    : shown.join("; ");
}
