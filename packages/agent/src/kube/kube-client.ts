/**
 * A small JSON client for the Kubernetes API on @kubernetes/client-node: client-node supplies the
 * configuration, authentication, TLS and HTTP transport (`KubeConfig`, `RequestContext`,
 * `IsomorphicFetchHttpLibrary`) and watches (`Watch`); this module sends and receives plain JSON.
 * It deliberately bypasses `KubernetesObjectApi`, whose typed (de)serialisation drops fields its
 * models do not know: the agent must apply exactly the bundle's manifests and compare exactly what
 * the server returns. Discovery (kind → resource and scope) is cached per group version and
 * refreshed on a miss, so kinds of newly established CRDs are found.
 */
import {
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  RequestContext,
  Watch,
  type KubeConfig,
} from "@kubernetes/client-node";
import type { ResourceRef } from "./manifest.js";

/** A Kubernetes object as JSON. */
export type KubeObject = Record<string, unknown>;

/** A refused or failed API call: the HTTP status (0 when the server was not reached) and reason. */
export class KubeCallError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = "KubeCallError";
  }
}

/** A resource type as discovery describes it. */
export interface ApiResource {
  readonly plural: string;
  readonly namespaced: boolean;
}

/** One watch event. */
export interface KubeWatchEvent {
  readonly type: string;
  readonly object: KubeObject;
}

/** Where a watch looks: one type, one namespace ("" for all or cluster-scoped), one label selector. */
export interface WatchTarget {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly labelSelector: string;
}

interface CallOptions {
  readonly signal?: AbortSignal;
}

