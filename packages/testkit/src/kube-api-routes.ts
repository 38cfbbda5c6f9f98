/**
 * Request handling of the local Kubernetes API server: discovery, the resource URL forms
 * (`/api/v1/...`, `/apis/GROUP/VERSION/...`, `namespaces/NS/...`, `.../status`), the verb of each
 * request, the RBAC refusals a test asked for, reading bodies (3 MiB limit, JSON only), and the
 * answers as Kubernetes shapes them (objects, lists, watch streams, `Status` on failure).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { KubeApiError } from "./kube-api-error.js";
import {
  isJsonObject,
  mergePatch,
  type JsonObject,
} from "./kube-api-fields.js";
import {
  coreVersions,
  groupList,
  resourceList,
  type ResourceType,
} from "./kube-api-kinds.js";
import type { KubeStore } from "./kube-api-store.js";
import { listBody, selection, streamWatch } from "./kube-api-watch.js";

/** One request the server received, for assertions such as "nothing was sent". */
export interface KubeApiRequest {
  readonly method: string;
  readonly path: string;
  /** The query string without "?" (e.g. `fieldManager=flotilla-agent&force=false&dryRun=All`). */
  readonly query: string;
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, or discovery. */
  readonly verb: string;
}

// Kubernetes' request body limit (3 MiB).
const MAX_BODY_BYTES = 3 * 1024 * 1024;

interface Target {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly status: boolean;
}

function statusBody(error: KubeApiError): JsonObject {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: error.message,
    reason: error.reason,
    code: error.code,
  };
}

function send(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new KubeApiError(
        413,
        "RequestEntityTooLarge",
        `Request entity too large: limit is ${String(MAX_BODY_BYTES)}`,
      );
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Real servers read YAML too; client-node always sends JSON, which is YAML.
    throw new KubeApiError(
      400,
      "BadRequest",
      "the request body is not JSON (this test server reads JSON apply configurations only)",
    );
  }
}

/** What the handler works on; owned by the server. */
export interface HandlerState {
  readonly store: KubeStore;
  /** `verb resource` pairs answered with 403. */
  readonly forbidden: ReadonlySet<string>;
  readonly log: KubeApiRequest[];
  /** Ends of the open watches. */
  readonly watches: Set<() => void>;
  /** What `GET /version` answers as `gitVersion`, e.g. "v1.31.2". */
  readonly gitVersion: string;
}

