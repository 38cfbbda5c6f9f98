/**
 * A bundle's manifest files → the Kubernetes objects agents apply. Every document must be a
 * Kubernetes object (apiVersion, kind, metadata.name), a list of them, or a `kind: List`; each
 * object is named once per bundle. Problems name the manifest (`bundle.manifests[2]`) and say which
 * file and line, so a person can fix every file in one go.
 */
import type { Problem, Result } from "@flotilla/core";
import {
  MAX_BUNDLE_RESOURCES,
  type KubernetesObject,
} from "@flotilla/protocol";
import { parseDocuments } from "./manifest-documents.js";
import { compact, fail, ok } from "@flotilla/core";

/** A manifest file's bytes, its path in the bundle, and the field path its problems use. */
export interface ManifestFile {
  readonly path: string;
  readonly bytes: Uint8Array;
  readonly field: string;
}

const HELM_MESSAGE =
  "looks like a Helm chart given as plain manifests: send the chart as renderer input files of a Helm bundle (fleet.yaml `helm:`, or a directory with Chart.yaml, which flotilla bundle apply reads as one: docs/bundles.md#helm-bundles)";

// Go-template references only a Helm chart's templates carry.
const HELM_TEMPLATE = /\{\{-?\s*\.(Values|Release|Chart|Capabilities)\b/;

/** The objects of `files` in order, or every problem found in them; `listField` names the list. */
export function parseManifestObjects(
  files: readonly ManifestFile[],
  listField: string,
): Result<KubernetesObject[]> {
  const problems: Problem[] = [];
  const objects: KubernetesObject[] = [];
  const seen = new Map<string, string>();
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  for (const file of files) {
    const at = (line: number, message: string, value?: unknown): void => {
      problems.push({
        path: file.field,
        message: `${JSON.stringify(file.path)} line ${String(line)}: ${message}`,
        ...compact({ value }),
      });
    };
    const base = file.path.split("/").at(-1) ?? "";
    if (base === "Chart.yaml" || base === "Chart.yml") {
      at(1, HELM_MESSAGE);
      continue;
    }
    let text: string;
    try {
      text = utf8.decode(file.bytes);
    } catch {
      at(1, "is not UTF-8 text");
      continue;
    }
    const templated = HELM_TEMPLATE.exec(text);
    if (templated !== null) {
      at(lineOf(text, templated.index), HELM_MESSAGE, templated[0]);
      continue;
    }
    const parsed = parseDocuments(text);
    if (!parsed.ok) {
      for (const { line, column, message } of parsed.problems)
        at(
          line,
          column === undefined
            ? message
            : `column ${String(column)}: ${message}`,
        );
      continue;
    }
    for (const doc of parsed.value) {
      for (const { value, where } of itemsOf(doc.value)) {
        const problem = objectProblem(value);
        if (problem !== undefined) {
          at(doc.line, `${where}${problem}`, value);
          continue;
        }
        const object = value as KubernetesObject;
        const id = identity(object);
        const place = `${JSON.stringify(file.path)} line ${String(doc.line)}`;
        const first = seen.get(id);
        if (first !== undefined) {
          at(
            doc.line,
            `${where}${describe(object)} is already defined at ${first}`,
          );
          continue;
        }
        seen.set(id, place);
        objects.push(object);
      }
    }
  }
  if (objects.length > MAX_BUNDLE_RESOURCES) {
    problems.push({
      path: listField,
      message: `holds ${String(objects.length)} objects, more than the ${String(MAX_BUNDLE_RESOURCES)} a bundle may hold`,
    });
  }
  return problems.length > 0 ? fail(problems) : ok(objects);
}

/** A document's objects: itself, the items of a JSON list, or the items of a `kind: List`. */
function itemsOf(value: unknown): { value: unknown; where: string }[] {
  if (value === null) return [];
  if (Array.isArray(value)) {
    return (value as unknown[]).map((v, i) => ({
      value: v,
      where: `item ${String(i)}: `,
    }));
  }
  if (
    isRecord(value) &&
    value["kind"] === "List" &&
    Array.isArray(value["items"])
  ) {
    return (value["items"] as unknown[]).map((v, i) => ({
      value: v,
      where: `items[${String(i)}]: `,
    }));
  }
  return [{ value, where: "" }];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// What agents require of an object (protocol's BundleContent schema), said in the user's terms.
function objectProblem(value: unknown): string | undefined {
  if (!isRecord(value))
    return "is not a Kubernetes object (a map with apiVersion, kind and metadata)";
  const missing: string[] = [];
  const text = (v: unknown, max: number): boolean =>
    typeof v === "string" && v.length > 0 && v.length <= max;
  if (!text(value["apiVersion"], 253)) missing.push("apiVersion");
  if (!text(value["kind"], 63)) missing.push("kind");
  const metadata = value["metadata"];
  if (!isRecord(metadata) || !text(metadata["name"], 253))
    missing.push("metadata.name");
  else if (
    metadata["namespace"] !== undefined &&
    (typeof metadata["namespace"] !== "string" ||
      metadata["namespace"].length > 63)
  ) {
    return "metadata.namespace must be a string of at most 63 characters";
  }
  if (missing.length === 0) return undefined;
  return `is not a Kubernetes object: ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} missing or not a string`;
}

// Two objects are the same resource when group, kind, namespace and name agree (not the version).
function identity(o: KubernetesObject): string {
  const group = o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : "";
  return JSON.stringify([
    group,
    o.kind,
    o.metadata.namespace ?? "",
    o.metadata.name,
  ]);
}

function describe(o: KubernetesObject): string {
  const ns =
    o.metadata.namespace === undefined ? "" : `${o.metadata.namespace}/`;
  return `${o.kind} ${JSON.stringify(ns + o.metadata.name)}`;
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}
