/**
 * Lists and watches of the local Kubernetes API server: label selectors (`a=b`, `a in (x,y)`,
 * `!a`... through core's parser), `metadata.name`/`metadata.namespace` field selectors, and
 * watches streamed as newline-delimited JSON events over a chunked response. A watch without a
 * `resourceVersion` starts with an ADDED event per existing object, as Kubernetes does; one with a
 * `resourceVersion` replays the changes after it from the store's history.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  matchesSelector,
  parseSelectorString,
  type LabelSelector,
} from "@flotilla/core";
import { isJsonObject, type JsonObject } from "./kube-api-fields.js";
import { KubeApiError } from "./kube-api-error.js";
import type { ResourceType } from "./kube-api-kinds.js";
import type { KubeStore, StoreEvent } from "./kube-api-store.js";

/** Which objects a list or watch selects. */
export interface Selection {
  readonly type: ResourceType;
  /** undefined: every namespace. */
  readonly namespace: string | undefined;
  readonly labels: LabelSelector | undefined;
  readonly fields: ReadonlyMap<string, string>;
}

/** Parses `labelSelector` and `fieldSelector` of a request; BadRequest when malformed. */
export function selection(
  type: ResourceType,
  namespace: string | undefined,
  query: URLSearchParams,
): Selection {
  const labelText = query.get("labelSelector") ?? "";
  let labels: LabelSelector | undefined;
  if (labelText !== "") {
    const parsed = parseSelectorString(labelText, "labelSelector");
    if (!parsed.ok)
      throw new KubeApiError(
        400,
        "BadRequest",
        `unable to parse requirement: ${parsed.problems.map((p) => p.message).join("; ")}`,
      );
    labels = parsed.value;
  }
  const fields = new Map<string, string>();
  for (const term of (query.get("fieldSelector") ?? "")
    .split(",")
    .filter((x) => x !== "")) {
    const [key, value] = term.split("=");
    if (
      (key !== "metadata.name" && key !== "metadata.namespace") ||
      value === undefined
    )
      throw new KubeApiError(
        400,
        "BadRequest",
        `field label not supported: ${JSON.stringify(term)}`,
      );
    fields.set(key, value);
  }
  return { type, namespace, labels, fields };
}

/** True when `object` of type `type` is selected. */
export function selects(
  s: Selection,
  type: ResourceType,
  object: JsonObject,
): boolean {
  if (type.group !== s.type.group || type.plural !== s.type.plural)
    return false;
  const metadata = isJsonObject(object.metadata) ? object.metadata : {};
  if (s.namespace !== undefined && metadata.namespace !== s.namespace)
    return false;
  for (const [key, value] of s.fields)
    if (metadata[key.slice("metadata.".length)] !== value) return false;
  const labels = isJsonObject(metadata.labels)
    ? (metadata.labels as Record<string, string>)
    : {};
  return s.labels === undefined || matchesSelector(s.labels, labels);
}

/** The `<Kind>List` body of a list request. */
export function listBody(store: KubeStore, s: Selection): JsonObject {
  const items = store
    .list(s.type, s.namespace)
    .filter((o) => selects(s, s.type, o))
    .map((o) => {
      // Kubernetes leaves kind and apiVersion out of list items; clients must not rely on them.
      const item = { ...o };
      Reflect.deleteProperty(item, "kind");
      Reflect.deleteProperty(item, "apiVersion");
      return item;
    });
  return {
    kind: `${s.type.kind}List`,
    apiVersion:
      s.type.group === ""
        ? s.type.version
        : `${s.type.group}/${s.type.version}`,
    metadata: { resourceVersion: String(store.version()) },
    items,
  };
}

/**
 * Streams a watch until the client goes away, `timeoutSeconds` pass, or `closeAll` ends it.
 * Returns the function that ends it from the server side.
 */
export function streamWatch(
  store: KubeStore,
  s: Selection,
  query: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
): () => void {
  res.writeHead(200, {
    "content-type": "application/json",
    "transfer-encoding": "chunked",
  });
  // As Kubernetes does: the client's watch is open once headers arrive, before any event.
  res.flushHeaders();
  const send = (event: Pick<StoreEvent, "type" | "object">): void => {
    res.write(
      `${JSON.stringify({ type: event.type, object: event.object })}\n`,
    );
  };
  const from = query.get("resourceVersion");
  if (from === null || from === "" || from === "0") {
    for (const object of store.list(s.type, s.namespace))
      if (selects(s, s.type, object)) send({ type: "ADDED", object });
  } else {
    for (const event of store.history)
      if (
        event.resourceVersion > Number(from) &&
        selects(s, event.resource, event.object)
      )
        send(event);
  }
  const unsubscribe = store.subscribe((event) => {
    if (selects(s, event.resource, event.object)) send(event);
    // Kubernetes reports an object that stops matching the selector as deleted.
    else if (
      event.previous !== undefined &&
      selects(s, event.resource, event.previous)
    )
      send({ type: "DELETED", object: event.object });
  });
  const timeoutSeconds = Number(query.get("timeoutSeconds") ?? "0");
  const timer =
    timeoutSeconds > 0 ? setTimeout(end, timeoutSeconds * 1000) : undefined;
  function end(): void {
    unsubscribe();
    clearTimeout(timer);
    if (!res.writableEnded) res.end();
  }
  req.once("close", end);
  return end;
}