/** The request handler; a failure is answered with a `Status` (or ends a started stream). */
export function createHandler(
  state: HandlerState,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { store, forbidden, log, watches, gitVersion } = state;
  const target = (path: string[]): Target | undefined => {
    let group: string, version: string | undefined, rest: string[];
    if (path[0] === "api")
      [group, version, rest] = ["", path[1], path.slice(2)];
    else if (path[0] === "apis")
      [group, version, rest] = [path[1] ?? "", path[2], path.slice(3)];
    else return undefined;
    if (version === undefined || rest.length === 0) return undefined;
    let namespace: string | undefined;
    if (rest[0] === "namespaces" && rest.length >= 3 && rest[2] !== "status") {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural = "", name, sub] = rest;
    const type = store.findType(group, version, plural);
    if (
      type === undefined ||
      (sub !== undefined && sub !== "status") ||
      rest.length > 3
    )
      throw new KubeApiError(
        404,
        "NotFound",
        "the server could not find the requested resource",
      );
    if (type.namespaced && name !== undefined && namespace === undefined)
      throw new KubeApiError(
        404,
        "NotFound",
        "the server could not find the requested resource",
      );
    return {
      type,
      namespace: type.namespaced ? namespace : undefined,
      name,
      status: sub === "status",
    };
  };

  const discovery = (path: string[]): unknown => {
    const joined = path.join("/");
    if (joined === "api") return coreVersions();
    if (joined === "version") {
      const [, major = "", minor = ""] =
        /^v?(\d+)\.(\d+)/.exec(gitVersion) ?? [];
      return { major, minor, gitVersion, platform: "linux/amd64" };
    }
    if (joined === "apis") return groupList(store.types());
    if (path[0] === "api" && path.length === 2)
      return resourceList(store.types(), "", path[1] ?? "");
    if (path[0] === "apis" && path.length === 3)
      return resourceList(store.types(), path[1] ?? "", path[2] ?? "");
    return undefined;
  };

  const verbOf = (
    method: string,
    t: Target,
    query: URLSearchParams,
  ): string => {
    if (method === "GET") {
      if (t.name !== undefined) return "get";
      const watch = query.get("watch");
      return watch === "1" || watch === "true" ? "watch" : "list";
    }
    const verbs: Record<string, string> = {
      POST: "create",
      PUT: "update",
      PATCH: "patch",
      DELETE: "delete",
    };
    return verbs[method] ?? method.toLowerCase();
  };

  const checkAllowed = (verb: string, t: Target): void => {
    const resource = t.status ? `${t.type.plural}/status` : t.type.plural;
    const denied = [
      `${verb} ${resource}`,
      `* ${resource}`,
      `${verb} *`,
      "* *",
    ].some((k) => forbidden.has(k));
    if (!denied) return;
    const what = t.type.group === "" ? resource : `${resource}.${t.type.group}`;
    const where =
      t.namespace === undefined
        ? "at the cluster scope"
        : `in the namespace "${t.namespace}"`;
    throw new KubeApiError(
      403,
      "Forbidden",
      `${what}${t.name === undefined ? "" : ` "${t.name}"`} is forbidden: User "system:serviceaccount:flotilla:flotilla-agent" cannot ${verb} resource "${resource}" in API group "${t.type.group}" ${where}`,
    );
  };

  const handle = async (
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const path = url.pathname
      .split("/")
      .filter((x) => x !== "")
      .map(decodeURIComponent);
    const method = req.method ?? "GET";
    const found = discovery(path);
    if (method === "GET" && found !== undefined) {
      log.push({
        method,
        path: url.pathname,
        query: url.search.slice(1),
        verb: "discovery",
      });
      send(res, 200, found);
      return;
    }
    const t = target(path);
    if (t === undefined)
      throw new KubeApiError(
        404,
        "NotFound",
        "the server could not find the requested resource",
      );
    const verb = verbOf(method, t, url.searchParams);
    log.push({ method, path: url.pathname, query: url.search.slice(1), verb });
    checkAllowed(verb, t);
    const ns = t.namespace ?? "";
    const manager = url.searchParams.get("fieldManager") ?? "unknown";
    if (t.name === undefined) {
      if (verb === "create") {
        send(res, 201, store.create(t.type, ns, await readBody(req), manager));
        return;
      }
      const s = selection(t.type, t.namespace, url.searchParams);
      if (verb === "list") {
        send(res, 200, listBody(store, s));
        return;
      }
      if (verb !== "watch")
        throw new KubeApiError(
          405,
          "MethodNotAllowed",
          `${method} is not supported on a collection`,
        );
      const end = streamWatch(store, s, url.searchParams, req, res);
      watches.add(end);
      res.once("close", () => watches.delete(end));
      return;
    }
    const name = t.name;
    switch (verb) {
      case "get": {
        send(res, 200, store.get(t.type, ns, name));
        return;
      }
      case "delete": {
        store.delete(t.type, ns, name);
        send(res, 200, {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Success",
          details: { name, group: t.type.group, kind: t.type.plural },
        });
        return;
      }
      case "update": {
        const body = await readBody(req);
        if (t.status) {
          send(
            res,
            200,
            store.writeStatus(
              t.type,
              ns,
              name,
              isJsonObject(body) ? body.status : undefined,
            ),
          );
          return;
        }
        send(
          res,
          200,
          store.update(t.type, ns, name, () => body, manager),
        );
        return;
      }
      case "patch": {
        send(res, 200, await patch(req, t, ns, name, url.searchParams));
        return;
      }
      default:
        throw new KubeApiError(
          405,
          "MethodNotAllowed",
          `${method} is not supported`,
        );
    }
  };

  const patch = async (
    req: IncomingMessage,
    t: Target,
    ns: string,
    name: string,
    query: URLSearchParams,
  ): Promise<JsonObject> => {
    const contentType =
      (req.headers["content-type"] ?? "").split(";")[0]?.trim() ?? "";
    const body = await readBody(req);
    const manager = query.get("fieldManager");
    const isApply = contentType === "application/apply-patch+yaml";
    const isMerge =
      contentType === "application/merge-patch+json" ||
      contentType === "application/strategic-merge-patch+json";
    if (!isApply && !isMerge)
      throw new KubeApiError(
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format - accepted media types include: application/apply-patch+yaml, application/merge-patch+json`,
      );
    if (isApply && (manager === null || manager === ""))
      throw new KubeApiError(
        400,
        "BadRequest",
        "PatchOptions.meta.k8s.io is invalid: fieldManager: Required value: is required for apply patch",
      );
    if (t.status) {
      const current = store.get(t.type, ns, name);
      const status = isJsonObject(body) ? body.status : undefined;
      return store.writeStatus(
        t.type,
        ns,
        name,
        isApply ? status : mergePatch(current.status, status),
      );
    }
    if (isApply)
      return store.apply(t.type, ns, name, body, {
        manager: manager ?? "",
        force: query.get("force") === "true",
        dryRun: query.get("dryRun") === "All",
      });
    return store.update(
      t.type,
      ns,
      name,
      (o) => mergePatch(o, body),
      manager ?? "unknown",
    );
  };

  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      const e =
        error instanceof KubeApiError
          ? error
          : new KubeApiError(500, "InternalError", String(error));
      if (res.headersSent) res.destroy();
      else send(res, e.code, statusBody(e));
    });
  };
}
