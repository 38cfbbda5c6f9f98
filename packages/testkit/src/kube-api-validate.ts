/**
 * What the local Kubernetes API server checks on every write before storing anything: the body is
 * an object of the URL's kind and apiVersion, named (and namespaced) as the URL says, with a valid
 * DNS-subdomain name, and ConfigMaps and Secrets stay under Kubernetes' 1 MiB data limit.
 */
import { isJsonObject, type JsonObject } from "./kube-api-fields.js";
import { groupVersion, type ResourceType } from "./kube-api-kinds.js";
import { KubeApiError } from "./kube-api-error.js";

/** Kubernetes' limit on a ConfigMap's or Secret's data (bytes). */
export const MAX_DATA_BYTES = 1024 * 1024;

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const MAX_NAME_LENGTH = 253;

function invalid(
  type: ResourceType,
  name: string,
  detail: string,
): KubeApiError {
  const what = type.group === "" ? type.kind : `${type.kind}.${type.group}`;
  return new KubeApiError(
    422,
    "Invalid",
    `${what} "${name}" is invalid: ${detail}`,
  );
}

function dataBytes(object: JsonObject): number {
  let total = 0;
  for (const field of ["data", "binaryData", "stringData"]) {
    const data = object[field];
    if (!isJsonObject(data)) continue;
    for (const [k, v] of Object.entries(data))
      total +=
        Buffer.byteLength(k) +
        Buffer.byteLength(typeof v === "string" ? v : JSON.stringify(v));
  }
  return total;
}

/**
 * The body as an object when it may be stored under `type`/`namespace`/`name`; otherwise a
 * BadRequest (wrong shape, kind or name) or Invalid (bad name, too much data) error.
 */
export function validateObject(
  type: ResourceType,
  namespace: string,
  name: string,
  body: unknown,
): JsonObject {
  if (!isJsonObject(body))
    throw new KubeApiError(
      400,
      "BadRequest",
      "the request body must be a JSON object",
    );
  const metadata = isJsonObject(body.metadata) ? body.metadata : {};
  if (body.apiVersion !== groupVersion(type) || body.kind !== type.kind)
    throw new KubeApiError(
      400,
      "BadRequest",
      `the body's apiVersion/kind ${JSON.stringify(body.apiVersion)}/${JSON.stringify(body.kind)} does not match the request's ${groupVersion(type)}/${type.kind}`,
    );
  if (metadata.name !== name)
    throw new KubeApiError(
      400,
      "BadRequest",
      `the name of the object (${JSON.stringify(metadata.name)}) does not match the name on the URL (${JSON.stringify(name)})`,
    );
  if (
    type.namespaced &&
    metadata.namespace !== undefined &&
    metadata.namespace !== namespace
  )
    throw new KubeApiError(
      400,
      "BadRequest",
      "the namespace of the provided object does not match the namespace sent on the request",
    );
  if (name.length > MAX_NAME_LENGTH || !NAME.test(name))
    throw invalid(
      type,
      name,
      `metadata.name: Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`,
    );
  if (dataBytes(body) > MAX_DATA_BYTES)
    throw invalid(
      type,
      name,
      `[]: Too long: must have at most ${String(MAX_DATA_BYTES)} bytes`,
    );
  return body;
}