/** The JSON client; see the module comment. */
export interface KubeClient {
  /** The resource serving `apiVersion`/`kind`, or undefined when the server does not serve it. */
  resource(
    apiVersion: string,
    kind: string,
    options?: CallOptions,
  ): Promise<ApiResource | undefined>;
  /** A discovery document (`/version`, `/api`, `/apis`, `/apis/GROUP/VERSION`) as JSON. */
  discovery(path: string, options?: CallOptions): Promise<KubeObject>;
  /**
   * Server-side apply of `object` (namespace already set when namespaced), as the client's field
   * manager unless `fieldManager` names another.
   */
  apply(
    object: KubeObject,
    options: CallOptions & {
      force: boolean;
      dryRun?: boolean;
      fieldManager?: string;
    },
  ): Promise<KubeObject>;
  /** The object, or undefined when it does not exist. */
  get(ref: ResourceRef, options?: CallOptions): Promise<KubeObject | undefined>;
  /** Objects of a type in `namespace` ("" for all) matching `labelSelector`. */
  list(target: WatchTarget, options?: CallOptions): Promise<KubeObject[]>;
  /** Deletes an object; false when it was already gone. */
  remove(ref: ResourceRef, options?: CallOptions): Promise<boolean>;
  /**
   * Watches a type; `onDone` is called once when the watch ends (error or not). Returns the
   * function that ends it.
   */
  watch(
    target: WatchTarget,
    onEvent: (event: KubeWatchEvent) => void,
    onDone: (error: unknown) => void,
  ): Promise<() => void>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function apiPrefix(apiVersion: string): string {
  return apiVersion.includes("/")
    ? `/apis/${apiVersion}`
    : `/api/${apiVersion}`;
}

/** Creates a client for the current context of `kubeConfig`. */
export function createKubeClient(
  kubeConfig: KubeConfig,
  fieldManager: string,
): KubeClient {
  const http = new IsomorphicFetchHttpLibrary();
  const discovered = new Map<string, Map<string, ApiResource>>();

  const server = (): string => {
    const cluster = kubeConfig.getCurrentCluster();
    if (cluster === null)
      throw new KubeCallError(
        0,
        "NoCluster",
        "the kubeconfig has no current cluster",
      );
    return cluster.server.replace(/\/+$/, "");
  };

  const request = async (
    method: HttpMethod,
    path: string,
    options: CallOptions & {
      query?: Record<string, string>;
      body?: unknown;
      contentType?: string;
    } = {},
  ): Promise<KubeObject> => {
    const ctx = new RequestContext(`${server()}${path}`, method);
    ctx.setHeaderParam("Accept", "application/json");
    for (const [k, v] of Object.entries(options.query ?? {}))
      ctx.setQueryParam(k, v);
    if (options.body !== undefined) {
      ctx.setHeaderParam(
        "Content-Type",
        options.contentType ?? "application/json",
      );
      ctx.setBody(JSON.stringify(options.body));
    }
    if (options.signal) ctx.setSignal(options.signal);
    await kubeConfig.applySecurityAuthentication(ctx);
    let status: number;
    let text: string;
    try {
      const response = await http.send(ctx).toPromise();
      status = response.httpStatusCode;
      text = await response.body.text();
    } catch (error) {
      options.signal?.throwIfAborted();
      throw new KubeCallError(
        0,
        "Unavailable",
        `${method} ${path}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    let body: unknown;
    try {
      body = text === "" ? {} : JSON.parse(text);
    } catch {
      body = { message: text.slice(0, 200) };
    }
    const json = isRecord(body) ? body : {};
    if (status >= 200 && status < 300) return json;
    throw new KubeCallError(
      status,
      typeof json.reason === "string" ? json.reason : `HTTP ${String(status)}`,
      typeof json.message === "string"
        ? json.message
        : `${method} ${path}: HTTP ${String(status)}`,
    );
  };

  const discover = async (
    apiVersion: string,
    options: CallOptions,
  ): Promise<Map<string, ApiResource>> => {
    const found = new Map<string, ApiResource>();
    try {
      const list = await request(
        HttpMethod.GET,
        apiPrefix(apiVersion),
        options,
      );
      const resources = Array.isArray(list.resources) ? list.resources : [];
      for (const r of resources.filter(isRecord)) {
        const name = typeof r.name === "string" ? r.name : "";
        if (name.includes("/") || typeof r.kind !== "string") continue;
        found.set(r.kind, { plural: name, namespaced: r.namespaced === true });
      }
    } catch (error) {
      if (!(error instanceof KubeCallError && error.status === 404))
        throw error;
    }
    discovered.set(apiVersion, found);
    return found;
  };

  const resource: KubeClient["resource"] = async (
    apiVersion,
    kind,
    options = {},
  ) =>
    discovered.get(apiVersion)?.get(kind) ??
    (await discover(apiVersion, options)).get(kind);

  const pathOf = async (
    ref: Pick<ResourceRef, "apiVersion" | "kind" | "namespace"> & {
      name?: string;
    },
    options: CallOptions,
  ): Promise<string> => {
    const r = await resource(ref.apiVersion, ref.kind, options);
    if (r === undefined)
      throw new KubeCallError(
        404,
        "NotFound",
        `the server does not serve kind "${ref.kind}" in "${ref.apiVersion}"`,
      );
    const ns =
      r.namespaced && ref.namespace !== ""
        ? `/namespaces/${encodeURIComponent(ref.namespace)}`
        : "";
    const name =
      ref.name === undefined ? "" : `/${encodeURIComponent(ref.name)}`;
    return `${apiPrefix(ref.apiVersion)}${ns}/${r.plural}${name}`;
  };

  const refOf = (object: KubeObject): ResourceRef => {
    const metadata = isRecord(object.metadata) ? object.metadata : {};
    return {
      apiVersion: String(object.apiVersion),
      kind: String(object.kind),
      namespace:
        typeof metadata.namespace === "string" ? metadata.namespace : "",
      name: String(metadata.name),
    };
  };

  return {
    resource,
    discovery: (path, options = {}) => request(HttpMethod.GET, path, options),
    async apply(object, options) {
      const path = await pathOf(refOf(object), options);
      return request(HttpMethod.PATCH, path, {
        ...options,
        body: object,
        contentType: "application/apply-patch+yaml",
        query: {
          fieldManager: options.fieldManager ?? fieldManager,
          force: String(options.force),
          ...(options.dryRun === true ? { dryRun: "All" } : {}),
        },
      });
    },
    async get(ref, options = {}) {
      try {
        return await request(
          HttpMethod.GET,
          await pathOf(ref, options),
          options,
        );
      } catch (error) {
        if (error instanceof KubeCallError && error.status === 404)
          return undefined;
        throw error;
      }
    },
    async list(target, options = {}) {
      const path = await pathOf(target, options);
      const list = await request(HttpMethod.GET, path, {
        ...options,
        query:
          target.labelSelector === ""
            ? {}
            : { labelSelector: target.labelSelector },
      });
      const items = Array.isArray(list.items)
        ? list.items.filter(isRecord)
        : [];
      // List items carry no kind or apiVersion; put them back.
      return items.map((item) => ({
        ...item,
        apiVersion: target.apiVersion,
        kind: target.kind,
      }));
    },
    async remove(ref, options = {}) {
      try {
        await request(HttpMethod.DELETE, await pathOf(ref, options), {
          ...options,
          query: { propagationPolicy: "Background" },
        });
        return true;
      } catch (error) {
        if (error instanceof KubeCallError && error.status === 404)
          return false;
        throw error;
      }
    },
    async watch(target, onEvent, onDone) {
      const path = await pathOf(target, {});
      const query =
        target.labelSelector === ""
          ? {}
          : { labelSelector: target.labelSelector };
      const controller = await new Watch(kubeConfig).watch(
        path,
        query,
        (type: string, object: unknown) => {
          if (isRecord(object)) onEvent({ type, object });
        },
        onDone,
      );
      return () => {
        controller.abort();
      };
    },
  };
}
